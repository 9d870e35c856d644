"""Embedding a PostgreSQL store's queue, safely with several servers embedding one database.

The passages are :func:`notewell.search.passages.passages` of each note's title and body, as on the
embedded store. A server claims queued notes in a short transaction (``FOR UPDATE SKIP
LOCKED``, then a lease in ``claimed_by`` / ``claimed_until``), so two servers never embed one
note at once and no transaction stays open while the model runs (writers never wait for it).

Every passage of a note is embedded, so a claim is bounded by passages, not only by notes: it
holds at most _BATCH notes and _BATCH_PASSAGES passages (fewer notes when they are long; one
longer note is a claim of its own). The model is called _BATCH_PASSAGES passages at a time;
between two calls the claim's lease is renewed and the caller asked whether to stop (the
claim is then released, its notes still queued). So a lease need outlast one call of the
model, never the whole of a long note, and a stop waits for one call.

Each vector is stored with its key (:func:`~notewell.search.passages.passage_key`: the model,
its dimension and the passage text): a passage whose key the note holds a vector of already
(its current vectors, or an older revision's: :mod:`.old_vectors`) keeps that vector, so a
conversation that grew at its end embeds only its new passages.

Each claim's vectors are written in one transaction that holds the notes' rows (``FOR
SHARE``, so an edit waits for that write, not for the model) and writes a note's vectors
only if its revision is still the one embedded: a vector made from an older text never
replaces a newer one. An edit meanwhile queued the note again (a new ticket); its entry
stays and its lease is released, so it is embedded anew. A server that dies leaves its
lease to run out (LEASE seconds); then another takes the notes.

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
from ...search.passages import OPENING, OVERLAP, PASSAGE, passage_key, passages
from .db import PgDatabase
from .old_vectors import UPSERT, current_keys, held_vectors, keep_superseded, upsert_rows
from .pgvector import vector_param, write_cursor
from .vector_schema import vector_ready

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LEASE", "pg_embed_old_revisions", "pg_embed_pending", "pg_pending_count", "text_sha"]

LEASE = 300  # seconds a claim holds before another server may take the note (renewed between model calls)
_BATCH = 64  # notes claimed, embedded and written together, at most...
_BATCH_PASSAGES = 256  # ...and passages: a claim stops short of more (the model is called this many at a time)
_INSERT = (
    "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, key, vector)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_INSERT_PGVECTOR = (
    "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, revision, start, stop, key, vector, embedding)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector)"
)
_RELEASE = "UPDATE embed_queue SET claimed_by = NULL, claimed_until = NULL WHERE note_id = ANY(%s) AND claimed_by = %s"
_RENEW = (
    "UPDATE embed_queue SET claimed_until = now() + make_interval(secs => %s)"
    " WHERE note_id = ANY(%s) AND claimed_by = %s"
)


def text_sha(title: str, body: str) -> str:
    """The sha256 of what a note's passages are made from (its title and body, not its header)."""
    return hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()


def _guess_passages(size: int) -> int:
    """About how many passages a title and body of *size* bytes make, before they are read:
    one per PASSAGE - OVERLAP characters after the opening (a long paragraph's windows; packed
    short ones make fewer). Bytes, which are at least the characters, so rarely too few."""
    return 1 + max(0, size - OPENING + PASSAGE - OVERLAP - 1) // (PASSAGE - OVERLAP)


def _fitting(sizes: list[int]) -> int:
    """How many of the entries of these sizes (in bytes, in the order claimed) one claim takes:
    as many as stay within _BATCH_PASSAGES guessed passages, and the first whatever its size."""
    guessed = 0
    for at, size in enumerate(sizes):
        guessed += _guess_passages(size)
        if at and guessed > _BATCH_PASSAGES:
            return at
    return len(sizes)


@dataclass(slots=True)
class _Claimed:
    note_id: str
    ticket: int
    revision: int | None = None  # None: the note is gone
    sha: str = ""
    parts: list[tuple[int, int, str]] = field(default_factory=list)  # empty: nothing to embed
    held: list[bytes | None] = field(default_factory=list)  # each part's vector kept, or None: the model's

    def fresh(self) -> list[str]:
        """The texts of the passages the model must embed (those without a vector kept)."""
        return [text for (_a, _b, text), kept in zip(self.parts, self.held, strict=True) if kept is None]


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
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Embed the queued notes no other server holds (and notes embedded by another model),
    at most *limit*; returns how many queue entries were dealt with. *worker* names this
    embedder in its claims (unique per store object). *should_stop* is asked before each
    claim and between two calls of the model; a True releases the claim in hand unwritten,
    its notes queued still."""
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
        if should_stop is not None and should_stop():
            break
        claimed = _claim(db, worker, min(_BATCH, total - done))
        if not claimed:
            break  # taken by other servers meanwhile
        try:
            _read(db, embedder, claimed)
            claimed = _within_budget(db, worker, claimed)
            vectors = _embed(db, embedder, worker, claimed, should_stop)
            if vectors is None:
                _release(db, worker, [c.note_id for c in claimed])  # stopped: queued still, for anyone
                break
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
    """Give up to *limit* older revisions waiting for vectors (newest first) theirs, from their
    title and body in old_revisions; returns how many needed the model. Each is leased while the
    model runs, so servers embedding together share the queue. A passage the note holds a vector
    of already (current or older) keeps it (:mod:`.old_vectors`). Vectors of another model are
    dropped and their notes' revisions wait again. A claim holds no more than about
    _BATCH_PASSAGES passages, as the queue's claims do. With nothing waiting this is two index
    lookups."""
    model = embedder.model_id
    with db.transaction() as conn:
        if conn.execute("SELECT 1 FROM old_vectors WHERE model < %s OR model > %s LIMIT 1", (model, model)).fetchone():
            # Every revision of those notes: a revision's passages may be stored under a newer one's number.
            conn.execute(
                "INSERT INTO old_embed_queue(note_id, revision) SELECT id, revision FROM old_revisions WHERE id IN"
                " (SELECT note_id FROM old_vectors WHERE model < %s OR model > %s) ON CONFLICT DO NOTHING",
                (model, model),
            )
            conn.execute("DELETE FROM old_vectors WHERE model < %s OR model > %s", (model, model))
            conn.execute("SELECT nextval('old_vectors_version')")
    done = 0
    while limit is None or done < limit:
        want = _BATCH if limit is None else min(_BATCH, limit - done)
        with db.transaction() as conn:
            claimed = _claim_old(conn, want)
            if not claimed:
                return done
            texts = conn.execute(
                "SELECT id, revision, title, body FROM old_revisions"
                " WHERE (id, revision) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
                ([c[0] for c in claimed], [c[1] for c in claimed]),
            ).fetchall()
            notes = sorted({t[0] for t in texts})
            skip = current_keys(conn, notes, model)
            held = held_vectors(conn, notes, model)
        done += _embed_old_batch(db, embedder, claimed, texts, skip, held)
    return done


def _embed_old_batch(
    db: PgDatabase,
    embedder: Embedder,
    claimed: list[tuple[str, int]],
    texts: list[tuple[str, int, str, str]],
    skip: dict[str, set[bytes]],
    held: dict[str, dict[bytes, bytes]],
) -> int:
    """Embed the passages of the claimed revisions no vector of their note has yet, and write
    every revision's; returns how many revisions needed the model."""
    np = numpy()
    model, asked = embedder.model_id, embedder.dim
    cut = {(nid, rev): passages(title, body) for nid, rev, title, body in texts}
    fresh: dict[str, None] = {}  # each passage the batch's notes hold no vector of, once
    needed = 0
    for (nid, _rev), parts in cut.items():
        known = skip[nid] | held[nid].keys()
        missing = [text for _a, _b, text in parts if passage_key(model, asked, text) not in known]
        fresh.update(dict.fromkeys(missing))
        needed += bool(missing)
    made = embedder.embed_documents(list(fresh)) if fresh else np.zeros((0, asked), np.float32)
    dim = embedder.dim  # a remote model's is known once it answered
    by_key = {passage_key(model, dim, text): np.asarray(made[k], dtype="<f4").tobytes() for k, text in enumerate(fresh)}
    rows = []
    for (nid, rev), parts in cut.items():
        keys = [passage_key(model, dim, text) for _a, _b, text in parts]
        rows += upsert_rows(nid, rev, parts, keys, {**held[nid], **by_key}, skip[nid], model, dim)
    with db.transaction() as conn, conn.cursor() as cur:
        cur.executemany(UPSERT, rows)
        cur.executemany(
            "DELETE FROM old_embed_queue WHERE note_id = %s AND revision = %s", [(c[0], c[1]) for c in claimed]
        )
        cur.execute("SELECT nextval('old_vectors_version')")
    return needed


def _claim_old(conn: Any, want: int) -> list[tuple[str, int]]:
    """Lease up to *want* older revisions waiting for vectors (newest first) in *conn*'s
    transaction, fewer when they are long (their passages guessed from their size, as
    :func:`_claim` does); returns (note id, revision) of each."""
    rows = conn.execute(
        "SELECT q.note_id, q.revision, octet_length(o.title) + octet_length(o.body) FROM old_embed_queue q"
        " JOIN old_revisions o ON o.id = q.note_id AND o.revision = q.revision"
        " WHERE q.claimed_until IS NULL OR q.claimed_until < now()"
        " ORDER BY o.seq DESC LIMIT %s FOR UPDATE OF q SKIP LOCKED",
        (want,),
    ).fetchall()
    taken = [(nid, revision) for nid, revision, _size in rows[: _fitting([r[2] for r in rows])]]
    if taken:
        conn.execute(
            "UPDATE old_embed_queue SET claimed_until = now() + make_interval(secs => %s)"
            " WHERE (note_id, revision) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
            (LEASE, [t[0] for t in taken], [t[1] for t in taken]),
        )
    return taken


def _claim(db: PgDatabase, worker: str, count: int) -> list[_Claimed]:
    """Lease up to *count* unclaimed (or abandoned) queue entries, oldest first, and fewer when
    their notes are long: no more than _BATCH_PASSAGES passages as guessed from their size
    (the first entry always). Entries looked at and not taken stay as they were, for the
    next claim of this server or another."""
    with db.transaction() as conn:
        # octet_length reads a stored text's size from its header, without reading the text.
        rows = conn.execute(
            "SELECT q.note_id, q.ticket, coalesce(octet_length(n.title) + octet_length(n.body), 0)"
            " FROM embed_queue q LEFT JOIN notes n ON n.id = q.note_id"
            " WHERE q.claimed_until IS NULL OR q.claimed_until < now()"
            " ORDER BY q.ticket LIMIT %s FOR UPDATE OF q SKIP LOCKED",
            (count,),
        ).fetchall()
        taken = [_Claimed(nid, ticket) for nid, ticket, _size in rows[: _fitting([r[2] for r in rows])]]
        if taken:
            conn.execute(
                "UPDATE embed_queue SET claimed_by = %s, claimed_until = now() + make_interval(secs => %s)"
                " WHERE note_id = ANY(%s)",
                (worker, LEASE, [c.note_id for c in taken]),
            )
    return taken


def _read(db: PgDatabase, embedder: Embedder, claimed: list[_Claimed]) -> None:
    """Fill in each claimed note's revision, passages (none when it is gone, or already
    embedded by this model from this very title and body, every passage of it) and the
    vector each passage keeps: one the note holds for its very text (current or older)."""
    ids = [c.note_id for c in claimed]
    model, asked = embedder.model_id, embedder.dim
    with db.transaction() as conn:
        notes = {
            nid: (revision, title, body)
            for nid, revision, title, body in conn.execute(
                "SELECT id, revision, title, body FROM notes WHERE id = ANY(%s)", (ids,)
            )
        }
        have = {
            nid: (sha, vmodel, count)
            for nid, sha, vmodel, count in conn.execute(
                "SELECT v.note_id, v.sha256, v.model, (SELECT count(*) FROM note_vectors c WHERE c.note_id = v.note_id)"
                " FROM note_vectors v WHERE v.note_id = ANY(%s) AND v.chunk = 0",
                (ids,),
            )
        }
        for c in claimed:
            found = notes.get(c.note_id)
            if found is None:
                continue
            c.revision, title, body = found
            c.sha = text_sha(title, body)
            parts = passages(title, body)
            # A note embedded while passages stopped at 24 (OLD_CAP) has this text's sha and
            # fewer vectors than passages: it is embedded again, keeping the vectors it has.
            if have.get(c.note_id) != (c.sha, model, len(parts)):
                c.parts = parts
        held = held_vectors(conn, [c.note_id for c in claimed if c.parts], model)
    for c in claimed:
        # Under the dimension asked with: a remote model's is 0 until it answers (none kept then).
        kept = held.get(c.note_id, {})
        c.held = [kept.get(passage_key(model, asked, text)) for _a, _b, text in c.parts]


def _within_budget(db: PgDatabase, worker: str, claimed: list[_Claimed]) -> list[_Claimed]:
    """The claimed notes (oldest first) whose passages, counted now, come to no more than
    _BATCH_PASSAGES (the first always); the rest are released at once, queued still: their
    sizes guessed fewer passages than their texts make."""
    count = 0
    for at, c in enumerate(claimed):
        count += len(c.parts)
        if at and count > _BATCH_PASSAGES:
            _release(db, worker, [r.note_id for r in claimed[at:]])
            return claimed[:at]
    return claimed


def _embed(
    db: PgDatabase,
    embedder: Embedder,
    worker: str,
    claimed: list[_Claimed],
    should_stop: Callable[[], bool] | None,
) -> list[np.ndarray] | None:
    """The vectors of the passages the claimed notes keep none for, in order, one array per
    call of the model (_BATCH_PASSAGES passages each). Between two calls the claim's lease is
    renewed, and None is returned if *should_stop* says so."""
    texts = [text for c in claimed for text in c.fresh()]
    made = []
    for at in range(0, len(texts), _BATCH_PASSAGES):
        if at:
            if should_stop is not None and should_stop():
                return None
            with db.transaction() as conn:
                conn.execute(_RENEW, (LEASE, [c.note_id for c in claimed], worker))
        made.append(embedder.embed_documents(texts[at : at + _BATCH_PASSAGES]))
    return made


def _write(db: PgDatabase, embedder: Embedder, worker: str, claimed: list[_Claimed], vectors: list[np.ndarray]) -> None:
    """Each note's vectors in place of its old ones, if its revision is still the one
    embedded; then the queue entries that were read are removed, the rest released."""
    np = numpy()
    model, dim = embedder.model_id, embedder.dim  # a remote model's dim is known once it answered
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
        made = (vector for part in vectors for vector in part)  # in the claimed notes' order
        superseded = False
        for c in claimed:
            fresh = iter([next(made) for _text in c.fresh()])  # taken even when not written: the next note's follow
            if not c.parts or current.get(c.note_id) != c.revision:
                continue  # nothing to write, or gone or changed while embedding (queued again)
            keys = [passage_key(model, dim, text) for _a, _b, text in c.parts]
            superseded |= keep_superseded(conn, c.note_id, set(keys))  # an older revision's meaning stays searchable
            conn.execute("DELETE FROM note_vectors WHERE note_id = %s", (c.note_id,))
            for k, ((a, b, _text), key, kept) in enumerate(zip(c.parts, keys, c.held, strict=True)):
                vector = np.asarray(next(fresh), dtype="<f4") if kept is None else np.frombuffer(kept, dtype="<f4")
                row = (c.note_id, k, model, dim, c.sha, c.revision, a, b, key, vector.tobytes())
                rows.append(row + (vector_param(vector),) if ready else row)
            written.append(c.note_id)
        with write_cursor(conn) if ready else conn.cursor() as cur:
            cur.executemany(_INSERT_PGVECTOR if ready else _INSERT, rows)
            # Only the entry that was read: an edit meanwhile gave the note a new ticket.
            cur.executemany(
                "DELETE FROM embed_queue WHERE note_id = %s AND ticket = %s", [(c.note_id, c.ticket) for c in claimed]
            )
        conn.execute(_RELEASE, (ids, worker))
        if superseded:
            conn.execute("SELECT nextval('old_vectors_version')")
        if written:
            conn.execute("SELECT notewell_log_vectors(%s)", (written,))  # last: it serialises log writers


def _release(db: PgDatabase, worker: str, ids: list[str]) -> None:
    with db.transaction() as conn:
        conn.execute(_RELEASE, (ids, worker))
