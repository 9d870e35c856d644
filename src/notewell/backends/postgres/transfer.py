"""Moving a store between a folder and PostgreSQL without loss: every note's text byte for
byte, its id, path, author, model and times, every revision, deleted notes' history, the
attempts (and so which notes are frozen), the reads recorded on them, and the project
settings (and so which are private). The servers' tokens do not move: a folder keeps them
beside its index, a database in its own table; make them again where the store now lives.

The folder gets what the embedded store itself would have written: the notes, the journal
(``.notewell-history/journal.jsonl``) and the superseded texts, so that opening it gives
the same ids, revisions and authors. Loading reads the folder through the embedded store.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Protocol

from ...errors import InvalidArgumentError, StorageError
from ...model.note import superseded_texts
from ..sqlite.files import NoteFolder
from ..sqlite.history import HISTORY_DIR, History
from .db import PgDatabase, supersedes_of

__all__ = ["TransferSource", "check_empty", "export_folder", "import_folder"]


def export_folder(db: PgDatabase, folder: str | os.PathLike[str]) -> dict[str, int]:
    """Write the database's store into *folder* (new or empty). Returns counts."""
    root = Path(folder)
    if root.exists() and (any(root.rglob("*.md")) or (root / HISTORY_DIR).exists()):
        raise InvalidArgumentError(f"{root} already holds notes; export into a new or empty folder")
    root.mkdir(parents=True, exist_ok=True)
    notes = NoteFolder(root)
    history = History(root)
    history.ensure()
    records: list[dict[str, Any]] = []
    counts = {"notes": 0, "revisions": 0, "deleted": 0}
    with db.transaction() as conn:
        live = conn.execute(
            "SELECT id, path, text, revision, model, attempt_id, note_kind FROM notes ORDER BY seq"
        ).fetchall()
        gone = conn.execute(
            "SELECT id, path, deleted_at, revision, model, attempt_id, note_kind FROM gone ORDER BY deleted_at"
        ).fetchall()
        attempts = conn.execute(
            "SELECT id, project, campaign, author, model, started_at, ended_at, outcome, summary_note"
            " FROM attempts ORDER BY started_at"
        ).fetchall()
        for aid, project, campaign, author, model, started, _ended, _outcome, _summary in attempts:
            records.append(
                {
                    "op": "attempt",
                    "id": aid,
                    "project": project,
                    "campaign": campaign,
                    "author": author,
                    "model": model,
                    "at": started,
                }
            )
        for name, private, owner, campaign in conn.execute(
            "SELECT name, private, owner, campaign FROM projects ORDER BY name"
        ):
            record = {"op": "project", "id": name, "private": bool(private)}
            record.update({k: v for k, v in (("owner", owner), ("campaign", campaign)) if v is not None})
            records.append(record)
        for nid, path, text, current, model, attempt_id, note_kind in live:
            _revisions(conn, history, records, nid, path, model, attempt_id, note_kind, keep_below=current)
            try:
                notes.create(path, text.encode("utf-8"), durable=False)
            except (OSError, ValueError) as exc:
                raise StorageError(f"cannot write {path}: {exc}") from exc
            counts["notes"] += 1
            counts["revisions"] += current
        for nid, path, deleted_at, last, model, attempt_id, note_kind in gone:
            _revisions(conn, history, records, nid, path, model, attempt_id, note_kind, keep_below=last + 1)
            records.append({"op": "delete", "id": nid, "path": path, "at": deleted_at})
            counts["deleted"] += 1
            counts["revisions"] += last
        for attempt_id, note_id, at in conn.execute(
            "SELECT attempt, note, at FROM attempt_reads ORDER BY at, attempt, note"
        ):
            records.append({"op": "read", "id": note_id, "attempt": attempt_id, "at": at})
    for aid, _project, _campaign, _author, _model, _started, ended, outcome, summary in attempts:
        if ended is not None:
            record = {"op": "attempt_end", "id": aid, "outcome": outcome, "at": ended}
            if summary:
                record["summary"] = summary
            records.append(record)
    history.append(records)
    return counts


def _revisions(
    conn: Any,
    history: History,
    records: list[dict[str, Any]],
    nid: str,
    path: str,
    model: str | None,
    attempt_id: str | None,
    note_kind: str | None,
    *,
    keep_below: int,
) -> None:
    """Journal records for each revision of a note, keeping the texts of those below *keep_below*."""
    for rev, text, at, author in conn.execute(
        "SELECT revision, text, at, author FROM revisions WHERE id = %s ORDER BY revision", (nid,)
    ):
        data = text.encode("utf-8")
        record: dict[str, Any] = {
            "op": "add" if rev == 1 else "edit",
            "id": nid,
            "at": at,
            "author": author,
            "rev": rev,
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
        if rev == 1:
            record.update({"path": path, "model": model})
            if attempt_id:
                record["attempt"] = attempt_id
            if note_kind and note_kind != "note":
                record["note_kind"] = note_kind
        records.append(record)
        if rev < keep_below:
            history.save_revision(nid, rev, data, durable=False)


class TransferSource(Protocol):
    """A folder store as :func:`import_folder` reads it (the embedded store is one)."""

    def transfer_rows(self) -> dict[str, list[dict[str, Any]]]: ...

    def history(self, note_id: str) -> list[dict[str, Any]]: ...

    def kept_revision(self, note_id: str, revision: int) -> bytes | None: ...


def check_empty(db: PgDatabase) -> None:
    """InvalidArgumentError unless the database holds no notes, live or deleted."""
    with db.transaction() as conn:
        if conn.execute("SELECT exists(SELECT 1 FROM notes) OR exists(SELECT 1 FROM gone)").fetchone()[0]:
            raise InvalidArgumentError("the database already holds notes; import into an empty one")


def import_folder(db: PgDatabase, source: TransferSource) -> dict[str, int]:
    """Load the folder store *source* into an empty database (see :func:`check_empty`),
    history and all. Returns counts."""
    counts = {"notes": 0, "revisions": 0, "deleted": 0}
    rows = source.transfer_rows()
    live, gone = rows["live"], rows["gone"]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO attempts(id, project, campaign, author, model, started_at, ended_at, outcome,"
            " summary_note) VALUES (%(id)s, %(project)s, %(campaign)s, %(author)s, %(model)s,"
            " %(started_at)s, %(ended_at)s, %(outcome)s, %(summary_note)s)",
            rows["attempts"],
        )
        cur.executemany(
            "INSERT INTO projects(name, private, owner, campaign) VALUES"
            " (%(name)s, %(private)s, %(owner)s, %(campaign)s)",
            rows["projects"],
        )
        cur.executemany(
            "INSERT INTO attempt_reads(attempt, note, at) VALUES (%(attempt)s, %(note)s, %(at)s)", rows["reads"]
        )
        for row in live:
            nid = row["id"]
            versions = _kept_versions(source, nid, row["revision"], row["text"])
            conn.execute(
                "INSERT INTO notes(id, path, text, title, body, kind, tags, builds_on, model, summary, author,"
                " created_at, updated_at, revision, attempt_id, note_kind) VALUES (%(id)s, %(path)s, %(text)s,"
                " %(title)s, %(body)s, %(kind)s, %(tags)s, %(builds_on)s, %(model)s, %(summary)s, %(author)s,"
                " %(created_at)s, %(updated_at)s, %(revision)s, %(attempt_id)s, %(note_kind)s)",
                row,
            )
            for target in row["builds_on"]:
                conn.execute(
                    "INSERT INTO note_links(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING", (target, nid)
                )
            for target in supersedes_of(nid, row["text"]):
                conn.execute(
                    "INSERT INTO note_supersedes(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING", (target, nid)
                )
            _insert_revisions(conn, nid, versions)
            _insert_old_revisions(conn, nid, row["path"], versions, row["revision"])
            counts["notes"] += 1
            counts["revisions"] += len(versions)
        for row in gone:
            versions = _kept_versions(source, row["id"], row["revision"], None)
            conn.execute(
                "INSERT INTO gone(id, path, deleted_at, revision, author, model, created_at, attempt_id,"
                " note_kind) VALUES (%(id)s, %(path)s, %(deleted_at)s, %(revision)s, %(author)s, %(model)s,"
                " %(created_at)s, %(attempt_id)s, %(note_kind)s)",
                row,
            )
            _insert_revisions(conn, row["id"], versions)
            counts["deleted"] += 1
            counts["revisions"] += len(versions)
    return counts


Version = tuple[int, str, str, str | None, str]  # revision, text, at, author, op


def _kept_versions(source: TransferSource, nid: str, current: int, text: str | None) -> list[Version]:
    """(revision, text, at, author, op) of every revision whose text the folder kept."""
    out = []
    for h in source.history(nid):
        if h["op"] == "delete":
            continue  # the deletion itself: the note's row in gone says it
        rev = h["revision"]
        if rev == current and text is not None:
            body = text
        else:
            data = source.kept_revision(nid, rev)
            if data is None:
                continue  # never kept (an outside edit superseded it unseen)
            body = data.decode("utf-8")
        out.append((rev, body, h["at"] or "", h["author"], "add" if rev == 1 else "edit"))
    return out


def _insert_old_revisions(conn: Any, nid: str, path: str, versions: list[Version], current: int) -> None:
    """A live note's superseded revisions, searchable (what the notes trigger writes on an edit)."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO old_revisions(id, revision, title, body) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [(nid, *kept) for kept in superseded_texts([(v[0], v[1]) for v in versions if v[0] <= current], path)],
        )


def _insert_revisions(conn: Any, nid: str, versions: list[Version]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO revisions(id, revision, text, at, author, op) VALUES (%s, %s, %s, %s, %s, %s)",
            [(nid, *v) for v in versions],
        )
