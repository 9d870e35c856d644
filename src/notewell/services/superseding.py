"""Superseded notes: which later notes correct a note, as a viewer may see them, and the
ranking rule that puts a corrected note right after its correction.

A note is superseded when a later note (created after it; ties by id) that the viewer may see
names it in its header's ``supersedes``. A successor the viewer may not see changes nothing:
it marks, moves and reveals nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.records import Snapshot
from ..model.note import Card

__all__ = ["mark_superseded", "successors_first", "visible_successors"]


def visible_successors(records: Snapshot, note_ids: Sequence[str], hidden: tuple[str, ...]) -> dict[str, list[str]]:
    """For each of *note_ids* superseded by a note outside the *hidden* projects, those notes
    (most recently updated first); the rest are left out."""
    if not note_ids:
        return {}
    found = records.superseded_by(note_ids)
    if hidden and found:
        secret = records.notes_in(hidden, sorted({s for later in found.values() for s in later}))
        if secret:
            found = {t: kept for t, later in found.items() if (kept := [s for s in later if s not in secret])}
    return found


def mark_superseded(records: Snapshot, cards: list[Card], hidden: tuple[str, ...]) -> list[Card]:
    """*cards* with ``superseded_by`` filled in (the cards themselves, changed)."""
    found = visible_successors(records, [c.id for c in cards], hidden)
    for card in cards:
        card.superseded_by = list(found.get(card.id, ()))
    return cards


def successors_first(cards: list[Card]) -> list[Card]:
    """*cards* (marked) with each superseded card moved right after the last of its successors
    that the list holds; everything else keeps its order. A card none of whose successors is in
    the list stays where it is (its correction was not found: it is still the best answer)."""
    if not any(c.superseded_by for c in cards):
        return cards
    present = {c.id for c in cards}
    waits = {id(c): {s for s in c.superseded_by if s in present and s != c.id} for c in cards}
    out: list[Card] = []
    placed: set[str] = set()
    pending: list[Card] = []

    def place(card: Card) -> None:
        out.append(card)
        placed.add(card.id)
        # Whatever waited for this card (and, in turn, for those) comes right after it.
        ready = [p for p in pending if waits[id(p)] <= placed]
        while ready:
            for p in ready:
                pending.remove(p)
                out.append(p)
                placed.add(p.id)
            ready = [p for p in pending if waits[id(p)] <= placed]

    for card in cards:
        if waits[id(card)] <= placed:
            place(card)
        else:
            pending.append(card)
    return out + pending  # none left: a successor is always later, so nothing waits in a ring
