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
    that the list holds (a chain reads newest first); everything else keeps its order. A card
    none of whose successors is in the list stays where it is (its correction was not found:
    it is still the best answer there is). Linear in the cards and their links."""
    if not any(c.superseded_by for c in cards):
        return cards
    present = {c.id for c in cards}
    need = [len({s for s in c.superseded_by if s in present and s != c.id}) for c in cards]
    waiting: dict[str, list[int]] = {}  # a successor's id -> the places of the cards it holds back
    for at, card in enumerate(cards):
        for s in {s for s in card.superseded_by if s in present and s != card.id}:
            waiting.setdefault(s, []).append(at)
    out: list[Card] = []
    placed: set[str] = set()
    held = [False] * len(cards)
    done = [False] * len(cards)

    def place(first: int) -> None:
        stack = [first]
        while stack:
            at = stack.pop()
            out.append(cards[at])
            done[at] = True
            if cards[at].id in placed:
                continue
            placed.add(cards[at].id)
            freed = []
            for other in waiting.get(cards[at].id, ()):
                need[other] -= 1
                if need[other] == 0 and held[other]:
                    freed.append(other)
            stack.extend(sorted(freed, reverse=True))  # right after it, in their own order

    for at in range(len(cards)):
        if done[at]:
            continue
        if need[at] == 0:
            place(at)
        else:
            held[at] = True
    # Nothing is left: a successor is always a later note, so no two cards wait for each other.
    return out + [c for at, c in enumerate(cards) if not done[at]]
