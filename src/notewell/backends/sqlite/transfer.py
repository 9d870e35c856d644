"""Everything a folder store holds, as rows another backend can load (``notewell db import``)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import StorageError
from ...model.header import parse_note
from .files import NoteFolder
from .history import History
from .index import Index

__all__ = ["transfer_rows"]

_TRANSFER_ATTEMPT = (
    "id",
    "project",
    "campaign",
    "author",
    "model",
    "started_at",
    "ended_at",
    "outcome",
    "summary_note",
)


def transfer_rows(index: Index, folder: NoteFolder, history: History) -> dict[str, list[dict[str, Any]]]:
    """Every live note (its text byte for byte, as a string, with its metadata), every
    deleted one the journal remembers, the attempts, the project settings and the reads
    recorded on attempts (with the store's lock held, caught up)."""
    live = []
    for row in index.query(
        "SELECT id, path, title, kind, tags, builds_on, model, summary, author, created_at, updated_at,"
        " revision, attempt_id, note_kind FROM note_index ORDER BY rowid"
    ):
        nid, path, title, kind, tags, builds_on, model, summary, author, created, updated = row[:11]
        try:
            text = folder.read(path).decode("utf-8")
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror}") from exc
        live.append(
            {
                "id": nid,
                "path": path,
                "text": text,
                "title": title,
                "body": parse_note(text).body,
                "kind": kind,
                "tags": json.loads(tags),
                "builds_on": json.loads(builds_on),
                "model": model,
                "summary": summary,
                "author": author,
                "created_at": created,
                "updated_at": updated,
                "revision": row[11],
                "attempt_id": row[12],
                "note_kind": row[13] or "note",
            }
        )
    deleted_at: dict[str, tuple[str, str | None]] = {}
    for record in history.read(0)[0]:
        if record.get("op") in ("delete", "gone"):
            deleted_at[record["id"]] = (record.get("at") or "", record.get("path"))
    gone = [
        {
            "id": nid,
            "path": deleted_at.get(nid, ("", None))[1] or f"{nid}.md",
            "deleted_at": deleted_at.get(nid, ("", None))[0] or updated or created or "",
            "revision": revision,
            "author": author,
            "model": model,
            "created_at": created or "",
            "note_kind": note_kind or "note",
            "attempt_id": attempt_id,
        }
        for nid, author, model, created, updated, revision, note_kind, attempt_id in index.query(
            "SELECT id, author, model, created_at, updated_at, revision, note_kind, attempt FROM journal_meta"
            " WHERE deleted = 1 ORDER BY updated_at"
        )
    ]
    attempts = [
        dict(zip(_TRANSFER_ATTEMPT, row, strict=True))
        for row in index.query(f"SELECT {', '.join(_TRANSFER_ATTEMPT)} FROM attempts ORDER BY started_at")
    ]
    projects = [
        {"name": n, "private": bool(p), "owner": o, "campaign": c}
        for n, p, o, c in index.query("SELECT name, private, owner, campaign FROM projects ORDER BY name")
    ]
    reads = [
        {"attempt": a, "note": n, "at": at}
        for a, n, at in index.query("SELECT attempt, note, at FROM attempt_reads ORDER BY at, attempt, note")
    ]
    return {"live": live, "gone": gone, "attempts": attempts, "projects": projects, "reads": reads}
