"""Semantic search for :class:`~.backend.PostgresBackend`: its embedder, the embedding queue and
the background thread, and the semantic, both and hybrid search modes, which behave as the
embedded store's (the same passages, cards, filters and fusion).

Several servers may embed one database at once: each store object claims queued notes
under a name of its own (:mod:`notewell.backends.postgres.embedding`). Searches go to the database's
pgvector HNSW index when it has the extension (:mod:`notewell.backends.postgres.pgvector`); otherwise each
store keeps its own in-memory matrix current from the database's vector log
(:mod:`notewell.backends.postgres.semantic`). The path is chosen once per store, at its first semantic
search. A database is made ready for pgvector when a store creates it (empty, so at once)
or by ``notewell db upgrade`` (:func:`notewell.backends.postgres.vector_schema.enable_pgvector`: idempotent,
under an advisory lock, so servers doing it together do it once).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import InvalidQueryError
from ...model.note import Card
from ...model.progress import Progress
from ...search.embedder_slot import EmbedderSlot, EmbedderSpec
from ...search.embedders import Embedder
from ...search.filters import Filters
from ...search.fusion import coverage
from ...search.old_passages import OldPassages
from ...search.query import compile_query
from ..backend import EmbeddingStep
from .db import PgDatabase
from .embedding import pg_embed_old_revisions, pg_embed_pending, pg_pending_count
from .keyword import pg_keyword_search, pg_older_keyword_search
from .pgvector import PgVectorIndex
from .rank import TermRarity
from .semantic import PgVectorMatrix, pg_older_semantic_search, pg_semantic_search
from .vector_schema import vector_ready

__all__ = ["PgMeaning"]

_EMBED_STEP = 64  # notes the background thread embeds between looks at the queue


class PgMeaning:
    """Embedding and search by meaning for one PostgreSQL backend (its embedder, its queue
    claims, its vector path), and its search engines."""

    def __init__(self, db: PgDatabase, embedder: EmbedderSpec, rarity: TermRarity) -> None:
        self._db = db
        self._rarity = rarity  # the backend's, shared with keyword search
        self.embedders = EmbedderSlot(embedder)
        self.vectors = PgVectorMatrix()  # loaded only if the database has no pgvector
        self.old_vectors = OldPassages()  # older revisions' passages (search.old_passages)
        self.vector_index: PgVectorIndex | None = None
        self.vector_path_chosen = False
        self._vector_path_lock = threading.Lock()
        # This store's name in its claims on the queue: unique per store object, so two
        # stores in one process embed side by side like two servers.
        self._worker = f"{os.getpid()}-{secrets.token_hex(6)}"

    def _embedder_now(self) -> Embedder:
        return self.embedders.get()

    def embed_some(self, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        # Only the notes no other server holds: each claims what it embeds under its own name.
        return pg_embed_pending(self._db, embedder, worker=self._worker, limit=limit, progress=progress)

    def embed_older(self, embedder: Embedder, limit: int | None) -> int:
        return pg_embed_old_revisions(self._db, embedder, limit)

    def pending_count(self, model_id: str) -> int:
        with self._db.transaction() as conn:
            return pg_pending_count(conn, model_id)

    @contextlib.contextmanager
    def embedding_steps(self, embedder: Embedder) -> Iterator[EmbeddingStep]:
        def step(should_stop: Callable[[], bool]) -> int:
            # Asked between calls of the model: a stop waits for one call, and the claim in hand
            # is released (its notes stay queued, for this server or another).
            done = pg_embed_pending(self._db, embedder, worker=self._worker, limit=_EMBED_STEP, should_stop=should_stop)
            if done >= _EMBED_STEP or should_stop():
                return done
            return done + pg_embed_old_revisions(self._db, embedder, _EMBED_STEP - done)

        yield step

    def searcher(self) -> PgVectorMatrix | PgVectorIndex:
        """What semantic search asks: the database's pgvector index when the database is ready
        for it, else this store's matrix. Chosen at the first search, kept for the store's life."""
        with self._vector_path_lock:
            if not self.vector_path_chosen:
                # Never made ready here: on a large database filling the column and building
                # the index holds note_vectors for minutes (notewell db upgrade does it).
                with self._db.transaction() as conn:
                    ready = vector_ready(conn)
                self.vector_index = PgVectorIndex() if ready else None
                self.vector_path_chosen = True
            return self.vector_index if self.vector_index is not None else self.vectors

    def engines(self) -> _PgEngines:
        """This store's search engines, for :func:`~notewell.search.plan.run_search`."""
        return _PgEngines(self)


class _PgEngines:
    """PostgreSQL's keyword and semantic search, each call on a connection of its own."""

    def __init__(self, store: PgMeaning) -> None:
        self._store = store

    def keyword(
        self,
        query: str,
        limit: int,
        filters: Filters,
        coverage: dict[str, float] | None = None,
        snippets: dict[str, Callable[[], str]] | None = None,
    ) -> list[Card]:
        store = self._store
        loose: set[str] | None = set() if coverage is not None else None
        with store._db.transaction() as conn:
            cards = pg_keyword_search(
                conn, query, limit=limit, filters=filters, partial=loose, rarity=store._rarity, snippets=snippets
            )
            if coverage is not None and loose:
                coverage.update(_coverages(conn, query, loose))
        return cards

    def feedback_ids(self, query: str, limit: int, filters: Filters) -> list[str]:
        try:
            return [c.id for c in self.keyword(query, limit, filters, snippets={})]  # ids only: no snippets
        except InvalidQueryError:
            return []  # a query without words has no hits to give (the Protocol's word, SQLite's answer)

    def semantic(self, query: str, limit: int, filters: Filters, feedback: list[str]) -> list[Card]:
        store = self._store
        return pg_semantic_search(
            store._db, store._embedder_now(), store.searcher(), query, limit=limit, filters=filters, feedback=feedback
        )

    def older_keyword(self, query: str, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
        store = self._store
        with store._db.transaction() as conn:
            return pg_older_keyword_search(
                conn, query, limit=limit, filters=filters, exclude=exclude, rarity=store._rarity
            )

    def older_semantic(
        self, query: str, limit: int, filters: Filters, exclude: set[str], feedback: list[str]
    ) -> list[Card]:
        store = self._store
        return pg_older_semantic_search(
            store._db,
            store._embedder_now(),
            store.old_vectors,
            query,
            limit=limit,
            filters=filters,
            exclude=exclude,
            feedback=feedback,
        )

    def require_model(self) -> None:
        self._store._embedder_now()

    def embed_waiting(self) -> None:
        store = self._store
        pg_embed_pending(store._db, store._embedder_now(), worker=store._worker)  # older revisions: the background's


def _coverages(conn: Any, query: str, loose: set[str]) -> dict[str, float]:
    """Each loose-pass hit's share of the query's words (:func:`notewell.search.fusion.coverage`)."""
    if not loose:
        return {}
    cq = compile_query(query)
    rows = conn.execute("SELECT id, title, body FROM notes WHERE id = ANY(%s)", (list(loose),)).fetchall()
    return {nid: coverage(cq, title, body) for nid, title, body in rows}
