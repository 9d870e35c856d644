"""Older revisions' passage vectors in PostgreSQL: each distinct passage of a note once.

As on SQLite (:mod:`notewell.backends.sqlite.old_vectors`, where the reasons are): one row of
``old_vectors`` per note and passage key (:func:`~...search.passages.passage_key`), naming the
newest older revision that holds the passage and its place in that revision's body, and none
for a passage the note's current text holds. Schema version 6 brought this: before, a row per
revision and passage, moved over by a trigger whenever a note's vectors were deleted; now
:func:`keep_superseded` does it where the embedder replaces them (it knows the new passages'
keys), and :func:`key_vectors` turned the rows of a database upgraded from version 5 into these.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ...search.passages import passage_key, passages

__all__ = ["UPSERT", "current_keys", "held_vectors", "keep_superseded", "key_vectors", "upsert_rows"]

# A passage met again in a newer older revision is named by that one; met in an older one, it
# stays as it is. Written only if the revision is still there (a delete racing an embedder).
UPSERT = (
    "INSERT INTO old_vectors(note_id, key, revision, model, dim, start, stop, vector)"
    " SELECT %s, %s, %s, %s, %s, %s, %s, %s WHERE EXISTS"
    " (SELECT 1 FROM old_revisions WHERE id = %s AND revision = %s)"
    " ON CONFLICT (note_id, key) DO UPDATE SET revision = EXCLUDED.revision, start = EXCLUDED.start,"
    " stop = EXCLUDED.stop WHERE EXCLUDED.revision > old_vectors.revision"
)

# The sha256 of a note's title and body, as embedding.text_sha makes it and note_vectors keeps it.
_NOTE_SHA = "encode(sha256(convert_to(n.title || E'\\n' || n.body, 'UTF8')), 'hex')"


def current_keys(conn: Any, note_ids: Sequence[str], model: str) -> dict[str, set[bytes]]:
    """By note, the keys of its vectors of *model* made from its current title and body: the
    current pass finds those passages, so no older revision keeps a copy of them."""
    keys: dict[str, set[bytes]] = {nid: set() for nid in note_ids}
    for nid, key in conn.execute(
        "SELECT v.note_id, v.key FROM note_vectors v JOIN notes n ON n.id = v.note_id"
        f" WHERE v.note_id = ANY(%s) AND v.model = %s AND v.key IS NOT NULL AND v.sha256 = {_NOTE_SHA}",
        (list(note_ids), model),
    ):
        keys[nid].add(bytes(key))
    return keys


def held_vectors(conn: Any, note_ids: Sequence[str], model: str) -> dict[str, dict[bytes, bytes]]:
    """By note, every vector of *model* it holds, older or current, by passage key."""
    held: dict[str, dict[bytes, bytes]] = {nid: {} for nid in note_ids}
    for table in ("old_vectors", "note_vectors"):
        for nid, key, vector in conn.execute(
            f"SELECT note_id, key, vector FROM {table} WHERE note_id = ANY(%s) AND model = %s AND key IS NOT NULL",
            (list(note_ids), model),
        ):
            held[nid][bytes(key)] = bytes(vector)
    return held


def upsert_rows(
    nid: str,
    revision: int,
    parts: list[tuple[int, int, str]],
    keys: list[bytes],
    vectors: Mapping[bytes, bytes],
    skip: Collection[bytes],
    model: str,
    dim: int,
) -> list[tuple[Any, ...]]:
    """UPSERT's parameters for the passages of one older revision not in *skip* (all of them
    must be in *vectors*)."""
    return [
        (nid, key, revision, model, dim, start, stop, vectors[key], nid, revision)
        for (start, stop, _text), key in zip(parts, keys, strict=True)
        if key not in skip
    ]


def keep_superseded(conn: Any, note_id: str, current: Collection[bytes]) -> bool:
    """Before a note's vectors are replaced by those of its current text (whose keys are
    *current*): keep the passages of the text they were made from, as the newest older revision
    with that title and body, less those the current text holds. Returns whether any was kept."""
    found = conn.execute(
        "SELECT o.revision FROM note_vectors v JOIN old_revisions o ON o.id = v.note_id AND o.text_sha = v.sha256"
        " AND o.revision >= v.revision JOIN notes n ON n.id = o.id AND n.revision > o.revision"
        " WHERE v.note_id = %s AND v.chunk = 0 ORDER BY o.revision DESC LIMIT 1",
        (note_id,),
    ).fetchone()
    if found is None:
        return False
    revision = found[0]
    rows = conn.execute(
        "SELECT key, model, dim, start, stop, vector FROM note_vectors WHERE note_id = %s ORDER BY chunk", (note_id,)
    ).fetchall()
    kept = [
        (note_id, bytes(key), revision, model, dim, start, stop, vector, note_id, revision)
        for key, model, dim, start, stop, vector in rows
        if key is not None and bytes(key) not in current
    ]
    if kept:
        with conn.cursor() as cur:
            cur.executemany(UPSERT, kept)
    if all(row[0] is not None for row in rows):  # else (vectors from before keys) it is embedded from its text
        conn.execute("DELETE FROM old_embed_queue WHERE note_id = %s AND revision = %s", (note_id, revision))
    return bool(kept)


def key_vectors(conn: Any) -> None:
    """Version 6 on a database that holds vectors: each vector's key, made from the passage of
    its text at its place (a vector whose text is not known any more, or is cut elsewhere now,
    goes: a note waits to be embedded again, an older revision to be embedded from its text);
    then each distinct passage of a note's older revisions once, as the newest revision holding
    it, and none that the note's current vectors hold."""
    _key_current(conn)
    _key_older(conn)
    conn.execute(
        "DELETE FROM old_vectors o USING old_vectors n WHERE n.note_id = o.note_id AND n.key = o.key"
        " AND (n.revision > o.revision OR (n.revision = o.revision AND n.seq < o.seq))"
    )
    conn.execute(
        "DELETE FROM old_vectors o USING note_vectors v, notes n WHERE v.note_id = o.note_id AND v.key = o.key"
        f" AND n.id = v.note_id AND v.sha256 = {_NOTE_SHA}"
    )
    conn.execute(
        "ALTER TABLE old_vectors DROP CONSTRAINT old_vectors_pkey, DROP COLUMN chunk, ALTER COLUMN key SET NOT NULL,"
        " ADD PRIMARY KEY (note_id, key)"
    )


def _key_current(conn: Any) -> None:
    rows = conn.execute(
        "SELECT note_id, chunk, model, dim, start, stop, sha256 FROM note_vectors ORDER BY note_id, chunk"
    ).fetchall()
    cut: dict[tuple[str, str], list[tuple[int, int, str]] | None] = {}
    keyed = []
    for nid, chunk, model, dim, start, stop, sha in rows:
        if (nid, sha) not in cut:
            # The text they were made from: the note's current one, or an older revision's.
            text = conn.execute(
                f"SELECT n.title, n.body FROM notes n WHERE n.id = %s AND {_NOTE_SHA} = %s UNION ALL"
                " SELECT title, body FROM old_revisions WHERE id = %s AND text_sha = %s LIMIT 1",
                (nid, sha, nid, sha),
            ).fetchone()
            cut[(nid, sha)] = None if text is None else passages(*text)
        parts = cut[(nid, sha)] or []
        if chunk < len(parts) and parts[chunk][:2] == (start, stop):
            keyed.append((passage_key(model, dim, parts[chunk][2]), nid, chunk))
    with conn.cursor() as cur:
        cur.executemany("UPDATE note_vectors SET key = %s WHERE note_id = %s AND chunk = %s", keyed)
    # Vectors of a text not known any more, or cut otherwise now: the note is embedded again.
    conn.execute(
        "INSERT INTO embed_queue(note_id) SELECT DISTINCT note_id FROM note_vectors WHERE key IS NULL"
        " ON CONFLICT DO NOTHING"
    )
    conn.execute("DELETE FROM note_vectors WHERE key IS NULL")


def _key_older(conn: Any) -> None:
    rows = conn.execute(
        "SELECT seq, note_id, revision, chunk, model, dim, start, stop FROM old_vectors"
        " ORDER BY note_id, revision, chunk"
    ).fetchall()
    cut: dict[tuple[str, int], list[tuple[int, int, str]]] = {}
    keyed = []
    for seq, nid, revision, chunk, model, dim, start, stop in rows:
        if (nid, revision) not in cut:
            text = conn.execute(
                "SELECT title, body FROM old_revisions WHERE id = %s AND revision = %s", (nid, revision)
            ).fetchone()
            cut[(nid, revision)] = passages(*text)  # there: a row goes with its revision
        parts = cut[(nid, revision)]
        if chunk < len(parts) and parts[chunk][:2] == (start, stop):
            keyed.append((passage_key(model, dim, parts[chunk][2]), seq))
    with conn.cursor() as cur:
        cur.executemany("UPDATE old_vectors SET key = %s WHERE seq = %s", keyed)
    conn.execute(
        "INSERT INTO old_embed_queue(note_id, revision) SELECT DISTINCT note_id, revision FROM old_vectors"
        " WHERE key IS NULL ON CONFLICT DO NOTHING"
    )
    conn.execute("DELETE FROM old_vectors WHERE key IS NULL")
