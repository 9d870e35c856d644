"""Semantic search with pgvector, when the database is ready for it
(:mod:`notewell.backends.postgres.vector_schema`): the nearest passages found by the database's
HNSW index instead of each server's matrix, then ranked into notes as everywhere else.

A query names the model's dimension as a literal (the index is on the column cast to it)
and binds the model, unprepared, so the plan sees it and can use the model's partial
index. ``<#>`` is the negated dot product of the L2-normalised vectors: the same scores
as the fallback matrix.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from ...search.embedders import numpy
from ...search.filters import Filters
from ...search.passage_matrix import best_notes
from .filters_sql import pg_filter_sql
from .vector_schema import ensure_hnsw_index

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PgVectorIndex", "vector_param", "write_cursor"]

# HNSW candidates kept per search, at least (pgvector's default is 40). Measured with the
# hash embedder (384 dimensions; pgvector's default index, m=16, ef_construction=64):
# recall@10 against the exact matrix on 2,000 notes 0.63 at 100, 0.80 at 200, 0.97 at 400
# (p50 6.7, 8.5, 10.5 ms); on 10,000 notes 0.69 at 400, 0.86 at 1000 (p50 20, 30 ms). Hash
# vectors are close to random ones, the hardest case for HNSW: see benchmarks/bench_pgvector.py.
_EF_SEARCH = 400
_MAX_EF = 1000  # pgvector's ceiling for hnsw.ef_search
_ASK = 40  # passages asked for first (more when they hold too few notes)
_GROW = 4  # how much the passages asked for grow when they hold too few notes
_EXACT_NOTES = 2000  # a filter letting at most this many notes through is ranked exactly, without the index


class _Vector:
    """A vector sent to pgvector in its binary form (no text formatting of each float)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values


def vector_param(values: np.ndarray) -> Any:
    """*values* as a query parameter for ``%s::vector`` (on a cursor from :func:`write_cursor`
    or :class:`PgVectorIndex`)."""
    return _Vector(values)


def _register(cursor: Any) -> Any:
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class VectorDumper(Dumper):
        # pgvector's binary input: the dimension and a reserved zero (uint16 each), then
        # big-endian float32s. No oid: the ::vector cast in the query tells the server.
        format = Format.BINARY

        def dump(self, obj: _Vector) -> bytes:
            data = numpy().asarray(obj.values, dtype=">f4")
            return struct.pack(">HH", data.shape[0], 0) + data.tobytes()

    cursor.adapters.register_dumper(_Vector, VectorDumper)
    return cursor


def write_cursor(conn: Any) -> Any:
    """A cursor of *conn* that can send :func:`vector_param` values."""
    return _register(conn.cursor())


class PgVectorIndex:
    """The database's HNSW indexes as a store's searcher: which indexes it has made sure of."""

    def __init__(self) -> None:
        self.ensured: set[tuple[str, int]] = set()

    def search_sql(self, dim: int, where: str, *, exact: bool = False) -> Any:
        """The query for the nearest passages of a model of *dim* dimensions (parameters: the
        query vector, the model, those of *where*, and how many). *exact* gives instead each
        note's best passage, ranking every passage of the notes *where* lets through (for a
        filter that lets few through) without the index; its last parameter is then how many
        notes. Run it unprepared: the plan must see the model to use its partial index."""
        from psycopg import sql

        distance = sql.SQL("(v.embedding::vector({})) <#> %s::vector").format(sql.Literal(dim))
        if exact:
            # From the notes to their vectors (note_vectors_model: model, note_id), each note's
            # best passage, the best notes first: every passage scored, no index.
            return sql.SQL(
                "SELECT * FROM (SELECT DISTINCT ON (v.note_id) v.note_id, v.chunk, v.start, v.stop, {} AS distance"
                " FROM notes n JOIN note_vectors v ON v.note_id = n.id AND v.model = %s AND v.dim = {}"
                " WHERE {} ORDER BY v.note_id, distance, v.chunk) AS best ORDER BY distance, note_id LIMIT %s"
            ).format(distance, sql.Literal(dim), sql.SQL(where or "true"))
        filtered = sql.SQL(" AND EXISTS (SELECT 1 FROM notes n WHERE n.id = v.note_id AND {})").format(sql.SQL(where))
        return sql.SQL(
            "SELECT v.note_id, v.chunk, v.start, v.stop, {} AS distance FROM note_vectors v"
            " WHERE v.model = %s AND v.dim = {}{} ORDER BY distance LIMIT %s"
        ).format(distance, sql.Literal(dim), filtered if where else sql.SQL(""))

    def nearest(
        self, conn: Any, model: str, wanted: np.ndarray, limit: int, filters: Filters
    ) -> list[tuple[str, float, tuple[int, int]]]:
        """The *limit* best notes the filters let through: (id, best passage's dot product,
        its span), best first; in *conn*'s transaction."""
        np = numpy()
        dim = int(wanted.shape[0])
        if (model, dim) not in self.ensured:
            import psycopg

            try:
                with conn.transaction():  # a savepoint: a refusal leaves the search's transaction usable
                    ensure_hnsw_index(conn, model, dim)
            except psycopg.errors.InsufficientPrivilege:
                pass  # not the table's owner: searched without the index until an owner builds it
            self.ensured.add((model, dim))
        where, params = pg_filter_sql(filters, "n")
        query = vector_param(np.asarray(wanted, dtype=np.float32))
        ask = max(_ASK, 4 * limit)
        with _register(conn.cursor()) as cur:
            if where:
                # A filter that lets few notes through: their passages ranked exactly cost less
                # than an index search that must pass over every passage it rejects.
                (few,) = cur.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM notes n WHERE {where} LIMIT {_EXACT_NOTES + 1}) AS f",
                    params,
                ).fetchone()
                if few <= _EXACT_NOTES:
                    exact = self.search_sql(dim, where, exact=True)
                    return _best(cur.execute(exact, [query, model, *params, limit], prepare=False).fetchall(), limit)
            # Iterative scans (pgvector 0.8): a filter that drops many of the nearest passages
            # makes the index search on instead of returning too few. relaxed_order may give
            # them slightly out of order: they are sorted again below.
            cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            while True:
                cur.execute(f"SET LOCAL hnsw.ef_search = {min(_MAX_EF, max(_EF_SEARCH, ask))}")
                rows = cur.execute(self.search_sql(dim, where), [query, model, *params, ask], prepare=False).fetchall()
                best = _best(rows, limit)
                if len(best) >= limit or len(rows) < ask:
                    break
                ask *= _GROW  # many passages of the same notes: ask for more
            if len(best) < limit and where:
                # The index search gave up (after hnsw.max_scan_tuples) before finding enough
                # that the filter lets through: rank those, exactly.
                exact = self.search_sql(dim, where, exact=True)
                best = _best(cur.execute(exact, [query, model, *params, limit], prepare=False).fetchall(), limit)
        return best


def _best(rows: list[tuple[Any, ...]], limit: int) -> list[tuple[str, float, tuple[int, int]]]:
    """The first *limit* notes of the passages *rows*, each with its best passage."""
    np = numpy()
    rows = sorted(rows, key=lambda r: (r[4], r[0], r[1]))
    found = best_notes([r[0] for r in rows], np.arange(len(rows)), np.array([-r[4] for r in rows]), limit, None)
    return [(nid, score, (rows[i][2], rows[i][3])) for nid, (score, i) in found.items()]
