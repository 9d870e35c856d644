"""The vectors a rebuilt index takes over from the index it replaces.

Every vector is stored with its key, sha256 of the model id, the dimension and the exact
passage text embedded (:func:`~.embedding.passage_key`). After a rebuild, a note whose
passages, cut from its text as embedding cuts them now, all have a vector under their keys
in the old index gets those vectors, written as :func:`~.embedding.embed_pending` writes
them (in the vector log, so a long-lived matrix picks them up), and leaves the embed queue.
Any other note waits for embedding: its text changed (outside notewell, or an edit not
embedded yet), another model made its vectors, or the passages are cut differently now.

Keys, not passages recomputed from the old note text: the key says what was embedded, so
a change in how passages are cut can never pair a vector with a text it was not made from.
A note is taken over whole or not at all: its vectors are searched and replaced as one
set, and a partial set would pass for a complete one. Vectors from before keys were stored
are taken over when the note's text is the one they were made from and the passages fall
at the same places.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from ...errors import UnavailableError
from ...model.cjk import unsegment
from ...search.embedders import numpy
from ...search.passages import passage_key, passages
from .embedding import note_passages
from .index import Index
from .old_revision_rows import old_vectors_changed
from .old_vectors import current_keys, held_vectors, old_text, store_revision

__all__ = ["carry_old_vectors", "carry_vectors"]

_BATCH = 256  # notes per transaction: the write lock is held briefly

# (chunk, model, dim, sha256, start, stop, key, vector) of one old vector
_Row = tuple[int, str, int, str, int, int, bytes | None, bytes]


def carry_vectors(index: Index, old: Path | None) -> Counter[str]:
    """Give the notes of *index* the vectors the *old* index file holds for their current
    passages; returns how many notes got theirs, by model. What cannot be read of the old
    file (missing, damaged) is not carried: those notes wait for embedding."""
    carried: Counter[str] = Counter()
    if old is None or not old.exists():
        return carried
    try:
        source = sqlite3.connect(old.as_uri() + "?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return carried
    try:
        try:
            keyed = source.execute("SELECT 1 FROM pragma_table_info('note_vectors') WHERE name = 'key'").fetchone()
        except sqlite3.DatabaseError:
            return carried
        after = ""
        while True:
            # The notes are read in the transaction that writes their vectors: the text the
            # keys are checked against is the text indexed when they are written.
            with index.write():
                notes = index.conn.execute(
                    "SELECT n.id, n.title, n.sha256, t.text FROM note_index n JOIN note_text t ON t.rowid = n.rowid"
                    " WHERE n.id > ? ORDER BY n.id LIMIT ?",
                    (after, _BATCH),
                ).fetchall()
                if not notes:
                    return carried
                after = notes[-1][0]
                try:
                    old_rows = _old_rows(source, [note[0] for note in notes], keyed=keyed is not None)
                except sqlite3.DatabaseError:
                    return carried  # damaged: what was carried so far stands
                carried.update(_take_over(index, notes, old_rows).values())
    finally:
        source.close()


def _old_rows(source: sqlite3.Connection, ids: list[str], *, keyed: bool) -> dict[str, list[_Row]]:
    marks = ",".join("?" * len(ids))
    rows: dict[str, list[_Row]] = {}
    for nid, *row in source.execute(
        f"SELECT note_id, chunk, model, dim, sha256, start, stop, {'key' if keyed else 'NULL'}, vector"
        f" FROM note_vectors WHERE note_id IN ({marks}) ORDER BY note_id, chunk",
        ids,
    ):
        rows.setdefault(nid, []).append(tuple(row))
    return rows


def _take_over(index: Index, notes: list[tuple[str, str, str, str]], old: dict[str, list[_Row]]) -> dict[str, str]:
    """Write the vectors of the *notes* (id, title, sha256, text) whose every passage has one
    in *old* (inside the write transaction); returns their ids with their model."""
    conn = index.conn
    ids = [note[0] for note in notes if note[0] in old]
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    embedded = {
        n for (n,) in conn.execute(f"SELECT DISTINCT note_id FROM note_vectors WHERE note_id IN ({marks})", ids)
    }
    rows: list[tuple[object, ...]] = []
    done: dict[str, str] = {}
    for nid, title, sha, text in notes:
        if nid not in old or nid in embedded:  # nothing to take, or embedded by another process meanwhile
            continue
        reuse = _reusable(old[nid], note_passages(title, text), sha)
        if reuse is None:
            continue
        model, dim = old[nid][0][1], old[nid][0][2]
        rows += [
            (nid, k, model, dim, sha, start, stop, vector, key) for k, (start, stop, vector, key) in enumerate(reuse)
        ]
        done[nid] = model
    if done:
        conn.executemany(
            "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, start, stop, vector, key)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany("DELETE FROM embed_queue WHERE note_id = ?", [(nid,) for nid in done])
        index.log_vectors(done)
    return done


def _reusable(
    old: list[_Row], parts: list[tuple[int, int, str]], sha: str
) -> list[tuple[int, int, bytes, bytes]] | None:
    """(start, stop, vector, key) for each passage in *parts*, or None when one has no sound vector."""
    if len({(row[1], row[2]) for row in old}) != 1:
        return None  # a mix of models: never written by notewell, so not trusted
    model, dim = old[0][1], old[0][2]
    if not isinstance(model, str) or not isinstance(dim, int) or dim < 1:
        return None
    by_key = {row[6]: row[7] for row in old if row[6] is not None}
    unkeyed = [row for row in old if row[6] is None]
    out = []
    for k, (start, stop, passage) in enumerate(parts):
        key = passage_key(model, dim, passage)
        vector = by_key.get(key)
        if vector is None and len(unkeyed) == len(parts) == len(old):
            chunk, _m, _d, made_from, was_start, was_stop, _key, blob = unkeyed[k]
            if (chunk, made_from, was_start, was_stop) == (k, sha, start, stop):
                vector = blob  # the same text, cut at the same places, made it
        if vector is None:
            return None
        out.append((start, stop, vector, key))
    return out if _sound([v for _a, _b, v, _k in out], dim) else None


def _sound(vectors: list[bytes], dim: int) -> bool:
    """Every vector is *dim* float32 values of length 1 (or 0, an empty text's): a file set
    aside because it was damaged may still read, with values that are not vectors."""
    if any(not isinstance(v, bytes) or len(v) != 4 * dim for v in vectors):
        return False
    try:
        np = numpy()
    except UnavailableError:
        return True  # no numpy, no semantic search here: the lengths are all that can be checked cheaply
    matrix = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(vectors), dim)
    norms = np.einsum("ij,ij->i", matrix, matrix)
    return bool(np.all((np.abs(norms - 1.0) < 1e-3) | (norms == 0.0)))


def carry_old_vectors(index: Index, old: Path | None) -> int:
    """Give the older revisions waiting for vectors in *index* those the *old* index file holds
    for their passages, by key (:mod:`.old_vectors`; a revision's text never changes, so the
    vectors stay sound); returns how many revisions got all theirs. An index from before
    version 13 keeps a row per revision and passage, without keys: a row's key is made from
    the passage of its revision's text at that place, when it is cut at the same place now."""
    if old is None or not old.exists():
        return 0
    try:
        source = sqlite3.connect(old.as_uri() + "?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return 0
    carried = 0
    try:
        try:
            columns = {name for (name,) in source.execute("SELECT name FROM pragma_table_info('old_vectors')")}
        except sqlite3.DatabaseError:
            return 0
        if not columns:
            return 0
        waiting: dict[str, list[tuple[int, str, str]]] = {}
        for nid, revision, title, body in index.conn.execute(
            "SELECT q.note_id, q.revision, f.title, f.body FROM old_embed_queue q"
            " JOIN old_revisions o ON o.note_id = q.note_id AND o.revision = q.revision"
            " JOIN old_revisions_fts f ON f.rowid = o.rowid ORDER BY q.note_id, q.revision"
        ):
            waiting.setdefault(nid, []).append((revision, title, body))
        notes = list(waiting)
        for at in range(0, len(notes), _BATCH):
            found: dict[str, tuple[str, int, dict[bytes, bytes]]] = {}
            try:
                for nid in notes[at : at + _BATCH]:
                    vectors = _old_note_vectors(index, source, nid, keyed="key" in columns)
                    if vectors is not None:
                        found[nid] = vectors
            except sqlite3.DatabaseError:
                break  # damaged: what was carried so far stands
            if found:
                carried += _take_over_old(index, found, waiting)
    finally:
        source.close()
    return carried


def _old_note_vectors(
    index: Index, source: sqlite3.Connection, nid: str, *, keyed: bool
) -> tuple[str, int, dict[bytes, bytes]] | None:
    """The model, dimension and vectors by key that *source* holds for a note (its older
    revisions' and its current ones), or None when they are not all sound vectors of one model."""
    rows: list[tuple[str, int, bytes | None, bytes]] = []
    if keyed:
        rows += source.execute("SELECT model, dim, key, vector FROM old_vectors WHERE note_id = ?", (nid,)).fetchall()
    else:
        unkeyed = source.execute(
            "SELECT revision, chunk, start, stop, model, dim, vector FROM old_vectors WHERE note_id = ?", (nid,)
        ).fetchall()
        texts = _revision_texts(index, nid, {row[0] for row in unkeyed})
        for revision, chunk, start, stop, model, dim, vector in unkeyed:
            parts = texts.get(revision, [])
            if chunk < len(parts) and parts[chunk][:2] == (start, stop):  # the passage it was made from
                rows.append((model, dim, passage_key(model, dim, parts[chunk][2]), vector))
    rows += source.execute(
        "SELECT model, dim, key, vector FROM note_vectors WHERE note_id = ? AND key IS NOT NULL", (nid,)
    ).fetchall()
    if not rows:
        return None
    model, dim = Counter((row[0], row[1]) for row in rows).most_common(1)[0][0]
    vectors = {bytes(key): vector for m, d, key, vector in rows if (m, d) == (model, dim) and key is not None}
    if not isinstance(model, str) or not isinstance(dim, int) or dim < 1 or not _sound(list(vectors.values()), dim):
        return None
    return model, dim, vectors


def _revision_texts(index: Index, nid: str, revisions: set[int]) -> dict[int, list[tuple[int, int, str]]]:
    """The passages of a note's older revisions, from their text in *index*."""
    texts = {}
    for revision, title, body in index.conn.execute(
        "SELECT o.revision, f.title, f.body FROM old_revisions o JOIN old_revisions_fts f ON f.rowid = o.rowid"
        " WHERE o.note_id = ? AND o.searchable = 1",
        (nid,),
    ):
        if revision in revisions:
            texts[revision] = passages(unsegment(title), unsegment(body))
    return texts


def _take_over_old(
    index: Index, found: dict[str, tuple[str, int, dict[bytes, bytes]]], waiting: dict[str, list[tuple[int, str, str]]]
) -> int:
    """Write the waiting revisions' vectors that *found* (or the index itself) holds; those
    that got every one leave the queue. Returns how many did."""
    conn = index.conn
    whole = []
    with index.write():
        for nid, (model, dim, vectors) in found.items():
            have = {**vectors, **held_vectors(conn, nid, model)}
            skip = current_keys(conn, nid, model)
            for revision, title, body in waiting[nid]:
                if store_revision(conn, old_text(nid, revision, title, body, model, dim), have, skip, model, dim):
                    whole.append((nid, revision))
        conn.executemany("DELETE FROM old_embed_queue WHERE note_id = ? AND revision = ?", whole)
        old_vectors_changed(conn)
    return len(whole)
