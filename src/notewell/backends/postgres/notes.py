"""The notes table on PostgreSQL: rows made from a note's text, inserted in bulk, locked,
updated, deleted (into ``gone``) and read back as notes."""

from __future__ import annotations

from typing import Any

from ...errors import NotFoundError, StorageError
from ...model.header import parse_note
from ...model.note import Note, derive_title, note_from_text
from .db import PgDatabase
from .records import PgSnapshot
from .vector_schema import enable_pgvector

__all__ = [
    "NOTE_COLUMNS",
    "added_notes",
    "delete_note",
    "enable_pgvector_if_possible",
    "id_was_used",
    "insert_rows",
    "load_note",
    "lock_note",
    "new_row",
    "note_id_at",
    "note_of",
    "update_note",
]

NOTE_COLUMNS = "id, path, text, author, created_at, updated_at, revision, model, attempt_id, note_kind"


_ROW_COLUMNS = (
    ("id", "id"),
    ("path", "path"),
    ("text", "text"),
    ("title", "title"),
    ("body", "body"),
    ("kind", "kind"),
    ("tags", "tags"),
    ("builds_on", "builds_on"),
    ("model", "model"),
    ("summary", "summary"),
    ("author", "author"),
    ("created_at", "created"),
    ("updated_at", "updated"),
    ("revision", "revision"),
    ("attempt_id", "attempt_id"),
    ("note_kind", "note_kind"),
)


def enable_pgvector_if_possible(db: PgDatabase) -> None:
    """Search a new database with pgvector where its server has it: while the database is
    empty this costs nothing (on a full one it is ``notewell db upgrade``'s long job)."""
    try:
        with db.transaction() as conn:
            enable_pgvector(conn)
    except StorageError:
        pass  # the extension is there but this role may not create it: each server's matrix


def id_was_used(conn: Any, note_id: str) -> bool:
    """Whether a note, live or deleted, has had *note_id* (its revisions outlive it)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM notes WHERE id = %s) OR EXISTS (SELECT 1 FROM revisions WHERE id = %s)",
            (note_id, note_id),
        )
        return bool(cur.fetchone()[0])


def insert_rows(conn: Any, rows: list[dict[str, Any]]) -> None:
    """Insert new notes with their links and first revisions (inside the caller's transaction)."""
    with conn.cursor() as cur:
        # COPY, not one INSERT per note: the rows stream in one statement (measured: a batch
        # of 2,000 notes went in about 30% faster). Row triggers (the embedding queue),
        # constraints and generated columns apply to COPY as to INSERT.
        with cur.copy(f"COPY notes({', '.join(c for c, _ in _ROW_COLUMNS)}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row([r[k] for _, k in _ROW_COLUMNS])
        cur.executemany(
            "INSERT INTO note_links(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(t, r["id"]) for r in rows for t in r["builds_on"]],
        )
        cur.executemany(
            "INSERT INTO note_supersedes(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(t, r["id"]) for r in rows for t in r["supersedes"] if t != r["id"]],
        )
        with cur.copy("COPY revisions(id, revision, text, at, author, op) FROM STDIN") as copy:
            for r in rows:
                copy.write_row((r["id"], r["revision"], r["text"], r["updated"], r["author"], "add"))


def added_notes(conn: Any, ids: list[str], attempt: str | None) -> list[Note]:
    """The notes just added, as get_note gives them to a caller who may see everything, read
    together (one get_note per note was a third of a bulk add)."""
    found = {row[0]: row for row in conn.execute(f"SELECT {NOTE_COLUMNS} FROM notes WHERE id = ANY(%s)", (ids,))}
    backlinks: dict[str, list[dict[str, Any]]] = {}
    for target, b, t, k, u in conn.execute(
        "SELECT l.target, n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN notes n ON n.id = l.source"
        " WHERE l.target = ANY(%s) ORDER BY n.updated_at DESC",
        (ids,),
    ):
        backlinks.setdefault(target, []).append({"id": b, "title": t, "kind": k, "updated_at": u})
    loaded = PgSnapshot(conn).attempt(attempt) if attempt is not None else None
    on_attempt = loaded.to_dict() if loaded else None
    notes = []
    for nid in ids:
        if nid not in found:
            raise NotFoundError(f"no note {nid}")  # deleted by another writer since its commit
        row = found[nid]
        notes.append(note_of(row, backlinks.get(nid, []), on_attempt if row[8] == attempt else None))
    return notes


def note_of(
    row: tuple, backlinks: list[dict[str, Any]], attempt: dict[str, Any] | None, revision: int | None = None
) -> Note:
    """A note from its NOTE_COLUMNS *row* (its text that of *revision*, when given)."""
    nid, path, text, author, created, updated, current, model, attempt_id, note_kind = row
    return note_from_text(
        text,
        path=path,
        model=model,
        id=nid,
        author=author,
        created_at=created,
        updated_at=updated,
        revision=revision or current,
        revisions=current,
        backlinks=backlinks,
        attempt_id=attempt_id,
        note_kind=note_kind or "note",
        attempt=attempt,
    )


def new_row(
    nid: str,
    path: str,
    text: str,
    *,
    author: str | None,
    model: str | None,
    created: str,
    updated: str,
    revision: int = 1,
) -> dict[str, Any]:
    parsed = parse_note(text)
    header = parsed.header or {}
    return {
        "id": nid,
        "path": path,
        "text": text,
        "title": derive_title(parsed, path),
        "body": parsed.body,
        "kind": header.get("kind"),
        "tags": list(header.get("tags", [])),
        "builds_on": list(header.get("builds_on", [])),
        "supersedes": list(header.get("supersedes", [])),
        "model": header.get("model") or model,
        "summary": header.get("summary"),
        "author": author,
        "created": created,
        "updated": updated,
        "revision": revision,
        "attempt_id": None,
        "note_kind": "note",
    }


def load_note(conn: Any, note_id: str, revision: int | None) -> Note:
    """The note (or one of its revisions by number), with every note that builds on it and
    the attempt it was written on."""
    row = conn.execute(f"SELECT {NOTE_COLUMNS} FROM notes WHERE id = %s", (note_id,)).fetchone()
    if row is None:
        gone = conn.execute(
            "SELECT id, path, '', author, created_at, deleted_at, revision, model, attempt_id, note_kind"
            " FROM gone WHERE id = %s",
            (note_id,),
        ).fetchone()
        if gone is None or revision is None:
            hint = " (deleted; its revisions can be read by number)" if gone else ""
            raise NotFoundError(f"no note {note_id}{hint}")
        row = gone
    nid, path, text, author, created, updated, current_rev, model, attempt_id, note_kind = row
    if revision is not None and (revision != current_rev or not text):
        if revision > current_rev:
            raise NotFoundError(f"{note_id} has {current_rev} revision(s); there is no revision {revision}")
        kept = conn.execute(
            "SELECT text, at, author FROM revisions WHERE id = %s AND revision = %s", (note_id, revision)
        ).fetchone()
        if kept is None:
            raise NotFoundError(f"revision {revision} of {note_id} was not kept")
        text, updated, author = kept
    backlinks = [
        {"id": b, "title": t, "kind": k, "updated_at": u}
        for b, t, k, u in conn.execute(
            "SELECT n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN notes n ON n.id = l.source"
            " WHERE l.target = %s ORDER BY n.updated_at DESC",
            (note_id,),
        )
    ]
    attempt = PgSnapshot(conn).attempt(attempt_id) if attempt_id else None
    shown = (nid, path, text, author, created, updated, current_rev, model, attempt_id, note_kind)
    return note_of(shown, backlinks, attempt.to_dict() if attempt else None, revision)


def lock_note(conn: Any, note_id: str) -> tuple[str, int, str, str, str | None, str | None] | None:
    """(text, revision, path, created_at, model, attempt_id) of a note, its row locked for
    update until the transaction ends; None when there is no such note."""
    row = conn.execute(
        "SELECT text, revision, path, created_at, model, attempt_id FROM notes WHERE id = %s FOR UPDATE", (note_id,)
    ).fetchone()
    return tuple(row) if row else None  # type: ignore[return-value]


def update_note(conn: Any, row: dict[str, Any], *, had_supersedes: bool = True) -> None:
    """Write an edited note's *row* (from :func:`new_row`), its links and its new revision
    (*had_supersedes*: whether its text before may have named notes in supersedes)."""
    conn.execute(
        "UPDATE notes SET text = %(text)s, title = %(title)s, body = %(body)s, kind = %(kind)s,"
        " tags = %(tags)s, builds_on = %(builds_on)s, summary = %(summary)s, model = %(model)s,"
        " updated_at = %(updated)s, revision = %(revision)s WHERE id = %(id)s",
        row,
    )
    conn.execute("DELETE FROM note_links WHERE source = %s", (row["id"],))
    for target in row["builds_on"]:
        conn.execute(
            "INSERT INTO note_links(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING", (target, row["id"])
        )
    if had_supersedes:  # most edits touch no supersedes: no statement for them
        conn.execute("DELETE FROM note_supersedes WHERE source = %s", (row["id"],))
    for target in row["supersedes"]:
        if target != row["id"]:
            conn.execute(
                "INSERT INTO note_supersedes(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (target, row["id"]),
            )
    conn.execute(
        "INSERT INTO revisions(id, revision, text, at, author, op) VALUES (%s, %s, %s, %s, %s, 'edit')",
        (row["id"], row["revision"], row["text"], row["updated"], row["author"]),
    )


def delete_note(conn: Any, note_id: str, at: str) -> tuple[str, str, int]:
    """Move a (locked) note's row to ``gone``; its (title, path, revision)."""
    title, path, revision, author, model, created, attempt_id, note_kind = conn.execute(
        "DELETE FROM notes WHERE id = %s RETURNING title, path, revision, author, model, created_at,"
        " attempt_id, note_kind",
        (note_id,),
    ).fetchone()
    conn.execute(
        "INSERT INTO gone(id, path, deleted_at, revision, author, model, created_at, attempt_id, note_kind)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET"
        " deleted_at = EXCLUDED.deleted_at, revision = EXCLUDED.revision",
        (note_id, path, at, revision, author, model, created, attempt_id, note_kind),
    )
    return title, path, revision


def note_id_at(conn: Any, path: str) -> str | None:
    """The id of the live note whose folder-form path is *path*."""
    row = conn.execute("SELECT id FROM notes WHERE path = %s", (path,)).fetchone()
    return str(row[0]) if row else None
