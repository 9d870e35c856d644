"""Older revisions' rows in the embedded index: every superseded text of a live note.

Each is a row of ``old_revisions`` with its title and body in ``old_revisions_fts`` (CJK
segmented as in notes_fts), written in the transaction that supersedes it and made again by
a rebuild from the kept revision files, and an entry in ``old_embed_queue`` until its
passage vectors are in ``old_vectors``. A revision that changed only the header, or whose
text was never kept, is a row with ``searchable = 0`` and nothing else: looked at once. A
note's rows go when the note does (the files stay in the history folder). Searching them:
:mod:`.old_revisions`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ...model.cjk import segment
from ...model.note import superseded_texts, title_and_body

if TYPE_CHECKING:
    from .history import History

__all__ = [
    "OLD_VECTORS_STATE",
    "fill_old_revisions",
    "forget_old_revisions",
    "keep_old_revision",
    "old_vectors_changed",
]

OLD_VECTORS_STATE = "old_vectors_version"  # a state row that moves whenever old_vectors change


def keep_old_revision(
    conn: sqlite3.Connection, note_id: str, revision: int, text: str, path: str, *, then: str
) -> None:
    """Index the text *revision* of a note had, now superseded by *then* (inside the write
    transaction); left out of search when *then* changed only the header (the words are all
    still there)."""
    title, body = title_and_body(text, path)
    if (title, body) != title_and_body(then, path):
        _insert(conn, note_id, revision, title, body)
    else:
        _pass_over(conn, note_id, revision)


def _insert(conn: sqlite3.Connection, note_id: str, revision: int, title: str, body: str) -> None:
    cur = conn.execute("INSERT OR IGNORE INTO old_revisions(note_id, revision) VALUES (?, ?)", (note_id, revision))
    if cur.rowcount:  # else indexed already (a journal line applied twice, a rebuild's second look)
        conn.execute(
            "INSERT INTO old_revisions_fts(rowid, title, body) VALUES (?, ?, ?)",
            (cur.lastrowid, segment(title), segment(body)),
        )
        conn.execute("INSERT OR IGNORE INTO old_embed_queue(note_id, revision) VALUES (?, ?)", (note_id, revision))


def _pass_over(conn: sqlite3.Connection, note_id: str, revision: int) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO old_revisions(note_id, revision, searchable) VALUES (?, ?, 0)", (note_id, revision)
    )


def old_vectors_changed(conn: sqlite3.Connection) -> None:
    """Note that old_vectors changed (in the caller's transaction): a matrix of them is stale."""
    conn.execute(
        "INSERT INTO state(key, value) VALUES (?, '1')"
        " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (OLD_VECTORS_STATE,),
    )


def forget_old_revisions(conn: sqlite3.Connection, note_id: str) -> None:
    """Drop a deleted note's older revisions from the index (their files stay in the history)."""
    rowids = [r for (r,) in conn.execute("SELECT rowid FROM old_revisions WHERE note_id = ?", (note_id,))]
    if not rowids:
        return
    conn.executemany("DELETE FROM old_revisions_fts WHERE rowid = ?", [(r,) for r in rowids])
    conn.execute("DELETE FROM old_revisions WHERE note_id = ?", (note_id,))
    conn.execute("DELETE FROM old_embed_queue WHERE note_id = ?", (note_id,))
    if conn.execute("DELETE FROM old_vectors WHERE note_id = ?", (note_id,)).rowcount:
        old_vectors_changed(conn)


def fill_old_revisions(conn: sqlite3.Connection, history: History, note_id: str | None = None) -> int:
    """Index the kept revision files of live notes (of *note_id* alone if given) that the index
    has not looked at: after a rebuild, or revisions that came with a pull. Returns how many
    it made searchable. Reads only the files of revisions above the last one looked at."""
    where = " AND n.id = ?" if note_id else ""
    behind = conn.execute(
        "SELECT n.id, n.revision, n.path, t.text,"
        " (SELECT coalesce(max(o.revision), 0) FROM old_revisions o WHERE o.note_id = n.id) AS seen"
        " FROM note_index n JOIN note_text t ON t.rowid = n.rowid WHERE n.revision > 1"
        + where
        + " AND seen < n.revision - 1",
        (note_id,) if note_id else (),
    ).fetchall()
    added = 0
    for nid, current, path, text, seen in behind:
        versions = []
        for revision in range(seen + 1, current):
            data = history.load_revision(nid, revision)
            if data is not None:
                versions.append((revision, data.decode("utf-8", errors="replace")))
        kept = {
            revision: (title, body) for revision, title, body in superseded_texts([*versions, (current, text)], path)
        }
        for revision in range(seen + 1, current):
            if revision in kept:
                _insert(conn, nid, revision, *kept[revision])
                added += 1
            else:
                _pass_over(conn, nid, revision)  # header-only, or never kept (superseded unseen)
    return added
