"""The embedded store's writes of notes: the files, the journal records and the index rows.

Each function runs where the store puts it: :func:`prepare_batch` on a thread of its own
before the transaction (it touches no database), the others inside the index's write
transaction, whose abort hooks put the folder back as it was when the transaction fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable
from typing import Any

from ...errors import NotFoundError, StorageError
from ...model.header import parse_note
from ...model.ids import new_note_id
from ...model.note import check_text, derive_title
from ...model.timestamps import now_iso
from .files import NoteFolder
from .history import History
from .index import Index, IndexRow
from .notes import used_ids
from .sync import Syncer, build_row

__all__ = [
    "Origin",
    "current_bytes",
    "delete_note_file",
    "drop_kept",
    "edit_note_file",
    "fresh_ids",
    "prepare_batch",
]

Origin = dict[str, Any]  # {"attempt": id or None, "note_kind": "note" or "summary"}
Make = Callable[[str], "str | tuple[str, bytes]"]


def fresh_ids(index: Index, count: int) -> list[str]:
    """Ids never used in this store (checked against the journal)."""
    ids: list[str] = []
    while len(ids) < count:
        candidates = list({new_note_id() for _ in range(count - len(ids))} - set(ids))
        taken = used_ids(index, candidates)
        ids.extend(c for c in candidates if c not in taken)
    return ids


def prepare_batch(
    folder: NoteFolder,
    chunk: list[tuple[str, bytes]],
    ids: list[str],
    durable: bool,
    author: str | None,
    model: str | None,
    origin: Origin,
) -> tuple[list[dict[str, Any]], list[IndexRow]]:
    """Create one file per note (never over an existing file), sync them, and build
    the journal records and index rows. Touches no database: it runs on a thread."""
    records: list[dict[str, Any]] = []
    rows: list[IndexRow] = []
    for (text, data), nid in zip(chunk, ids, strict=True):
        while True:
            path = f"{nid}.md"
            try:
                state = folder.create(path, data, durable=durable)
                break
            except FileExistsError:
                nid = new_note_id()  # a hand-made file took the name (36^10 ids): try another
            except OSError as exc:
                raise StorageError(f"cannot write {path}: {exc.strerror}") from exc
        at = now_iso()
        sha = hashlib.sha256(data).hexdigest()
        record = {
            "op": "add",
            "id": nid,
            "path": path,
            "at": at,
            "author": author,
            "model": model,
            "rev": 1,
            "sha256": sha,
            "size": len(data),
        }
        if origin["attempt"]:
            record["attempt"] = origin["attempt"]
        if origin["note_kind"] != "note":
            record["note_kind"] = origin["note_kind"]
        records.append(record)
        meta = {"author": author, "model": model, "created_at": at, "updated_at": at, "revision": 1}
        row = build_row(note_id=nid, path=path, text=text, sha256=sha, state=state, meta=meta)
        row.attempt_id, row.note_kind = origin["attempt"], origin["note_kind"]
        rows.append(row)
    if not durable:
        os.sync()  # one flush for the whole batch instead of one per file
    return records, rows


def current_bytes(index: Index, folder: NoteFolder, note_id: str) -> tuple[int, str, int, bytes]:
    """rowid, path, revision and bytes of a note, checked against the file on disk."""
    row = index.row_for_id(note_id)
    if row is None:
        raise NotFoundError(f"no note {note_id}")
    rowid, _nid, path, _mtime, _size, sha, revision = row
    try:
        data = folder.read(path)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from exc
    if hashlib.sha256(data).hexdigest() != sha:
        raise StorageError(f"{path} changed while being written; try again")
    return rowid, path, revision, data


def edit_note_file(
    index: Index,
    folder: NoteFolder,
    history: History,
    sync: Syncer,
    note_id: str,
    make: Make,
    author: str | None,
    *,
    max_bytes: int,
    check_unfrozen: Callable[[str], None],
) -> str | None:
    """Inside the write transaction: replace the note's file with the text *make* returns for
    its current text (kept as a revision first), and write its journal record and index row.
    Returns the file holding the old text until the commit (remove it then), or None."""
    _rowid, path, revision, current = current_bytes(index, folder, note_id)
    check_unfrozen(note_id)
    made = make(current.decode("utf-8", errors="replace"))
    text, data = made if isinstance(made, tuple) else check_text(made, max_bytes=max_bytes)
    sha = hashlib.sha256(data).hexdigest()
    if sha == hashlib.sha256(current).hexdigest():
        return None
    history.save_revision(note_id, revision, current)
    kept = folder.keep(path)
    try:
        state = folder.replace(path, data)
    except OSError as exc:
        if kept:
            os.unlink(kept)
        raise StorageError(f"cannot write {path}: {exc.strerror}") from exc
    if kept:
        index.on_abort(lambda: folder.put_back(path, kept))
    else:
        index.on_abort(lambda: folder.replace(path, current))
    record = {
        "op": "edit",
        "id": note_id,
        "at": now_iso(),
        "author": author,
        "rev": revision + 1,
        "sha256": sha,
        "size": len(data),
    }
    sync.commit_records([record])
    meta = index.meta_for_id(note_id)
    assert meta is not None  # the row read above, in this transaction
    row = build_row(
        note_id=note_id,
        path=path,
        text=text,
        sha256=sha,
        state=state,
        meta={"author": meta[2], "model": meta[3], "created_at": meta[4], "updated_at": meta[5], "revision": meta[6]},
    )
    row.attempt_id, row.note_kind = meta[9], meta[10] or "note"
    index.upsert(row)
    return kept


def drop_kept(kept: str | None) -> None:
    """After the commit: the old text is a revision now."""
    if kept:
        with contextlib.suppress(OSError):
            os.unlink(kept)


def delete_note_file(
    index: Index,
    folder: NoteFolder,
    history: History,
    sync: Syncer,
    note_id: str,
    *,
    check_unfrozen: Callable[[str], None],
) -> dict[str, Any]:
    """Inside the write transaction: remove a note's file (its last text stays in the history
    folder), and write its journal record and drop its index row."""
    rowid, path, revision, current = current_bytes(index, folder, note_id)
    check_unfrozen(note_id)
    title = derive_title(parse_note(current.decode("utf-8")), path)
    history.save_revision(note_id, revision, current)
    try:
        folder.remove(path)
    except OSError as exc:
        raise StorageError(f"cannot delete {path}: {exc.strerror}") from exc
    index.on_abort(lambda: folder.create(path, current))
    sync.commit_records([{"op": "delete", "id": note_id, "path": path, "at": now_iso()}])
    index.delete(rowid)
    return {"id": note_id, "title": title, "path": path, "deleted": True, "revision": revision}
