"""The database's side of pgvector (schema, not search): whether a database is ready, making
it ready, and the HNSW index of each model. :mod:`notewell.backends.postgres.pgvector` searches it.

:func:`enable_pgvector` makes a database ready (idempotent, safe with several servers at
once): the extension (0.8 or later: its iterative index scans keep a filtered search from
running short), the ``embedding`` column filled from the stored float32 bytes, a trigger
that fills it for any writer that leaves it empty (an older notewell, or a server that
looked before the column existed), and an HNSW index per (model, dimension) already
embedded. The bytes stay canonical: a server without pgvector still searches them.

The column has no dimension (one column serves every model); each index is on an
expression cast to the model's dimension, partial to that model and dimension. Vectors
are L2-normalised and ranked by their dot product, so the index uses inner product
(``vector_ip_ops``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ...errors import StorageError

__all__ = ["enable_pgvector", "ensure_hnsw_index", "hnsw_index_name", "pgvector_available", "vector_ready"]

_LOCK = 7362521  # the advisory lock that serialises this module's DDL across servers
_MIN_VERSION = (0, 8)  # iterative index scans, without which a filter can starve the results
_HNSW_MAX_DIM = 2000  # pgvector's limit for an HNSW index on vector: larger models are ranked exactly

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
  IF NEW.embedding IS NULL OR (TG_OP = 'UPDATE' AND NEW.vector IS DISTINCT FROM OLD.vector) THEN
    NEW.embedding := notewell_f32_vector(NEW.vector)::vector;
  END IF;
  RETURN NEW;
END
$fn$;
CREATE OR REPLACE TRIGGER note_vectors_fill_embedding BEFORE INSERT OR UPDATE OF vector ON note_vectors
  FOR EACH ROW EXECUTE FUNCTION notewell_fill_embedding();
"""


def _recent_enough(version: str | None) -> bool:
    """Whether a pgvector version has iterative index scans (0.8), which filtered search needs."""
    try:
        return version is not None and tuple(int(x) for x in version.split(".")[:2]) >= _MIN_VERSION
    except ValueError:
        return False


def pgvector_available(conn: Any) -> bool:
    """True when the server has pgvector 0.8 or later to install (``pg_available_extensions``)."""
    row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    return row is not None and _recent_enough(row[0])


def vector_ready(conn: Any) -> bool:
    """True when this database has pgvector 0.8 or later installed and ``note_vectors.embedding``."""
    row = conn.execute(
        "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
        " EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('note_vectors')"
        " AND attname = 'embedding' AND NOT attisdropped)"
    ).fetchone()
    return _recent_enough(row[0]) and bool(row[1])


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
        (installed,) = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if not _recent_enough(installed):
            raise StorageError(
                f"this database has pgvector {installed}; notewell needs 0.8 or later (ALTER EXTENSION vector"
                " UPDATE): semantic search meanwhile uses each server's own matrix"
            )
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

    if dim > _HNSW_MAX_DIM:
        return False  # pgvector cannot index it: its passages are ranked without an index
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
