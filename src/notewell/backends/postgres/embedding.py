"""Embedding a PostgreSQL store's queue, safely with several servers embedding one database.

The passages are :func:`notewell.search.passages.passages` of each note's title and body, as on the
embedded store. A server claims a batch of queued notes in a short transaction (``FOR
UPDATE SKIP LOCKED``, then a lease in ``claimed_by`` / ``claimed_until``), so two servers
never embed one note at once and no transaction stays open while the model runs (writers
never wait for it). Each batch's vectors are written in one transaction that holds the
notes' rows (``FOR SHARE``, so an edit waits for that write, not for the model) and writes
a note's vectors only if its revision is still the one embedded: a vector made from an
older text never replaces a newer one. An edit meanwhile queued the note again (a new
ticket); its entry stays and its lease is released, so it is embedded anew. A server
that dies leaves its lease to run out (LEASE seconds); then another takes the notes.

The vectors are float32 bytea rows; when the database has pgvector (:mod:`notewell.backends.postgres.pgvector`)
each is also written to the ``embedding`` column in pgvector's binary form (a trigger
fills it from the bytes for a writer that does not).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import NotewellError
from ...search.embedders import Embedder, numpy
from ...search.passages import passages
from .db import PgDatabase
from .pgvector import vector_param, write_cursor
from .vector_schema import vector_ready

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LEASE", "pg_embed_old_revisions", "pg_embed_pending", "pg_pending_count", "text_sha"]

LEASE = 300  # seconds a claim holds before another server may take the note
_BATCH = 64  # notes claimed, embedded and written together
_INSERT = (
    "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, vector)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_INSERT_PGVECTOR = (
    "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, vector, embedding)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector)"
)
_RELEASE = "UPDATE embed_queue SET claimed_by = NULL, claimed_until = NULL WHERE note_id = ANY(%s) AND claimed_by = %s"


def text_sha(title: str, body: str) -> str:
    """The sha256 of what a note's passages are made from (its title and body, not its header)."""
    return hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()


@dataclass(slots=True)
class _Claimed:
    note_id: str
    ticket: int
    revision: int | None = None  # None: the note is gone
    sha: str = ""
    parts: list[tuple[int, int, str]] = field(default_factory=list)  # empty: nothing to embed


def pg_pending_count(conn: Any, model_id: str) -> int:
    """Notes waiting to be embedded, plus notes with vectors of another model."""
    row = conn.execute(
        # Two ranges (not <>) so that the model index is searched, not every vector read.
        "SELECT (SELECT count(*) FROM embed_queue) + (SELECT count(DISTINCT v.note_id) FROM note_vectors v"
        " WHERE (v.model < %s OR v.model > %s)"
        " AND NOT EXISTS (SELECT 1 FROM embed_queue q WHERE q.note_id = v.note_id))",
        (model_id, model_id),
    ).fetchone()
    return int(row[0])


def pg_embed_pending(
    db: PgDatabase,
    embedder: Embedder,
    *,
    worker: str,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed the queued notes no other server holds (and notes embedded by another model),
    at most *limit*; returns how many queue entries were dealt with. *worker* names this
    embedder in its claims (unique per store object)."""
    numpy()  # without the extra: 'unavailable', naming it, before any claim
    with db.transaction() as conn:
        # Vectors of another model are never mixed with this one's: their notes are queued again.
        conn.execute(
            "INSERT INTO embed_queue(note_id) SELECT DISTINCT note_id FROM note_vectors"
            " WHERE model < %s OR model > %s ON CONFLICT DO NOTHING",
            (embedder.model_id, embedder.model_id),
        )
        (waiting,) = conn.execute(
            "SELECT count(*) FROM embed_queue WHERE claimed_until IS NULL OR claimed_until < now()"
        ).fetchone()
    total = waiting if limit is None else min(waiting, limit)
    done = 0
    while done < total:  # what waited when the call began: writers adding more do not keep it going
        claimed = _claim(db, worker, min(_BATCH, total - done))
        if not claimed:
            break  # taken by other servers meanwhile
        try:
            _read(db, embedder, claimed)
            vectors = _embed(embedder, claimed)
            _write(db, embedder, worker, claimed, vectors)
        except BaseException:
            # Others may try at once; if even this fails, the lease runs out.
            with contextlib.suppress(NotewellError):
                _release(db, worker, [c.note_id for c in claimed])
            raise
        done += len(claimed)
        if progress is not None:
            progress(done, total)
    return done


def pg_embed_old_revisions(db: PgDatabase, embedder: Embedder, limit: int | None) -> int:
    """Embed up to *limit* older revisions waiting for vectors (newest first), from their title
    and body in old_revisions; returns how many. Each is leased while the model runs, so servers
    embedding together share the queue. One whose text the note's current vectors were made
    from takes a copy of them (no model). Vectors of another model are dropped and their
    revisions wait again. With nothing waiting this is two index lookups."""
    np = numpy()
    model, dim = embedder.model_id, embedder.dim
    with db.transaction() as conn:
        if conn.execute("SELECT 1 FROM old_vectors WHERE model < %s OR model > %s LIMIT 1", (model, model)).fetchone():
            conn.execute(
                "INSERT INTO old_embed_queue(note_id, revision) SELECT DISTINCT note_id, revision FROM old_vectors"
                " WHERE model < %s OR model > %s ON CONFLICT DO NOTHING",
                (model, model),
            )
            conn.execute("DELETE FROM old_vectors WHERE model < %s OR model > %s", (model, model))
            conn.execute("SELECT nextval('old_vectors_version')")
    done = 0
    while limit is None or done < limit:
        want = _BATCH if limit is None else min(_BATCH, limit - done)
        with db.transaction() as conn:
            claimed = conn.execute(
                "UPDATE old_embed_queue q SET claimed_until = now() + make_interval(secs => %s)"
                " FROM (SELECT q2.note_id, q2.revision FROM old_embed_queue q2 JOIN old_revisions o"
                " ON o.id = q2.note_id AND o.revision = q2.revision"
                " WHERE q2.claimed_until IS NULL OR q2.claimed_until < now()"
                " ORDER BY o.seq DESC LIMIT %s FOR UPDATE OF q2 SKIP LOCKED) pick"
                " WHERE q.note_id = pick.note_id AND q.revision = pick.revision RETURNING q.note_id, q.revision",
                (LEASE, want),
            ).fetchall()
            if not claimed:
                return done
            texts = conn.execute(
                "SELECT o.id, o.revision, o.title, o.body, o.text_sha,"
                " EXISTS (SELECT 1 FROM note_vectors v WHERE v.note_id = o.id AND v.chunk = 0 AND v.model = %s"
                " AND v.sha256 = o.text_sha) FROM old_revisions o"
                " WHERE (o.id, o.revision) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
                (model, [c[0] for c in claimed], [c[1] for c in claimed]),
            ).fetchall()
        copies = [(nid, rev, sha) for nid, rev, _t, _b, sha, same in texts if same]
        group = [(nid, rev, passages(title, body)) for nid, rev, title, body, _sha, same in texts if not same]
        flat = [text for _n, _r, parts in group for _a, _b, text in parts]
        vectors = embedder.embed_documents(flat) if flat else np.zeros((0, dim), np.float32)
        rows = []
        position = 0
        for nid, rev, parts in group:
            for k, (a, b, _text) in enumerate(parts):
                vector = np.asarray(vectors[position + k], dtype="<f4").tobytes()
                rows.append((nid, rev, k, model, dim, a, b, vector, nid, rev))
            position += len(parts)
        with db.transaction() as conn, conn.cursor() as cur:
            for nid, rev, sha in copies:
                cur.execute(
                    "INSERT INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                    " SELECT v.note_id, %s, v.chunk, v.model, v.dim, v.start, v.stop, v.vector FROM note_vectors v"
                    " WHERE v.note_id = %s AND v.model = %s AND v.sha256 = %s"
                    " AND EXISTS (SELECT 1 FROM old_revisions WHERE id = %s AND revision = %s) ON CONFLICT DO NOTHING",
                    (rev, nid, model, sha, nid, rev),
                )
            # Only revisions still there (a note deleted meanwhile took its revisions with it).
            cur.executemany(
                "INSERT INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                " SELECT %s, %s, %s, %s, %s, %s, %s, %s WHERE EXISTS"
                " (SELECT 1 FROM old_revisions WHERE id = %s AND revision = %s) ON CONFLICT DO NOTHING",
                rows,
            )
            cur.executemany(
                "DELETE FROM old_embed_queue WHERE note_id = %s AND revision = %s", [(c[0], c[1]) for c in claimed]
            )
            cur.execute("SELECT nextval('old_vectors_version')")
        done += len(group)
    return done


def _claim(db: PgDatabase, worker: str, count: int) -> list[_Claimed]:
    """Lease up to *count* unclaimed (or abandoned) queue entries, oldest first."""
    with db.transaction() as conn:
        rows = conn.execute(
            "UPDATE embed_queue q SET claimed_by = %s, claimed_until = now() + make_interval(secs => %s)"
            " FROM (SELECT note_id FROM embed_queue WHERE claimed_until IS NULL OR claimed_until < now()"
            " ORDER BY ticket LIMIT %s FOR UPDATE SKIP LOCKED) pick"
            " WHERE q.note_id = pick.note_id RETURNING q.note_id, q.ticket",
            (worker, LEASE, count),
        ).fetchall()
    return [_Claimed(nid, ticket) for nid, ticket in sorted(rows, key=lambda r: r[1])]


def _read(db: PgDatabase, embedder: Embedder, claimed: list[_Claimed]) -> None:
    """Fill in each claimed note's revision and passages (none when it is gone, or already
    embedded by this model from this very title and body)."""
    ids = [c.note_id for c in claimed]
    with db.transaction() as conn:
        notes = {
            nid: (revision, title, body)
            for nid, revision, title, body in conn.execute(
                "SELECT id, revision, title, body FROM notes WHERE id = ANY(%s)", (ids,)
            )
        }
        have = {
            nid: (sha, model)
            for nid, sha, model in conn.execute(
                "SELECT note_id, sha256, model FROM note_vectors WHERE note_id = ANY(%s) AND chunk = 0", (ids,)
            )
        }
    for c in claimed:
        found = notes.get(c.note_id)
        if found is None:
            continue
        c.revision, title, body = found
        c.sha = text_sha(title, body)
        if have.get(c.note_id) != (c.sha, embedder.model_id):
            c.parts = passages(title, body)


def _embed(embedder: Embedder, claimed: list[_Claimed]) -> np.ndarray:
    np = numpy()
    texts = [text for c in claimed for _a, _b, text in c.parts]
    if not texts:
        return np.zeros((0, embedder.dim), np.float32)
    return embedder.embed_documents(texts)


def _write(db: PgDatabase, embedder: Embedder, worker: str, claimed: list[_Claimed], vectors: np.ndarray) -> None:
    """Each note's vectors in place of its old ones, if its revision is still the one
    embedded; then the queue entries that were read are removed, the rest released."""
    np = numpy()
    ids = [c.note_id for c in claimed]
    written: list[str] = []
    with db.transaction() as conn:
        # In id order: two writers locking overlapping notes take them in the same order.
        current = dict(
            conn.execute("SELECT id, revision FROM notes WHERE id = ANY(%s) ORDER BY id FOR SHARE", (ids,)).fetchall()
        )
        # Looked at in this transaction: a database made ready meanwhile is still filled (by
        # the trigger enable_pgvector makes with the column) if this says no.
        ready = vector_ready(conn)
        rows: list[tuple[Any, ...]] = []
        position = 0
        for c in claimed:
            start, position = position, position + len(c.parts)
            if not c.parts or current.get(c.note_id) != c.revision:
                continue  # nothing to write, or gone or changed while embedding (queued again)
            conn.execute("DELETE FROM note_vectors WHERE note_id = %s", (c.note_id,))
            for k, (a, b, _text) in enumerate(c.parts):
                vector = np.asarray(vectors[start + k], dtype="<f4")
                row = (c.note_id, k, embedder.model_id, embedder.dim, c.sha, c.revision, a, b, vector.tobytes())
                rows.append(row + (vector_param(vector),) if ready else row)
            written.append(c.note_id)
        with write_cursor(conn) if ready else conn.cursor() as cur:
            cur.executemany(_INSERT_PGVECTOR if ready else _INSERT, rows)
            # Only the entry that was read: an edit meanwhile gave the note a new ticket.
            cur.executemany(
                "DELETE FROM embed_queue WHERE note_id = %s AND ticket = %s", [(c.note_id, c.ticket) for c in claimed]
            )
        conn.execute(_RELEASE, (ids, worker))
        if written:
            conn.execute("SELECT notewell_log_vectors(%s)", (written,))  # last: it serialises log writers


def _release(db: PgDatabase, worker: str, ids: list[str]) -> None:
    with db.transaction() as conn:
        conn.execute(_RELEASE, (ids, worker))
