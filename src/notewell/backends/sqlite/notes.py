"""The embedded index's reads of single notes: their row, text, revisions and backlinks."""

from __future__ import annotations

from typing import Any

from .index import Index

__all__ = ["backlinks_of", "last_revision", "live_note", "note_text", "queued_count", "revision_info", "used_ids"]


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
