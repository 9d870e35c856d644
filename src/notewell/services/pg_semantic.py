"""Semantic search for :class:`~.pg_store.PgStore`: its embedder, the embedding queue and
the background thread, and the semantic, both and hybrid search modes, which behave as the
embedded store's (the same passages, cards, filters and fusion).

Several servers may embed one database at once: each store object claims queued notes
under a name of its own (:mod:`..search.pg_embedding`). Searches go to the database's
pgvector HNSW index when it has the extension (:mod:`..search.pg_vector`); otherwise each
store keeps its own in-memory matrix current from the database's vector log
(:mod:`..search.pg_semantic`). The path is chosen once per store, at its first semantic
search. A database is made ready for pgvector when a store creates it (empty, so at once)
or by ``notewell db upgrade`` (:func:`..search.pg_vector.enable_pgvector`: idempotent,
under an advisory lock, so servers doing it together do it once).
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from typing import Any

from ..errors import InvalidArgumentError, InvalidQueryError, NotewellError, UnavailableError
from ..model.note import Card
from ..search.embedders import Embedder, numpy
from ..search.filters import Filters
from ..search.fusion import coverage, fuse_hybrid, hybrid_pool
from ..search.pg_embedding import pg_embed_pending, pg_pending_count
from ..search.pg_rank import TermRarity
from ..search.pg_search import pg_keyword_search
from ..search.pg_semantic import PgVectorMatrix, pg_semantic_search
from ..search.pg_vector import PgVectorIndex
from ..search.query import compile_query
from ..search.semantic import feedback_limit
from ..storage.pg import PgDatabase
from ..storage.pg_vector_schema import vector_ready
from ..storage.sync import Progress
from .background import BackgroundEmbedding

__all__ = ["EmbedderSpec", "PgSemanticMixin", "check_embedder_spec"]

EmbedderSpec = Embedder | Callable[[], Embedder] | str | None
_EMBED_STEP = 64  # notes the background thread embeds between looks at the queue


def check_embedder_spec(spec: object) -> None:
    """InvalidArgumentError unless *spec* is what ``embedder=`` takes."""
    if spec is None or (isinstance(spec, str) and spec == "default"):
        return
    if isinstance(spec, str) or not (hasattr(spec, "model_id") and hasattr(spec, "embed_query") or callable(spec)):
        raise InvalidArgumentError(
            "embedder must be 'default', None, an object with model_id, dim and embed_*, or a function making one"
        )


class PgSemanticMixin(BackgroundEmbedding):
    """Embedding and search by meaning, for :class:`~.pg_store.PgStore`."""

    _db: PgDatabase
    _rarity: TermRarity  # the store's, shared with keyword search

    def _init_semantic(self, embedder: EmbedderSpec) -> None:
        self._embedder_spec = embedder
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        self._vectors = PgVectorMatrix()  # loaded only if the database has no pgvector
        self._vector_index: PgVectorIndex | None = None
        self._vector_path_chosen = False
        self._vector_path_lock = threading.Lock()
        # This store's name in its claims on the queue: unique per store object, so two
        # stores in one process embed side by side like two servers.
        self._worker = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._embedding: threading.Thread | None = None
        self._embedding_stop = threading.Event()

    def embed_pending(self, *, limit: int | None = None, progress: Progress | None = None) -> dict[str, Any]:
        """Embed the notes waiting for it (new, changed, or embedded by another model) that no
        other server is embedding. Returns how many were embedded and how many still wait."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidArgumentError(f"limit must be a positive whole number, got {limit!r}")
        embedder = self._embedder_now()
        done = pg_embed_pending(self._db, embedder, worker=self._worker, limit=limit, progress=progress)
        with self._db.transaction() as conn:
            return {"embedded": done, "pending": pg_pending_count(conn, embedder.model_id)}

    def pending_embeddings(self) -> int:
        """How many notes semantic search does not know yet (or knows from another model)."""
        embedder = self._embedder_now()
        with self._db.transaction() as conn:
            return pg_pending_count(conn, embedder.model_id)

    def start_embedding(self, *, idle: float = 2.0) -> bool:
        """Embed queued notes on a background thread (for servers), so that reads and writes
        never wait for the model. Returns False when one runs already."""
        if self._embedding is not None and self._embedding.is_alive():
            return False
        embedder = self._embedder_now()  # fails here, not on the thread, without a model
        numpy()

        def work(stop: threading.Event) -> None:
            while not stop.is_set():
                try:
                    done = pg_embed_pending(self._db, embedder, worker=self._worker, limit=_EMBED_STEP)
                except NotewellError:
                    done = 0  # the database busy or unreachable: try again after a pause
                if not done:
                    stop.wait(idle)

        return self._launch_embedding(work, "notewell-pg-embed")

    def _embedder_now(self) -> Embedder:
        """The store's embedder, made on first use (the model loads only when needed, once)."""
        with self._embedder_lock:
            if self._embedder is None:
                spec = self._embedder_spec
                if spec is None:
                    raise UnavailableError("this store was opened without an embedder (embedder=None)")
                if isinstance(spec, str):
                    from ..search.embedders import default_embedder

                    self._embedder = default_embedder()
                elif not hasattr(spec, "embed_query"):
                    self._embedder = spec()  # a factory
                else:
                    self._embedder = spec
            return self._embedder

    def _searcher(self) -> PgVectorMatrix | PgVectorIndex:
        """What semantic search asks: the database's pgvector index when the database is ready
        for it, else this store's matrix. Chosen at the first search, kept for the store's life."""
        with self._vector_path_lock:
            if not self._vector_path_chosen:
                # Never made ready here: on a large database filling the column and building
                # the index holds note_vectors for minutes (notewell db upgrade does it).
                with self._db.transaction() as conn:
                    ready = vector_ready(conn)
                self._vector_index = PgVectorIndex() if ready else None
                self._vector_path_chosen = True
            return self._vector_index if self._vector_index is not None else self._vectors

    def _search_by_meaning(self, query: str, mode: str, limit: int, f: Filters, wait: bool) -> list[Card]:
        """The semantic, both (keyword list, then semantic list) or hybrid search, with *f*
        already scoped to what the viewer may see."""
        if mode == "hybrid":
            pool = hybrid_pool(limit)
            embedder = self._embedder_now()
            if wait:
                pg_embed_pending(self._db, embedder, worker=self._worker)
            loose: set[str] = set()
            with self._db.transaction() as conn:
                keyword = pg_keyword_search(conn, query, limit=pool, filters=f, partial=loose, rarity=self._rarity)
                partial = _coverages(conn, query, loose)
            semantic = pg_semantic_search(
                self._db, embedder, self._searcher(), query, limit=pool, filters=f, feedback=[c.id for c in keyword]
            )
            return fuse_hybrid({"keyword": keyword, "semantic": semantic}, partial, limit)
        cards: list[Card] = []
        # Semantic mode needs only the few hits that give the query vector its feedback.
        wanted = limit if mode == "both" else feedback_limit()
        try:
            keyword = []
            if wanted:
                with self._db.transaction() as conn:
                    keyword = pg_keyword_search(conn, query, limit=wanted, filters=f, rarity=self._rarity)
        except InvalidQueryError:
            if mode == "both":
                raise
            keyword = []  # a query without words: semantic search goes on without feedback
        if mode == "both":
            cards += keyword
        embedder = self._embedder_now()
        if wait:
            pg_embed_pending(self._db, embedder, worker=self._worker)
        cards += pg_semantic_search(
            self._db, embedder, self._searcher(), query, limit=limit, filters=f, feedback=[c.id for c in keyword]
        )
        return cards


def _coverages(conn: Any, query: str, loose: set[str]) -> dict[str, float]:
    """Each loose-pass hit's share of the query's words (:func:`fusion.coverage`)."""
    if not loose:
        return {}
    cq = compile_query(query)
    rows = conn.execute("SELECT id, title, body FROM notes WHERE id = ANY(%s)", (list(loose),)).fetchall()
    return {nid: coverage(cq, title, body) for nid, title, body in rows}
