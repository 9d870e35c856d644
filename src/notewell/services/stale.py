"""``stale``: the open blockers and actions nobody has touched for a while, newest first.

Open as :mod:`notewell.model.open_work` says, and no later note is about it: none that the viewer
may see builds on it or supersedes it (a digest citing it does not count: it only gathers).
A note that names the blocker's id only in its text does not count either: that is a word in
a body, not a link, and the two links are what every other part of the store reads.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import replace

from ..backends.records import Snapshot
from ..model.note import Card
from ..model.open_work import settled_by_itself
from ..search.filters import Filters
from .paging import Bound, newest_first
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
    for page in _pages(records, filters):
        for card in mark_superseded(records, page, hidden):
            if not settled_by_itself(card) and not _built_on(records, card.id, hidden):
                out.append(card)
                if len(out) >= limit:
                    return out
    return out


def _pages(records: Snapshot, filters: Filters) -> Iterator[list[Card]]:
    """The cards under *filters*, newest updated first, SCAN_MAX at most, a page at a time. Each
    kind is read on its own and the kinds merged here: asked for both at once, the store sorted
    every candidate for each page (its index orders one kind's notes by time, not two kinds'),
    and 20,000 settled candidates took 1.5 s of CPU, 10 times 5,000's."""
    kinds: list[str] = [filters.kind] if isinstance(filters.kind, str) else list(filters.kind or [])
    streams = [_cards(records, replace(filters, kind=kind)) for kind in kinds] if kinds else [_cards(records, filters)]
    merged = heapq.merge(*streams, key=lambda card: card.updated_at, reverse=True)
    page: list[Card] = []
    for card in itertools.islice(merged, SCAN_MAX):
        page.append(card)
        if len(page) == _PAGE:
            yield page
            page = []
    if page:
        yield page


def _cards(records: Snapshot, filters: Filters) -> Iterator[Card]:
    """The cards under *filters*, newest updated first (see :mod:`.paging`)."""

    def fetch(bound: Bound, offset: int) -> list[Card]:
        return records.cards(limit=_PAGE, offset=offset, filters=replace(filters, updated_before=bound))

    return newest_first(fetch, _PAGE, filters.updated_before)


def _built_on(records: Snapshot, note_id: str, hidden: tuple[str, ...]) -> bool:
    """Whether a note other than a digest, one the viewer may see, builds on *note_id*."""
    for later in records.built_on_by(note_id):
        end = records.linked_note(later)
        if end is not None and end.kind != "digest" and later != note_id and end.project not in hidden:
            return True
    return False
