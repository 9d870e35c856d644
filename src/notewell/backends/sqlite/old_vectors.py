"""Older revisions' passage vectors in the embedded index: each distinct passage of a note once.

A conversation imported again after each exchange supersedes, each time, a text that shares
all but its last passages with the new one. Kept as one row per revision and passage, a note's
older vectors grew as revisions x passages (a 60-passage conversation re-imported 100 times:
some 3,000 vectors of 2 KB, nearly all copies of passages the note still holds). So
``old_vectors`` holds one row per note and passage key (:func:`~...search.passages.passage_key`:
the model, the dimension and the passage's text), naming the newest older revision that holds
the passage and the passage's place in that revision's body; and none for a passage the note's
current text holds, since its current vectors have that passage and the current pass finds it.
A note's older vectors grow with the passages its texts have dropped, not with its revisions.

What older-revision search answers stays what it was. A query nearest a passage the note no
longer holds finds the note at the newest revision that held it, with that revision's passage
as snippet (before, each revision's copy scored alike and the newest won the tie). A query
nearest a passage the current text still holds finds the note as a current match, never as an
older revision: the older pass fills only the places the current texts left, with notes they
did not find, and the note's current vector of that passage scores as a copy of it would.

Written when a note's vectors are replaced (:func:`keep_superseded_vectors`: the superseded
text's passages, less those of the new text), for a revision never embedded
(:func:`embed_old_revisions`: only the passages no vector of the note has yet go through the
model) and by a rebuild (:func:`~.vector_reuse.carry_old_vectors`). A revision leaves
``old_embed_queue`` once each of its passages is stored or held by the current vectors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ...model.cjk import unsegment
from ...search.embedders import Embedder, numpy
from ...search.passages import passage_key, passages
from .index import Index
from .old_revision_rows import old_vectors_changed

__all__ = [
    "OldText",
    "current_keys",
    "embed_old_revisions",
    "held_vectors",
    "keep_superseded_vectors",
    "old_text",
    "store_revision",
]

_EMBED_BATCH = 64  # older revisions embedded and written together

# A passage met again in a newer older revision is named by that one (its place and snippet
# are that text's); met in an older one, it stays as it is.
_UPSERT = (
    "INSERT INTO old_vectors(note_id, key, revision, model, dim, start, stop, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(note_id, key) DO UPDATE SET revision = excluded.revision, start = excluded.start,"
    " stop = excluded.stop WHERE excluded.revision > old_vectors.revision"
)


@dataclass(slots=True)
class OldText:
    """One older revision of a note: its passages and their keys under one model."""

    nid: str
    revision: int
    parts: list[tuple[int, int, str]]
    keys: list[bytes]


def old_text(nid: str, revision: int, title: str, body: str, model: str, dim: int) -> OldText:
    """The passages of an older revision from its indexed (CJK-segmented) title and body."""
    parts = passages(unsegment(title), unsegment(body))
    return OldText(nid, revision, parts, [passage_key(model, dim, text) for _a, _b, text in parts])


def current_keys(conn: sqlite3.Connection, nid: str, model: str) -> set[bytes]:
    """The keys of the note's vectors of *model* made from its current text: the current pass
    finds those passages, so no older revision keeps a copy of them."""
    return {
        bytes(key)
        for (key,) in conn.execute(
            "SELECT v.key FROM note_vectors v JOIN note_index n ON n.id = v.note_id AND n.sha256 = v.sha256"
            " WHERE v.note_id = ? AND v.model = ? AND v.key IS NOT NULL",
            (nid, model),
        )
    }


def held_vectors(conn: sqlite3.Connection, nid: str, model: str) -> dict[bytes, bytes]:
    """Every vector of *model* the note holds, older or current, by passage key."""
    held = {
        bytes(key): vector
        for key, vector in conn.execute(
            "SELECT key, vector FROM old_vectors WHERE note_id = ? AND model = ?", (nid, model)
        )
    }
    for key, vector in conn.execute(
        "SELECT key, vector FROM note_vectors WHERE note_id = ? AND model = ? AND key IS NOT NULL", (nid, model)
    ):
        held[bytes(key)] = vector
    return held


def store_revision(
    conn: sqlite3.Connection,
    text: OldText,
    vectors: Mapping[bytes, bytes],
    skip: Collection[bytes],
    model: str,
    dim: int,
) -> bool:
    """Write the vectors of *text*'s passages that are not in *skip* and that *vectors* has
    (inside the write transaction); True when that was every passage not in *skip*."""
    rows = []
    whole = True
    for (start, stop, _t), key in zip(text.parts, text.keys, strict=True):
        if key in skip:
            continue
        vector = vectors.get(key)
        if vector is None:
            whole = False
        else:
            rows.append((text.nid, key, text.revision, model, dim, start, stop, vector))
    conn.executemany(_UPSERT, rows)
    return whole


def keep_superseded_vectors(conn: sqlite3.Connection, note_id: str, current: Collection[bytes]) -> None:
    """Before a note's vectors are replaced by those of its current text (whose keys are
    *current*): keep the passages of the text they were made from, when that text is now an
    older revision (matched by the file's sha256 in the journal's revisions), less those the
    current text holds."""
    found = conn.execute(
        "SELECT o.revision FROM note_vectors v JOIN note_index n ON n.id = v.note_id"
        " JOIN old_revisions o ON o.note_id = v.note_id AND o.searchable = 1 AND o.revision ="
        " (SELECT max(r.revision) FROM revisions r WHERE r.id = v.note_id AND r.sha256 = v.sha256"
        " AND r.revision < n.revision)"
        " WHERE v.note_id = ? AND v.chunk = 0",
        (note_id,),
    ).fetchone()
    if found is None:
        return
    revision = found[0]
    rows = conn.execute(
        "SELECT key, model, dim, start, stop, vector FROM note_vectors WHERE note_id = ? ORDER BY chunk", (note_id,)
    ).fetchall()
    kept = [
        (note_id, bytes(key), revision, model, dim, start, stop, vector)
        for key, model, dim, start, stop, vector in rows
        if key is not None and bytes(key) not in current
    ]
    conn.executemany(_UPSERT, kept)
    if all(row[0] is not None for row in rows):  # else (vectors from before keys) it is embedded from its text
        conn.execute("DELETE FROM old_embed_queue WHERE note_id = ? AND revision = ?", (note_id, revision))
    if kept:
        old_vectors_changed(conn)


def embed_old_revisions(index: Index, embedder: Embedder, limit: int | None) -> int:
    """Give up to *limit* older revisions waiting for vectors of this model (newest first)
    theirs, from their indexed text; returns how many needed the model. A passage the note
    holds a vector of already (in its current vectors or another older revision) keeps it.
    Vectors of another model are dropped and their notes' revisions wait again. With nothing
    waiting this reads two index entries."""
    conn = index.conn
    _drop_other_models(index, embedder.model_id)
    todo = conn.execute(
        # CROSS JOIN: from the queue (small, often empty) outwards, never a walk of the texts.
        "SELECT q.note_id, q.revision, f.title, f.body FROM old_embed_queue q"
        " CROSS JOIN old_revisions o ON o.note_id = q.note_id AND o.revision = q.revision"
        " CROSS JOIN old_revisions_fts f ON f.rowid = o.rowid"
        " ORDER BY o.rowid DESC LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    done = 0
    for at in range(0, len(todo), _EMBED_BATCH):
        done += _embed_batch(index, embedder, todo[at : at + _EMBED_BATCH])
    return done


def _drop_other_models(index: Index, model: str) -> None:
    """Drop older vectors of a model other than *model*; every searchable revision of their
    notes waits again (a revision's passages may be stored under a newer revision's number)."""
    conn = index.conn
    other = "FROM old_vectors WHERE model < ? OR model > ?"  # two ranges of old_vectors_model, not !=
    if conn.execute(f"SELECT 1 {other} LIMIT 1", (model, model)).fetchone() is None:
        return
    with index.write():
        conn.execute(
            "INSERT OR IGNORE INTO old_embed_queue(note_id, revision) SELECT note_id, revision FROM old_revisions"
            f" WHERE searchable = 1 AND note_id IN (SELECT note_id {other})",
            (model, model),
        )
        conn.execute(f"DELETE {other}", (model, model))
        old_vectors_changed(conn)


def _embed_batch(index: Index, embedder: Embedder, batch: list[tuple[str, int, str, str]]) -> int:
    """Embed and write one batch of waiting revisions; returns how many needed the model."""
    np = numpy()
    conn = index.conn
    model, asked = embedder.model_id, embedder.dim
    texts = [old_text(nid, rev, title, body, model, asked) for nid, rev, title, body in batch]
    notes = {t.nid for t in texts}
    skip = {nid: current_keys(conn, nid, model) for nid in notes}
    held = {nid: held_vectors(conn, nid, model) for nid in notes}
    known = {nid: skip[nid] | held[nid].keys() for nid in notes}
    fresh: dict[str, None] = {}  # each passage the batch's notes hold no vector of, once
    needed = 0
    for t in texts:
        missing = [p for (_a, _b, p), k in zip(t.parts, t.keys, strict=True) if k not in known[t.nid]]
        fresh.update(dict.fromkeys(missing))
        needed += bool(missing)
    made = embedder.embed_documents(list(fresh)) if fresh else np.zeros((0, asked), np.float32)
    dim = embedder.dim  # a remote model's is known once it answered
    if dim != asked:
        texts = [old_text(nid, rev, title, body, model, dim) for nid, rev, title, body in batch]
    by_text = {passage: made[k].tobytes() for k, passage in enumerate(fresh)}
    with index.write():
        for t in texts:
            exists = "SELECT 1 FROM old_revisions WHERE note_id = ? AND revision = ?"
            if conn.execute(exists, (t.nid, t.revision)).fetchone() is None:
                continue  # the note went meanwhile, with its revisions
            vectors = dict(held[t.nid])
            vectors.update((k, by_text[p]) for (_a, _b, p), k in zip(t.parts, t.keys, strict=True) if p in by_text)
            store_revision(conn, t, vectors, skip[t.nid], model, dim)
        conn.executemany(
            "DELETE FROM old_embed_queue WHERE note_id = ? AND revision = ?", [(t.nid, t.revision) for t in texts]
        )
        old_vectors_changed(conn)
    return needed
