"""Semantic search with pgvector, when the database has the extension: the passage vectors
in a ``vector`` column of ``note_vectors`` beside their float32 bytes, one HNSW index per
model, and the nearest passages found by the database instead of each server's matrix.

:func:`enable_pgvector` makes a database ready (idempotent, safe with several servers at
once): the extension, the ``embedding`` column filled from the bytes, a trigger that fills
it for any writer that leaves it empty (an older notewell, or a server that looked before
the column existed), and an HNSW index per (model, dimension) already embedded. The bytes
stay canonical: a server without pgvector, or a database that loses it, still searches
them (:mod:`.pg_semantic`), and ``vector_log`` is still written for such servers.

The column has no dimension (one column serves every model); each index is on an
expression cast to the model's dimension, partial to that model and dimension, so a
query names both as literals (a partial index is used only when the planner can prove
its predicate, which a generic plan with parameters cannot). Vectors are L2-normalised
and the fallback ranks by their dot product, so the index uses inner product
(``vector_ip_ops``; ``<#>`` is the negated dot product): the same scores, and no NaN for
an all-zero vector as cosine distance would give.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING, Any

from ..errors import StorageError
from .embedders import numpy
from .filters import Filters
from .semantic import best_notes

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "PgVectorIndex",
    "enable_pgvector",
    "ensure_hnsw_index",
    "hnsw_index_name",
    "pgvector_available",
    "vector_param",
    "vector_ready",
    "write_cursor",
]

_LOCK = 7362521  # the advisory lock that serialises this module's DDL across servers
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

# Decodes the float32 little-endian bytes of note_vectors.vector (exact: each value is
# rebuilt from its sign, exponent and mantissa in double precision, then cast to real).
_DECODE = """
CREATE OR REPLACE FUNCTION notewell_f32_vector(b bytea) RETURNS real[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT array_agg((CASE WHEN s = 1 THEN -1.0::float8 ELSE 1.0::float8 END)
           * CASE WHEN e = 0 THEN m * 2.0::float8 ^ -149 ELSE (8388608 + m) * 2.0::float8 ^ (e - 150) END
           ORDER BY i)::real[]
    FROM (SELECT i, get_byte(b, 4 * i + 3) >> 7 AS s,
                 ((get_byte(b, 4 * i + 3) & 127) << 1) | (get_byte(b, 4 * i + 2) >> 7) AS e,
                 ((get_byte(b, 4 * i + 2) & 127) << 16) | (get_byte(b, 4 * i + 1) << 8) | get_byte(b, 4 * i) AS m
            FROM generate_series(0, length(b) / 4 - 1) AS i) AS parts
$fn$;
CREATE OR REPLACE FUNCTION notewell_fill_embedding() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.embedding IS NULL THEN
    NEW.embedding := notewell_f32_vector(NEW.vector)::vector;
  END IF;
  RETURN NEW;
END
$fn$;
CREATE OR REPLACE TRIGGER note_vectors_fill_embedding BEFORE INSERT OR UPDATE OF vector ON note_vectors
  FOR EACH ROW EXECUTE FUNCTION notewell_fill_embedding();
"""


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


def pgvector_available(conn: Any) -> bool:
    """True when the server has pgvector to install (``pg_available_extensions``)."""
    return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None


def vector_ready(conn: Any) -> bool:
    """True when this database has pgvector installed and ``note_vectors.embedding``."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')"
        " AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('note_vectors')"
        " AND attname = 'embedding' AND NOT attisdropped)"
    ).fetchone()
    return bool(row[0])


def hnsw_index_name(model: str, dim: int) -> str:
    """The name of the HNSW index of *model*'s vectors of *dim* dimensions."""
    return "note_vectors_hnsw_" + hashlib.sha256(f"{model}\n{dim}".encode()).hexdigest()[:16]


def enable_pgvector(conn: Any) -> bool:
    """Make the database search with pgvector, in *conn*'s transaction: the extension, the
    ``embedding`` column filled from the stored bytes, the trigger filling it for every
    writer, and an HNSW index per model already embedded. Idempotent, and serialised by an
    advisory lock, so several servers may call it at once. False (nothing changed) when the
    server has no pgvector; StorageError when this role may not create the extension."""
    import psycopg

    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
    if not vector_ready(conn):
        if not pgvector_available(conn):
            return False
        try:
            with conn.transaction():  # a savepoint: the refusal below leaves the transaction usable
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege:
            raise StorageError(
                "pgvector is on the server but this role may not create it: a database owner can run"
                " CREATE EXTENSION vector (semantic search meanwhile uses each server's own matrix)"
            ) from None
        try:
            with conn.transaction():
                # No dimension: one column holds every model's vectors (each index casts to its own).
                conn.execute("ALTER TABLE note_vectors ADD COLUMN IF NOT EXISTS embedding vector")
        except psycopg.errors.InsufficientPrivilege:
            raise StorageError(
                "pgvector is installed but this role does not own note_vectors: the database's owner must"
                " enable it (semantic search meanwhile uses each server's own matrix)"
            ) from None
    conn.execute(_DECODE)
    # Vectors written before the column (or its trigger) existed: filled from their bytes.
    conn.execute("UPDATE note_vectors SET embedding = notewell_f32_vector(vector)::vector WHERE embedding IS NULL")
    for model, dim in conn.execute("SELECT DISTINCT model, dim FROM note_vectors").fetchall():
        ensure_hnsw_index(conn, model, dim, locked=True)
    return True


def ensure_hnsw_index(conn: Any, model: str, dim: int, *, locked: bool = False) -> bool:
    """Create the HNSW index of *model*'s *dim*-dimensional vectors unless it exists (under
    the advisory lock, taken here unless *locked*). Returns True when it was created. It
    holds writes to ``note_vectors`` until the transaction ends: built once per model."""
    from psycopg import sql

    name = hnsw_index_name(model, dim)
    if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None:
        return False
    if not locked:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None:
            return False  # another server built it meanwhile
    conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON note_vectors USING hnsw ((embedding::vector({})) vector_ip_ops)"
            " WHERE model = {} AND dim = {}"
        ).format(sql.Identifier(name), sql.Literal(dim), sql.Literal(model), sql.Literal(dim))
    )
    return True


class PgVectorIndex:
    """The database's HNSW indexes as a store's searcher: which indexes it has made sure of."""

    def __init__(self) -> None:
        self.ensured: set[tuple[str, int]] = set()

    def search_sql(self, model: str, dim: int, where: str, *, exact: bool = False) -> Any:
        """The query for the nearest passages of *model* (parameters: the query vector, those
        of *where*, and how many). *exact* gives instead each note's best passage, ranking
        every passage of the notes *where* lets through (for a filter that lets few through)
        without the index; its last parameter is then how many notes."""
        from psycopg import sql

        distance = sql.SQL("(v.embedding::vector({})) <#> %s::vector").format(sql.Literal(dim))
        if exact:
            # From the notes to their vectors (note_vectors_model: model, note_id), each note's
            # best passage, the best notes first: every passage scored, no index.
            return sql.SQL(
                "SELECT * FROM (SELECT DISTINCT ON (v.note_id) v.note_id, v.chunk, v.start, v.stop, {} AS distance"
                " FROM notes n JOIN note_vectors v ON v.note_id = n.id AND v.model = {} AND v.dim = {}"
                " WHERE {} ORDER BY v.note_id, distance, v.chunk) AS best ORDER BY distance, note_id LIMIT %s"
            ).format(distance, sql.Literal(model), sql.Literal(dim), sql.SQL(where or "true"))
        filtered = sql.SQL(" AND EXISTS (SELECT 1 FROM notes n WHERE n.id = v.note_id AND {})").format(sql.SQL(where))
        return sql.SQL(
            "SELECT v.note_id, v.chunk, v.start, v.stop, {} AS distance FROM note_vectors v"
            " WHERE v.model = {} AND v.dim = {}{} ORDER BY distance LIMIT %s"
        ).format(distance, sql.Literal(model), sql.Literal(dim), filtered if where else sql.SQL(""))

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
        where, params = filters.pg_sql("n")
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
                    exact = self.search_sql(model, dim, where, exact=True)
                    return _best(cur.execute(exact, [query, *params, limit]).fetchall(), limit)
            # Iterative scans (pgvector 0.8): a filter that drops many of the nearest passages
            # makes the index search on instead of returning too few. relaxed_order may give
            # them slightly out of order: they are sorted again below.
            cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            while True:
                cur.execute(f"SET LOCAL hnsw.ef_search = {min(_MAX_EF, max(_EF_SEARCH, ask))}")
                rows = cur.execute(self.search_sql(model, dim, where), [query, *params, ask]).fetchall()
                best = _best(rows, limit)
                if len(best) >= limit or len(rows) < ask:
                    break
                ask *= _GROW  # many passages of the same notes: ask for more
            if len(best) < limit and where:
                # The index search gave up (after hnsw.max_scan_tuples) before finding enough
                # that the filter lets through: rank those, exactly.
                exact = self.search_sql(model, dim, where, exact=True)
                best = _best(cur.execute(exact, [query, *params, limit]).fetchall(), limit)
        return best


def _best(rows: list[tuple[Any, ...]], limit: int) -> list[tuple[str, float, tuple[int, int]]]:
    """The first *limit* notes of the passages *rows*, each with its best passage."""
    np = numpy()
    rows = sorted(rows, key=lambda r: (r[4], r[0], r[1]))
    found = best_notes([r[0] for r in rows], np.arange(len(rows)), np.array([-r[4] for r in rows]), limit, None)
    return [(nid, score, (rows[i][2], rows[i][3])) for nid, (score, i) in found.items()]
