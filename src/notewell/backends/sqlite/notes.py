"""The embedded index's reads of single notes: their row, text, revisions and backlinks,
and a whole note as a read returns it (its file, or a kept revision, with what the index knows)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ...errors import NotFoundError, StorageError
from ...model.note import Note, note_from_text
from .files import NoteFolder
from .history import History
from .index import Index, IndexRow

__all__ = [
    "StaleRow",
    "backlinks_of",
    "last_revision",
    "live_note",
    "load_note",
    "note_from_row",
    "note_text",
    "queued_count",
    "revision_info",
    "journaled_unindexed",
    "used_ids",
]

AttemptOf = Callable[[str | None], "dict[str, Any] | None"]


class StaleRow(Exception):
    """A note's file no longer holds the text its index row describes (written meanwhile)."""


def note_text(index: Index, note_id: str) -> str | None:
    """The text the index holds of a live note (None: no such note)."""
    row = index.conn.execute(
        "SELECT t.text FROM note_index n JOIN note_text t ON t.rowid = n.rowid WHERE n.id = ?", (note_id,)
    ).fetchone()
    return row[0] if row else None


def queued_count(index: Index) -> int:
    """Notes waiting to be embedded, for any model."""
    (queued,) = index.conn.execute("SELECT count(*) FROM embed_queue").fetchone()
    return int(queued)


def used_ids(index: Index, candidates: list[str]) -> set[str]:
    """Which of *candidates* the journal has ever given a note (live or deleted)."""
    taken: set[str] = set()
    for i in range(0, len(candidates), 500):
        part = candidates[i : i + 500]
        marks = ",".join("?" * len(part))
        taken.update(r[0] for r in index.query(f"SELECT id FROM journal_meta WHERE id IN ({marks})", part))
    return taken


def journaled_unindexed(index: Index, candidates: list[str]) -> dict[str, str]:
    """Of *candidates*, those the journal says are live that no index row holds: id -> path."""
    found: dict[str, str] = {}
    for i in range(0, len(candidates), 500):
        part = candidates[i : i + 500]
        marks = ",".join("?" * len(part))
        found.update(
            (r[0], r[1])
            for r in index.query(
                f"SELECT j.id, j.path FROM journal_meta j WHERE j.id IN ({marks}) AND j.deleted = 0"
                " AND j.path IS NOT NULL AND NOT EXISTS (SELECT 1 FROM note_index n WHERE n.id = j.id)",
                part,
            )
        )
    return found


def live_note(index: Index, note_id: str) -> list[Any]:
    """[(id, path, author, created_at, updated_at, revision, model, attempt_id, note_kind,
    sha256)] for a live note; [] when there is none."""
    return index.query(
        "SELECT id, path, author, created_at, updated_at, revision, model, attempt_id, note_kind, sha256"
        " FROM note_index WHERE id = ?",
        (note_id,),
    )


def last_revision(index: Index, note_id: str) -> int:
    """The highest revision number the index remembers of a note (0: none)."""
    return int(index.query("SELECT max(revision) FROM revisions WHERE id = ?", (note_id,))[0][0] or 0)


def revision_info(index: Index, note_id: str, revision: int) -> tuple[str | None, str | None] | None:
    """(at, author) of one revision of a note, None when the index has no record of it."""
    rows = index.query("SELECT at, author FROM revisions WHERE id = ? AND revision = ?", (note_id, revision))
    return (rows[0][0], rows[0][1]) if rows else None


def backlinks_of(index: Index, note_id: str) -> list[dict[str, Any]]:
    """Every live note that builds on *note_id*, most recently updated first."""
    return [
        {"id": b, "title": t, "kind": k, "updated_at": u}
        for b, t, k, u in index.query(
            "SELECT n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN note_index n ON n.rowid = l.note"
            " WHERE l.target = ? ORDER BY n.updated_at DESC",
            (note_id,),
        )
    ]


def load_note(
    index: Index,
    folder: NoteFolder,
    history: History,
    note_id: str,
    revision: int | None,
    attempt_of: AttemptOf,
    *,
    checked: bool = False,
) -> Note:
    """The note (its current file, or the kept *revision*), with its metadata and backlinks.

    FileNotFoundError when the index is behind a delete or rename of the file (the caller
    catches up and asks again); with *checked* (a read without the write lock),
    :class:`StaleRow` when the file no longer holds the text the row describes."""
    row = live_note(index, note_id)
    if not row:
        # A deleted (or now unreadable) note: its kept revisions can still be read by number.
        meta = index.meta_for_id(note_id)
        if meta is None or revision is None:
            gone = " (deleted or unreadable; its kept revisions can be read by number)" if meta else ""
            raise NotFoundError(f"no note {note_id}{gone}")
        last = last_revision(index, note_id)
        row = [
            (
                note_id,
                "",
                meta.author,
                meta.created_at,
                meta.updated_at,
                last,
                meta.model,
                meta.attempt,
                meta.note_kind,
                None,
            )
        ]
        deleted = True
    else:
        deleted = False
    nid, path, author, created, updated, current_rev, row_model, attempt_id, note_kind, sha = row[0]
    if not deleted and (revision is None or revision == current_rev):
        try:
            data = folder.read(path)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror}") from exc
        if checked and hashlib.sha256(data).hexdigest() != sha:
            # Read without the lock: the text must be the one whose revision and times the row gives.
            raise StaleRow(path)
        rev = current_rev
    else:
        assert revision is not None
        if revision > current_rev:
            raise NotFoundError(f"{note_id} has {current_rev} revision(s); there is no revision {revision}")
        kept = history.load_revision(note_id, revision)
        if kept is None:
            raise NotFoundError(f"revision {revision} of {note_id} was not kept")
        data = kept
        rev = revision
        info = revision_info(index, note_id, revision)
        if info:
            updated = info[0] or updated
            author = info[1] if info[1] is not None else author
    return note_from_text(
        data.decode("utf-8", errors="replace"),
        path=path,
        model=row_model,
        id=nid,
        author=author,
        created_at=created,
        updated_at=updated,
        revision=rev,
        revisions=current_rev,
        backlinks=backlinks_of(index, note_id),
        attempt_id=attempt_id,
        note_kind=note_kind or "note",
        attempt=attempt_of(attempt_id),
    )


def note_from_row(row: IndexRow, attempt: dict[str, Any] | None) -> Note:
    """The note a write just indexed, from its index row (no file read)."""
    return Note(
        id=row.id,
        path=row.path,
        title=row.title,
        kind=row.kind,
        tags=list(row.tags),
        builds_on=list(row.builds_on),
        model=row.model,
        summary=row.summary,
        author=row.author,
        created_at=row.created_at,
        updated_at=row.updated_at,
        revision=row.revision,
        revisions=row.revision,
        text=row.text,
        header=row.header,
        extra=list(row.extra),
        body=row.body,
        backlinks=[],
        attempt_id=row.attempt_id,
        note_kind=row.note_kind,
        attempt=attempt,
        supersedes=list(row.supersedes),
    )
