"""Older revisions' rows in the embedded index: every superseded text of a live note.

Each is a row of ``old_revisions`` with its title and body in ``old_revisions_fts`` (CJK
segmented as in notes_fts), written in the transaction that supersedes it and made again by
a rebuild from the kept revision files; its passage vectors go to ``old_vectors`` once
embedded. A note's rows go when the note does (the files stay in the history folder).
Searching them: :mod:`.old_revisions`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ...model.cjk import segment
from ...model.note import superseded_texts, title_and_body

if TYPE_CHECKING:
    from .history import History

__all__ = ["fill_old_revisions", "forget_old_revisions", "keep_old_revision"]


def keep_old_revision(
    conn: sqlite3.Connection, note_id: str, revision: int, text: str, path: str, *, then: str
) -> None:
    """Index the text *revision* of a note had, now superseded by *then* (inside the write
    transaction); nothing when *then* changed only the header (the words are all still there)."""
    title, body = title_and_body(text, path)
    if (title, body) != title_and_body(then, path):
        _insert(conn, note_id, revision, title, body)


def _insert(conn: sqlite3.Connection, note_id: str, revision: int, title: str, body: str) -> None:
    cur = conn.execute("INSERT OR IGNORE INTO old_revisions(note_id, revision) VALUES (?, ?)", (note_id, revision))
    if cur.rowcount:  # else indexed already (a journal line applied twice, a rebuild's second look)
        conn.execute(
            "INSERT INTO old_revisions_fts(rowid, title, body) VALUES (?, ?, ?)",
            (cur.lastrowid, segment(title), segment(body)),
        )


def forget_old_revisions(conn: sqlite3.Connection, note_id: str) -> None:
    """Drop a deleted note's older revisions from the index (their files stay in the history)."""
    rowids = [r for (r,) in conn.execute("SELECT rowid FROM old_revisions WHERE note_id = ?", (note_id,))]
    if not rowids:
        return
    conn.executemany("DELETE FROM old_revisions_fts WHERE rowid = ?", [(r,) for r in rowids])
    conn.execute("DELETE FROM old_revisions WHERE note_id = ?", (note_id,))
    conn.execute("DELETE FROM old_vectors WHERE note_id = ?", (note_id,))


def fill_old_revisions(conn: sqlite3.Connection, history: History, note_id: str | None = None) -> int:
    """Index the kept revision files of live notes (of *note_id* alone if given) that the index
    lacks: after a rebuild, or revisions that came with a pull. Returns how many it added.
    Reads only notes past their first revision with fewer indexed revisions than that."""
    where = " AND n.id = ?" if note_id else ""
    behind = conn.execute(
        "SELECT n.id, n.revision, n.path, t.text FROM note_index n JOIN note_text t ON t.rowid = n.rowid"
        " WHERE n.revision > 1" + where + " AND n.revision - 1 >"
        " (SELECT count(*) FROM old_revisions o WHERE o.note_id = n.id AND o.revision < n.revision)",
        (note_id,) if note_id else (),
    ).fetchall()
    added = 0
    for nid, current, path, text in behind:
        have = {r for (r,) in conn.execute("SELECT revision FROM old_revisions WHERE note_id = ?", (nid,))}
        versions = []
        for revision in range(1, current):
            data = history.load_revision(nid, revision)
            if data is not None:  # else never kept (superseded unseen by an edit outside notewell)
                versions.append((revision, data.decode("utf-8", errors="replace")))
        for revision, title, body in superseded_texts([*versions, (current, text)], path):
            if revision not in have:
                _insert(conn, nid, revision, title, body)
                added += 1
    return added
