"""Semantic search on PostgreSQL: each server holds the passage vectors in one in-memory
float32 matrix, follows the database's vector log to keep it current, and ranks exactly
with numpy, as the embedded store does (:class:`.semantic.VectorMatrix`).

A matrix is loaded whole once per model; after that each search reads the log entries
after the last one it applied and replaces only those notes' rows (the old rows zeroed
and skipped, the new ones appended; compacted when a quarter are dead). Several servers
each keep their own matrix current from the same log. No approximate index and no file
beside it: a PostgreSQL store has no folder, and exact search is the measured default.

When the database has pgvector (:mod:`.pg_vector`), the store asks the database instead:
:func:`pg_semantic_search` is given a :class:`.pg_vector.PgVectorIndex` in place of this
matrix, and no matrix is loaded. The nearest passages then come from an HNSW index
(approximate: HNSW recall) with the filters and hidden projects in the query, and turn
into notes, scores and snippets exactly as here. This matrix stays the path on a server
without the extension (Debian 12 offers no postgresql-15-pgvector package).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..model.note import Card
from ..storage.pg import PgDatabase
from .embedders import Embedder, numpy
from .filters import Filters
from .pg_search import CARD_SQL, card_from_pg
from .pg_vector import PgVectorIndex
from .semantic import (
    COMPACT_MIN,
    RELOAD_MIN,
    above_floor,
    best_notes,
    feedback_notes,
    passage_snippet,
    query_vector,
    respan,
    rows_by_note,
    stacked,
    with_feedback,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PgVectorMatrix", "pg_semantic_search"]

_LOAD_ROWS = 2000  # rows fetched at a time by a full load
_CARDS = (
    f"SELECT {CARD_SQL}, n.body FROM notes n LEFT JOIN attempts a ON a.id = n.attempt_id"
    " LEFT JOIN projects p ON p.name = a.project WHERE n.id = ANY(%s)"
)


class PgVectorMatrix:
    """Every passage vector of one model in one matrix, kept current from ``vector_log``."""

    def __init__(self) -> None:
        self.seq = 0  # the last vector_log entry applied
        self.key: tuple[str, int] | None = None  # the model and dimension loaded
        self.notes: list[str | None] = []  # None: a dead row
        self.spans: list[tuple[int, int]] = []
        self.full_loads = 0
        self._data: np.ndarray | None = None
        self._rows: dict[str, list[int]] = {}
        self._dead = 0
        self._lock = threading.Lock()

    @property
    def live(self) -> int:
        return len(self.notes) - self._dead

    def refresh(self, db: PgDatabase, embedder: Embedder) -> None:
        """Apply what the log says changed since this matrix last looked (or load it whole)."""
        with self._lock, db.transaction() as conn:
            # One snapshot: the log's position and the vectors it describes go together.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            first, last = conn.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
            first, last = first or 0, last or 0
            key = (embedder.model_id, embedder.dim)
            if key != self.key or last < self.seq:  # another model, or a log that went back (a new database)
                self._load(conn, key, last)
            elif first > self.seq + 1:
                self._load(conn, key, last)  # the log was trimmed past this matrix
            elif last > self.seq:
                changed = [
                    nid
                    for (nid,) in conn.execute(
                        "SELECT DISTINCT note_id FROM vector_log WHERE seq > %s AND seq <= %s", (self.seq, last)
                    )
                ]
                if len(changed) > max(RELOAD_MIN, self.live // 4):
                    self._load(conn, key, last)
                else:
                    self._apply(conn, key, changed)
                    self.seq = last

    def nearest(
        self, wanted: np.ndarray, limit: int, allowed: set[str] | None
    ) -> list[tuple[str, float, tuple[int, int]]]:
        """The *limit* best notes (among *allowed*): (id, best passage's cosine, its span)."""
        np = numpy()
        with self._lock:
            if self._data is None or not self.live:
                return []
            matrix = self._data[: len(self.notes)]
            scores = matrix @ wanted
            want = max(256, 32 * limit)
            # The best few hundred passages usually hold the best notes.
            pool = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(len(scores))
            ranked = pool[np.argsort(-scores[pool])]
            best = best_notes(self.notes, ranked, scores[ranked], limit, allowed)
            if len(best) < limit and len(pool) < len(scores):
                # Filters (or many passages per note) left too few: rank every passage.
                order = np.argsort(-scores)
                best = best_notes(self.notes, order, scores[order], limit, allowed)
            return [(nid, score, self.spans[i]) for nid, (score, i) in best.items()]

    def _load(self, conn: Any, key: tuple[str, int], last: int) -> None:
        np = numpy()
        self.full_loads += 1
        (count,) = conn.execute("SELECT count(*) FROM note_vectors WHERE model = %s AND dim = %s", key).fetchone()
        data = np.empty((count, key[1]), dtype=np.float32)
        notes: list[str | None] = []
        spans: list[tuple[int, int]] = []
        # A server-side cursor in binary: the vectors arrive as bytes a slice at a time,
        # never all held at once beside the matrix.
        with conn.cursor(name="notewell_vectors", binary=True) as cur:
            cur.itersize = _LOAD_ROWS
            cur.execute(
                "SELECT note_id, start, stop, vector FROM note_vectors WHERE model = %s AND dim = %s"
                " ORDER BY note_id, chunk",
                key,
            )
            for i, (nid, start, stop, blob) in enumerate(cur):
                data[i] = np.frombuffer(blob, dtype="<f4")
                notes.append(nid)
                spans.append((start, stop))
        self.key, self.seq = key, last
        self.notes, self.spans, self._data = notes, spans, data
        self._index_rows()

    def _index_rows(self) -> None:
        self._rows, self._dead = rows_by_note(self.notes)

    def _apply(self, conn: Any, key: tuple[str, int], changed: list[str]) -> None:
        """Replace the rows of the *changed* notes with what the table holds now."""
        np = numpy()
        fresh = conn.execute(
            "SELECT note_id, start, stop, vector FROM note_vectors WHERE note_id = ANY(%s) AND model = %s"
            " AND dim = %s ORDER BY note_id, chunk",
            (changed, *key),
            binary=True,
        ).fetchall()
        data = self._writable(len(fresh), key[1])
        for nid in changed:
            for i in self._rows.pop(nid, ()):
                data[i] = 0.0  # a dead row scores 0 and is skipped
                self.notes[i] = None
                self._dead += 1
        for nid, start, stop, blob in fresh:
            i = len(self.notes)
            data[i] = np.frombuffer(blob, dtype="<f4")
            self.notes.append(nid)
            self.spans.append((start, stop))
            self._rows.setdefault(nid, []).append(i)
        if self._dead > max(COMPACT_MIN, len(self.notes) // 4):
            self._compact()

    def _writable(self, extra: int, dim: int) -> np.ndarray:
        """The data array with room for *extra* more rows."""
        np = numpy()
        used = len(self.notes)
        data = self._data
        if data is None or used + extra > len(data):
            # Room for more without keeping much spare: memory stays near the vectors' own size.
            grown = np.empty((used + extra + max(64, min(used // 16, 8192)), dim), dtype=np.float32)
            if used and data is not None:
                grown[:used] = data[:used]
            self._data = data = grown
        return data

    def _compact(self) -> None:
        np = numpy()
        assert self._data is not None
        keep = [i for i, nid in enumerate(self.notes) if nid is not None]
        self._data = np.ascontiguousarray(self._data[keep])
        self.notes = [self.notes[i] for i in keep]
        self.spans = [self.spans[i] for i in keep]
        self._index_rows()


def _allowed(conn: Any, filters: Filters) -> set[str] | None:
    """The notes the filters and scope let through (None: every note)."""
    where, params = filters.pg_sql()
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
