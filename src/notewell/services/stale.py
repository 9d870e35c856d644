"""``stale``: the open blockers and actions nobody has touched for a while, newest first.

Open as :mod:`notewell.model.open_work` says, and no later note is about it: none that the viewer
may see builds on it or supersedes it (a digest citing it does not count: it only gathers).
A note that names the blocker's id only in its text does not count either: that is a word in
a body, not a link, and the two links are what every other part of the store reads.
"""

from __future__ import annotations

from ..backends.records import Snapshot
from ..model.note import Card
from ..model.open_work import settled_by_itself
from ..search.filters import Filters
from .superseding import mark_superseded

__all__ = ["SCAN_MAX", "stale_cards"]

# Candidates looked at, at most (newest first): a store with 100,000 old blockers answers with the
# newest stale ones instead of reading them all.
SCAN_MAX = 20_000
_PAGE = 500


def stale_cards(records: Snapshot, filters: Filters, hidden: tuple[str, ...], limit: int) -> list[Card]:
    """Up to *limit* cards under *filters* (the open kinds, not updated since the cut-off,
    scoped to the viewer) that are still open and that no later note the viewer may see is about."""
    out: list[Card] = []
    for offset in range(0, SCAN_MAX, _PAGE):
        page = records.cards(limit=_PAGE, offset=offset, filters=filters)
        for card in mark_superseded(records, page, hidden):
            if not settled_by_itself(card) and not _built_on(records, card.id, hidden):
                out.append(card)
                if len(out) >= limit:
                    return out
        if len(page) < _PAGE:
            break
    return out


def _built_on(records: Snapshot, note_id: str, hidden: tuple[str, ...]) -> bool:
    """Whether a note other than a digest, one the viewer may see, builds on *note_id*."""
    for later in records.built_on_by(note_id):
        end = records.linked_note(later)
        if end is not None and end.kind != "digest" and later != note_id and end.project not in hidden:
            return True
    return False
