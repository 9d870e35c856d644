"""How a search runs, mode by mode: one plan, over the engines of whichever store it is.

A store supplies its :class:`Engines` (keyword and semantic search over its own tables) and
the plan decides the rest, the same on SQLite and PostgreSQL: which engines a mode asks and
in what order, how many hits each gives, where semantic search takes its feedback from, and
how hybrid fuses the two lists (:mod:`.fusion`), and that older revisions fill only the
places the current texts left: a note found by a superseded text alone comes after every note
its current text found, in every mode, on a card naming the revision (``matched_revision``).
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

    def older_keyword(self, query: str, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
        """The best *limit* keyword cards (none in *exclude*) from the notes' older revisions."""
        ...

    def older_semantic(
        self, query: str, limit: int, filters: Filters, exclude: set[str], feedback: list[str]
    ) -> list[Card]:
        """The best *limit* cards by meaning (none in *exclude*) from the notes' older revisions."""
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
        current = engines.keyword(query, limit, filters)
        return current + _older_keyword(engines, query, limit - len(current), filters, current)
    if mode == "hybrid":
        engines.require_model()
        if request.wait:
            engines.embed_waiting()
        pool = hybrid_pool(limit)
        coverage: dict[str, float] = {}
        # Each engine gives a pool; only the fused top gets its keyword snippet made.
        makers: dict[str, Callable[[], str]] = {}
        keyword = engines.keyword(query, pool, filters, coverage, makers)
        feedback = [c.id for c in keyword]
        semantic = engines.semantic(query, pool, filters, feedback)
        fused = fuse_hybrid({"keyword": keyword, "semantic": semantic}, coverage, limit)
        fused = [replace(c, snippet=makers[c.id]()) if c.id in makers else c for c in fused]
        if len(fused) >= limit:
            return fused
        # Older revisions, for the places left: their keyword hits, then their semantic ones.
        found = keyword + semantic
        older = _older_keyword(engines, query, limit - len(fused), filters, found)
        older += _older_semantic(engines, query, limit - len(fused) - len(older), filters, found + older, feedback)
        return fused + [replace(c, mode="hybrid") for c in older]
    wanted = feedback_limit()
    cards: list[Card] = []
    if mode == "both":
        cards = engines.keyword(query, limit, filters)
        # The keyword list's head is the feedback when it holds enough hits, or all there are.
        if len(cards) >= wanted or len(cards) < limit:
            feedback = [c.id for c in cards[:wanted]]
        else:
            feedback = engines.feedback_ids(query, wanted, filters)
        cards += _older_keyword(engines, query, limit - len(cards), filters, cards)
    else:
        try:
            feedback = engines.feedback_ids(query, wanted, filters) if wanted else []
        except InvalidQueryError:
            feedback = []  # a query without words: semantic search goes on without feedback
    engines.require_model()
    if request.wait:
        engines.embed_waiting()
    semantic = engines.semantic(query, limit, filters, feedback)
    return cards + semantic + _older_semantic(engines, query, limit - len(semantic), filters, semantic, feedback)


def _older_keyword(engines: Engines, query: str, room: int, filters: Filters, found: list[Card]) -> list[Card]:
    """Up to *room* keyword cards from older revisions of notes not *found* already."""
    if room <= 0:
        return []
    try:
        return engines.older_keyword(query, room, filters, {c.id for c in found})
    except InvalidQueryError:
        return []  # a query the current pass read and older texts cannot (never an error of its own)


def _older_semantic(
    engines: Engines, query: str, room: int, filters: Filters, found: list[Card], feedback: list[str]
) -> list[Card]:
    """Up to *room* cards by meaning from older revisions of notes not *found* already."""
    if room <= 0:
        return []
    return engines.older_semantic(query, room, filters, {c.id for c in found}, feedback)
