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
from ...search.embedders import numpy
from .embedding import note_passages, passage_key
from .index import Index
from .old_revision_rows import old_vectors_changed

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
        rows.setdefault(nid, []).append(tuple(row))  # type: ignore[arg-type]
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
    rows: list[tuple] = []
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
    for the same note and revision (a revision's text never changes, so its vectors stay
    sound); returns how many revisions got theirs."""
    if old is None or not old.exists():
        return 0
    try:
        source = sqlite3.connect(old.as_uri() + "?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return 0
    carried = 0
    try:
        try:
            if source.execute("SELECT 1 FROM sqlite_master WHERE name = 'old_vectors'").fetchone() is None:
                return 0
        except sqlite3.DatabaseError:
            return 0
        waiting = index.conn.execute(
            "SELECT note_id, revision FROM old_embed_queue ORDER BY note_id, revision"
        ).fetchall()
        for at in range(0, len(waiting), _BATCH):
            batch = waiting[at : at + _BATCH]
            found: dict[tuple[str, int], list[tuple]] = {}
            try:
                for nid, revision in batch:
                    rows = source.execute(
                        "SELECT chunk, model, dim, start, stop, vector FROM old_vectors"
                        " WHERE note_id = ? AND revision = ? ORDER BY model, chunk",
                        (nid, revision),
                    ).fetchall()
                    if rows and len({(r[1], r[2]) for r in rows}) == 1 and _sound([r[5] for r in rows], rows[0][2]):
                        found[(nid, revision)] = rows
            except sqlite3.DatabaseError:
                break  # damaged: what was carried so far stands
            if not found:
                continue
            with index.write():
                for (nid, revision), rows in found.items():
                    index.conn.executemany(
                        "INSERT OR IGNORE INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [(nid, revision, *row) for row in rows],
                    )
                index.conn.executemany("DELETE FROM old_embed_queue WHERE note_id = ? AND revision = ?", list(found))
                old_vectors_changed(index.conn)
            carried += len(found)
    finally:
        source.close()
    return carried
