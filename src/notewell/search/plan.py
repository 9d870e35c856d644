"""How a search runs, mode by mode: one plan, over the engines of whichever store it is.

A store supplies its :class:`Engines` (keyword and semantic search over its own tables) and
the plan decides the rest, the same on SQLite and PostgreSQL: which engines a mode asks and
in what order, how many hits each gives, where semantic search takes its feedback from, and
how hybrid fuses the two lists (:mod:`.fusion`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from ..errors import InvalidQueryError
from ..model.note import Card
from .filters import Filters
from .fusion import fuse_hybrid, hybrid_pool
from .passages import feedback_limit
from .request import SearchRequest

__all__ = ["Engines", "run_search"]


class Engines(Protocol):
    """One store's search engines, every call already scoped by *filters*."""

    def keyword(
        self,
        query: str,
        limit: int,
        filters: Filters,
        coverage: dict[str, float] | None = None,
        snippets: dict[str, Callable[[], str]] | None = None,
    ) -> list[Card]:
        """The best *limit* keyword cards; with *coverage*, fill it with each loose-pass hit's
        share of the query's words (:func:`.fusion.coverage`); with *snippets*, the cards come
        without snippets and *snippets* gets what makes each (by id)."""
        ...

    def feedback_ids(self, query: str, limit: int, filters: Filters) -> list[str]:
        """The ids of the best *limit* keyword hits, for feedback (none for a query without words)."""
        ...

    def semantic(self, query: str, limit: int, filters: Filters, feedback: list[str]) -> list[Card]:
        """The best *limit* cards by meaning, the query vector moved towards the *feedback* notes."""
        ...

    def require_model(self) -> None:
        """Make the embedder now (UnavailableError for a store without one)."""
        ...

    def embed_waiting(self) -> None:
        """Embed the notes waiting for it (a search with ``wait``)."""
        ...


def run_search(request: SearchRequest, filters: Filters, engines: Engines) -> list[Card]:
    """The cards *request* asks for, *filters* being its filters scoped to the viewer."""
    query, limit, mode = request.query, request.limit, request.mode
    if mode == "keyword":
        return engines.keyword(query, limit, filters)
    if mode == "hybrid":
        engines.require_model()
        if request.wait:
            engines.embed_waiting()
        pool = hybrid_pool(limit)
        coverage: dict[str, float] = {}
        # Each engine gives a pool; only the fused top gets its keyword snippet made.
        makers: dict[str, Callable[[], str]] = {}
        keyword = engines.keyword(query, pool, filters, coverage, makers)
        semantic = engines.semantic(query, pool, filters, [c.id for c in keyword])
        fused = fuse_hybrid({"keyword": keyword, "semantic": semantic}, coverage, limit)
        return [replace(c, snippet=makers[c.id]()) if c.id in makers else c for c in fused]
    wanted = feedback_limit()
    cards: list[Card] = []
    if mode == "both":
        cards = engines.keyword(query, limit, filters)
        # The keyword list's head is the feedback when it holds enough hits, or all there are.
        if len(cards) >= wanted or len(cards) < limit:
            feedback = [c.id for c in cards[:wanted]]
        else:
            feedback = engines.feedback_ids(query, wanted, filters)
    else:
        try:
            feedback = engines.feedback_ids(query, wanted, filters) if wanted else []
        except InvalidQueryError:
            feedback = []  # a query without words: semantic search goes on without feedback
    engines.require_model()
    if request.wait:
        engines.embed_waiting()
    return cards + engines.semantic(query, limit, filters, feedback)
