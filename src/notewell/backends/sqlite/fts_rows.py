"""The keyword tables' rows, made from the one copy of each note's text.

notes_fts and titles_fts are contentless: they hold the words' lists and no copy of the
text (the index on disk was 2.4 times raw FTS5's while they held one). FTS5 takes a row out
of a contentless table only given the values it was indexed with, so both the insert and
the removal make those values here, by one function, from what note_index and note_text
keep: the title, the text and where its body begins, and the meta tokens as written.
:func:`keyword_index_problems` checks that the lists are exactly those of the rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ...model.cjk import segment

__all__ = ["delete_fts", "fts_values", "insert_fts_many", "keyword_index_problems"]

_INSERT = "INSERT INTO notes_fts(rowid, title, body, meta) VALUES (?, ?, ?, ?)"
_INSERT_TITLE = "INSERT INTO titles_fts(rowid, title) VALUES (?, ?)"
_REMOVE = "INSERT INTO notes_fts(notes_fts, rowid, title, body, meta) VALUES ('delete', ?, ?, ?, ?)"
_REMOVE_TITLE = "INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', ?, ?)"
_STORED = (
    "SELECT n.title, t.text, t.body_at, t.meta FROM note_index n JOIN note_text t ON t.rowid = n.rowid"
    " WHERE n.rowid = ?"
)
_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"


def fts_values(title: str, text: str, body_at: int, meta: str) -> tuple[str, str, str]:
    """notes_fts's (title, body, meta) of a note: CJK segmented title and body, meta as is."""
    return segment(title), segment(text[body_at:]), meta


def insert_fts_many(conn: sqlite3.Connection, notes: Iterable[tuple[int, str, str, int, str]]) -> None:
    """Index the words of each note (rowid, title, text, body_at, meta), in the caller's transaction."""
    rows = [(rowid, *fts_values(*stored)) for rowid, *stored in notes]
    conn.executemany(_INSERT, rows)
    conn.executemany(_INSERT_TITLE, [(rowid, title) for rowid, title, _body, _meta in rows])


def delete_fts(conn: sqlite3.Connection, rowid: int) -> None:
    """Take a note's words out, from its rows as stored; call it before those rows go."""
    stored = conn.execute(_STORED, (rowid,)).fetchone()
    if stored is None:
        return  # never indexed (the rows are written together, in one transaction)
    values = fts_values(*stored)
    conn.execute(_REMOVE, (rowid, *values))
    conn.execute(_REMOVE_TITLE, (rowid, values[0]))


def _instances(conn: sqlite3.Connection, schema: str, table: str) -> set[tuple]:
    name = f"temp.nw_vocab_{schema}_{table}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5vocab({schema}, {table}, 'instance')")
    try:
        return set(conn.execute(f"SELECT term, doc, col, offset FROM {name}"))
    finally:
        conn.execute(f"DROP TABLE {name}")


def _fresh(conn: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE temp.nw_check USING fts5(title, body, meta, content = '', {_TOKENIZE})")
    conn.execute(f"CREATE VIRTUAL TABLE temp.nw_check_titles USING fts5(title, content = '', {_TOKENIZE})")
    for rowid, *stored in rows:
        values = fts_values(*stored)
        conn.execute("INSERT INTO temp.nw_check(rowid, title, body, meta) VALUES (?, ?, ?, ?)", (rowid, *values))
        conn.execute("INSERT INTO temp.nw_check_titles(rowid, title) VALUES (?, ?)", (rowid, values[0]))


def keyword_index_problems(conn: sqlite3.Connection) -> list[str]:
    """How notes_fts and titles_fts differ from tables made afresh from the stored rows (none:
    every word of every note is where it was indexed, and nothing else is). Reads everything:
    for tests and the crash harness, not for a store in use."""
    rows = conn.execute(
        "SELECT n.rowid, n.title, t.text, t.body_at, t.meta FROM note_index n JOIN note_text t ON t.rowid = n.rowid"
    ).fetchall()
    problems = []
    try:
        _fresh(conn, rows)
        for live, fresh in (("notes_fts", "nw_check"), ("titles_fts", "nw_check_titles")):
            have, want = _instances(conn, "main", live), _instances(conn, "temp", fresh)
            if have != want:
                extra, missing = sorted(have - want)[:3], sorted(want - have)[:3]
                problems.append(
                    f"{live}: {len(have - want)} entries of no row {extra}; {len(want - have)} missing {missing}"
                )
        for table in ("notes_fts", "titles_fts"):
            try:
                conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
            except sqlite3.DatabaseError as exc:
                problems.append(f"FTS5 integrity-check of {table}: {exc}")
    finally:
        conn.execute("DROP TABLE IF EXISTS temp.nw_check")
        conn.execute("DROP TABLE IF EXISTS temp.nw_check_titles")
    return problems
