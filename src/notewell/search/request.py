"""A search request, checked once: its mode, its limit and its filters.

Both stores take a search through :meth:`SearchRequest.make`, so a bad mode, limit or filter
is the same error everywhere. The bounds for any caller and the tighter ones for a caller
over the network (the servers) live here too, so there is one place that says how many cards
and how deep a page a caller may ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgumentError
from ..model.numbers import whole_number
from .filters import MAX_OFFSET, Filters, check_offset

__all__ = [
    "MAX_LIMIT",
    "MAX_OFFSET",
    "MAX_REMOTE_LIMIT",
    "MAX_REMOTE_OFFSET",
    "RANK_WINDOW",
    "SEARCH_MODES",
    "SearchRequest",
    "TITLE_WINDOW",
    "check_limit",
    "check_offset",
]

SEARCH_MODES = ("keyword", "semantic", "both", "hybrid")
# Any caller: a page of cards a store builds in well under a second.
MAX_LIMIT = 1000
# A caller over the network (HTTP, MCP over HTTP, stdio MCP alike): a page an agent reads, and a
# depth whose skipping costs little; the store's own offset bound is what a database can hold.
MAX_REMOTE_LIMIT = 100
MAX_REMOTE_OFFSET = 1_000_000
# A query matching many notes ranks the RANK_WINDOW most recently written matches that pass
# the filters, together with the newest TITLE_WINDOW notes whose titles match (both stores).
RANK_WINDOW = 400
TITLE_WINDOW = 200


def check_limit(limit: object, high: int = MAX_LIMIT) -> int:
    """*limit* if it is a whole number of cards from 1 to *high*."""
    return whole_number("limit", limit, 1, high)


@dataclass(frozen=True)
class SearchRequest:
    """What a search asks, checked: the query text is checked by the engine that reads it."""

    query: str
    mode: str
    limit: int
    wait: bool
    filters: Filters

    @classmethod
    def make(cls, query: str, *, mode: str, limit: int, wait: bool, filters: dict[str, Any]) -> SearchRequest:
        """The request, or InvalidArgumentError naming what is wrong with it."""
        if mode not in SEARCH_MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")
        return cls(query, mode, check_limit(limit), bool(wait), Filters.from_kwargs(filters))

    def lists_recent(self, scoped: Filters) -> bool:
        """Whether it asks for a project's or an attempt's recent notes (no words, a narrow
        scope) rather than a search; the broader scopes ask for a query."""
        return isinstance(self.query, str) and not self.query.strip() and bool(scoped.project or scoped.attempt_id)
