"""Semantic search on PostgreSQL: each server holds the passage vectors in one in-memory
float32 matrix, follows the database's vector log to keep it current, and ranks exactly
with numpy, as the embedded store does (:class:`notewell.backends.sqlite.semantic.VectorMatrix`).

A matrix is loaded whole once per model; after that each search reads the log entries
after the last one it applied and replaces only those notes' rows (the old rows zeroed
and skipped, the new ones appended; compacted when a quarter are dead). Several servers
each keep their own matrix current from the same log. No approximate index and no file
beside it: a PostgreSQL store has no folder, and exact search is the measured default.

When the database has pgvector (:mod:`notewell.backends.postgres.pgvector`), the store asks the database instead:
:func:`pg_semantic_search` is given a :class:`notewell.backends.postgres.pgvector.PgVectorIndex` in place of this
matrix, and no matrix is loaded. The nearest passages then come from an HNSW index
(approximate: HNSW recall) with the filters and hidden projects in the query, and turn
into notes, scores and snippets exactly as here. This matrix stays the path on a server
without the extension (Debian 12 offers no postgresql-15-pgvector package).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...model.note import Card
from ...search.embedders import Embedder
from ...search.filters import Filters
from ...search.old_passages import OldPassage, OldPassages
from ...search.passage_matrix import Passage, PassageMatrix
from ...search.passages import (
    above_floor,
    feedback_notes,
    passage_snippet,
    query_vector,
    respan,
    stacked,
    with_feedback,
)
from .db import PgDatabase
from .filters_sql import pg_filter_sql
from .keyword import CARD_SQL, card_from_pg
from .pgvector import PgVectorIndex

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PgVectorMatrix", "pg_older_semantic_search", "pg_semantic_search"]

_LOAD_ROWS = 2000  # rows fetched at a time by a full load
_CARDS = (
    f"SELECT {CARD_SQL}, n.body FROM notes n LEFT JOIN attempts a ON a.id = n.attempt_id"
    " LEFT JOIN projects p ON p.name = a.project WHERE n.id = ANY(%s)"
)


_Read = tuple[Any, tuple[str, int]]  # the connection (in one snapshot), the model and dimension


class PgVectorMatrix(PassageMatrix[_Read]):
    """Every passage vector of one model in one matrix, kept current from ``vector_log``."""

    _vector_type = "<f4"

    def __init__(self) -> None:
        super().__init__()
        self.key: tuple[str, int] | None = None  # the model and dimension loaded
        self._lock = threading.Lock()

    def refresh(self, db: PgDatabase, embedder: Embedder) -> None:
        """Apply what the log says changed since this matrix last looked (or load it whole)."""
        with self._lock, db.transaction() as conn:
            # One snapshot: the log's position and the vectors it describes go together.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            first, last = conn.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
            first, last = first or 0, last or 0
            key = (embedder.model_id, embedder.dim)
            # Another model, or a log that went back (a new database): loaded whole.
            self._follow((conn, key), first, last, other=key != self.key or last < self.seq)
            self.key = key

    def nearest(
        self, wanted: np.ndarray, limit: int, allowed: set[str] | None
    ) -> list[tuple[str, float, tuple[int, int]]]:
        """The *limit* best notes (among *allowed*): (id, best passage's cosine, its span)."""
        with self._lock:
            return self._rank(wanted, limit, allowed)

    def _changed_notes(self, source: _Read, after: int, last: int) -> list[str]:
        sql = "SELECT DISTINCT note_id FROM vector_log WHERE seq > %s AND seq <= %s"
        return [nid for (nid,) in source[0].execute(sql, (after, last))]

    @contextmanager
    def _all_passages(self, source: _Read) -> Iterator[tuple[int, int, Iterable[Passage]]]:
        conn, key = source
        (count,) = conn.execute("SELECT count(*) FROM note_vectors WHERE model = %s AND dim = %s", key).fetchone()
        # A server-side cursor in binary: the vectors arrive as bytes a slice at a time,
        # never all held at once beside the matrix.
        with conn.cursor(name="notewell_vectors", binary=True) as cur:
            cur.itersize = _LOAD_ROWS
            cur.execute(
                "SELECT note_id, start, stop, vector FROM note_vectors WHERE model = %s AND dim = %s"
                " ORDER BY note_id, chunk",
                key,
            )
            yield count, key[1], cur

    def _fresh_passages(self, source: _Read, notes: list[str]) -> list[Passage]:
        conn, key = source
        fresh: list[Passage] = conn.execute(
            "SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id = ANY(%s) AND model = %s"
            " AND dim = %s ORDER BY note_id, chunk",
            (notes, *key),
            binary=True,
        ).fetchall()
        return fresh


def _allowed(conn: Any, filters: Filters) -> set[str] | None:
    """The notes the filters and scope let through (None: every note)."""
    where, params = pg_filter_sql(filters)
    if not where:
        return None
    return {nid for (nid,) in conn.execute(f"SELECT n.id FROM notes n WHERE {where}", params)}


def _openings(conn: Any, embedder: Embedder, ids: list[str]) -> np.ndarray:
    """The opening passages' vectors of the notes *ids* (those embedded by this model)."""
    rows = conn.execute(
        "SELECT vector FROM note_vectors WHERE note_id = ANY(%s) AND chunk = 0 AND model = %s AND dim = %s",
        (ids, embedder.model_id, embedder.dim),
    ).fetchall()
    return stacked([bytes(r[0]) for r in rows], embedder.dim)


def pg_semantic_search(
    db: PgDatabase,
    embedder: Embedder,
    vectors: PgVectorMatrix | PgVectorIndex,
    query: str,
    *,
    limit: int = 10,
    filters: Filters | None = None,
    feedback: Sequence[str] = (),
) -> list[Card]:
    """The *limit* notes whose passages are nearest *query* in meaning, as cards whose
    snippet is the best passage and whose score is its cosine similarity (none below the
    embedder's similarity floor). *vectors* is this server's matrix, or the database's
    pgvector index when it has one. The query vector takes feedback from the opening
    passages of the notes in *feedback* (the best keyword hits, as the embedded store does)."""
    raw = query_vector(embedder, query, limit)
    f = filters or Filters()
    if isinstance(vectors, PgVectorMatrix):
        vectors.refresh(db, embedder)
    with db.transaction() as conn:
        wanted = with_feedback(raw, _openings(conn, embedder, feedback_notes(feedback)))
        if isinstance(vectors, PgVectorIndex):
            best = vectors.nearest(conn, embedder.model_id, wanted, limit, f)
        else:
            best = vectors.nearest(wanted, limit, _allowed(conn, f))
        best = above_floor(best, embedder)
        if best and wanted is not raw:
            found = conn.execute(
                "SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id = ANY(%s) AND model = %s"
                " AND dim = %s",
                ([nid for nid, _s, _p in best], embedder.model_id, embedder.dim),
            ).fetchall()
            best = respan(best, raw, [(r[0], r[1], r[2], bytes(r[3])) for r in found])
        if not best:
            return []
        rows = {r[0]: r for r in conn.execute(_CARDS, ([nid for nid, _score, _span in best],))}
    cards = []
    for nid, score, (start, stop) in best:
        row = rows.get(nid)
        if row is None:
            continue  # deleted since the matrix was read
        snippet = passage_snippet(row[15], start, stop)
        cards.append(replace(card_from_pg(row[:15], snippet, round(score, 6)), mode="semantic"))
    return cards


def pg_older_semantic_search(
    db: PgDatabase,
    embedder: Embedder,
    matrix: OldPassages,
    query: str,
    *,
    limit: int,
    filters: Filters,
    exclude: set[str],
    feedback: Sequence[str] = (),
) -> list[Card]:
    """The *limit* notes (none in *exclude*) nearest *query* in an older revision's passages
    (old_vectors, in this server's :class:`~...search.old_passages.OldPassages`; none under the
    embedder's floor), as scoreless cards of the note as it is now with that revision's passage
    and number (``matched_revision``), as on SQLite."""
    raw = query_vector(embedder, query, limit)
    model = (embedder.model_id, embedder.dim)
    with db.transaction() as conn:
        wanted = with_feedback(raw, _openings(conn, embedder, feedback_notes(feedback)))
        (version,) = conn.execute("SELECT last_value FROM old_vectors_version").fetchone()

        def load() -> Iterator[OldPassage]:
            for nid, revision, start, stop, blob in conn.execute(
                "SELECT note_id, revision, start, stop, vector FROM old_vectors WHERE model = %s AND dim = %s", model
            ):
                yield nid, revision, start, stop, bytes(blob)

        hits = matrix.best(
            embedder, (*model, version), load, wanted, limit=limit, allowed=_allowed(conn, filters), exclude=exclude
        )
        if not hits:
            return []
        rows = {r[0]: r for r in conn.execute(_CARDS, ([nid for nid, _r, _s, _p in hits],))}
        bodies = {
            (nid, revision): body
            for nid, revision, body in conn.execute(
                "SELECT id, revision, body FROM old_revisions WHERE (id, revision) IN"
                " (SELECT * FROM unnest(%s::text[], %s::int[]))",
                ([h[0] for h in hits], [h[1] for h in hits]),
            )
        }
    cards = []
    for nid, revision, _score, (start, stop) in hits:
        row = rows.get(nid)
        if row is None:
            continue  # deleted meanwhile
        snippet = passage_snippet(bodies.get((nid, revision), ""), start, stop)
        # Scoreless: below every current match, whatever its cosine (as on SQLite).
        cards.append(replace(card_from_pg(row[:15], snippet, None), mode="semantic", matched_revision=revision))
    return cards[:limit]
