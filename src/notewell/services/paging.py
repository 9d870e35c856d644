"""Every card of a listing, newest updated first, at the same cost per page from the first to
the last: each page is asked for below the last one's oldest time (its ties read again and
skipped); by offset the store would walk past every card before it, again for each page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

from ..model.note import Card
from ..model.timestamps import just_after

__all__ = ["Bound", "Fetch", "newest_first"]

# An upper time: a listing's own (as its filters take it) or the last page's oldest.
Bound = str | datetime | None
# fetch(bound, offset): up to *page* cards updated before *bound* (None: no bound), from *offset*.
Fetch = Callable[[Bound, int], list[Card]]


def newest_first(fetch: Fetch, page: int, bound: Bound = None) -> Iterator[Card]:
    """The cards *fetch* lists, each once; *bound*: the listing's own upper time, if any."""
    seen: set[str] = set()
    offset = 0
    while True:
        cards = fetch(bound, offset)
        fresh = [card for card in cards if card.id not in seen]
        seen.update(card.id for card in fresh)
        yield from fresh
        if len(cards) < page:
            return
        after = just_after(cards[-1].updated_at)
        if offset or not fresh or after is None or after == bound:
            offset += page  # a page's worth updated in one microsecond: on by offset from here
        else:
            bound = after
