"""The embedded store's writes of notes: the files, the journal records and the index rows.

Each function runs where the store puts it: :func:`prepare_batch` on a thread of its own
before the transaction (it touches no database), the others inside the index's write
transaction, whose abort hooks put the folder back as it was when the transaction fails.

A new note's file gets its name only after its journal record is written (:func:`place_batch`):
a writer killed in between leaves either a hidden temp file, which no scan adopts and which is
swept, or a record whose file a later open finds and indexes with the author, attempt and kind
the record gives. Before, a file named before its record was adopted as a note made outside
notewell, with no author and no attempt, and so public even when written in a private project.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import ConflictError, NotFoundError, StorageError
from ...model.header import parse_note
from ...model.ids import new_note_id, new_note_ids, used_id_error
from ...model.note import check_text, derive_title
from ...model.timestamps import now_iso
from .files import NoteFolder
from .history import History
from .index import Index, IndexRow
from .notes import journaled_unindexed, used_ids
from .old_revision_rows import keep_old_revision
from .sync import Syncer, build_row

__all__ = [
    "Origin",
    "Prepared",
    "current_bytes",
    "delete_note_file",
    "drop_kept",
    "chosen_ids",
    "drop_staged",
    "edit_note_file",
    "fresh_ids",
    "place_batch",
    "prepare_batch",
]

Origin = dict[str, Any]  # {"attempt": id or None, "note_kind": "note" or "summary"}
Make = Callable[[str], "str | tuple[str, bytes]"]
# The journal records, index rows and staged files (temp file, its note's path) of a batch.
Prepared = tuple[list[dict[str, Any]], list[IndexRow], list[tuple[str, str]]]


def fresh_ids(index: Index, count: int) -> list[str]:
    """Ids never used in this store (checked against the journal)."""
    ids: list[str] = []
    while len(ids) < count:
        candidates = new_note_ids(count - len(ids))
        taken = used_ids(index, candidates).union(ids)
        ids.extend(c for c in candidates if c not in taken)
    return ids


def chosen_ids(index: Index, folder: NoteFolder, chosen: list[str]) -> list[str]:
    """*chosen* when this store never used any of those ids; else ConflictError (the first used).
    An id whose add was journaled and never finished (its writer killed before the file was
    named, and the staged file gone since: no file, no index row, no deletion) is free again,
    so that an importer, whose ids come from its source, can write that note once more."""
    taken = used_ids(index, chosen)
    if taken:
        unfinished = journaled_unindexed(index, sorted(taken))
        taken -= {nid for nid, path in unfinished.items() if not _occupied(folder, path)}
    if taken:
        raise used_id_error(next(c for c in chosen if c in taken))
    return list(chosen)


def _occupied(folder: NoteFolder, relpath: str) -> bool:
    """True when anything (a file, a link, a folder) is at *relpath*, or it is no path of the store."""
    try:
        return os.path.lexists(folder.abspath(relpath))
    except StorageError:
        return True


def prepare_batch(
    folder: NoteFolder,
    chunk: Sequence[tuple[str, bytes]],
    ids: list[str],
    durable: bool,
    author: str | None,
    model: str | None,
    origin: Origin,
    chosen: bool = False,
) -> Prepared:
    """Stage one hidden file per note and sync them, and build the journal records and
    index rows. Touches no database: it runs on a thread. On failure nothing is left.
    *chosen*: the ids were the caller's, so a file in the way is a conflict, not a retry."""
    records: list[dict[str, Any]] = []
    rows: list[IndexRow] = []
    staged: list[tuple[str, str]] = []
    try:
        for (text, data), nid in zip(chunk, ids, strict=True):
            while True:
                path = f"{nid}.md"
                try:
                    tmp, state = folder.stage(path, data, durable=durable)
                    break
                except FileExistsError:
                    if chosen:
                        raise ConflictError(f"a file named {path} is in the store already") from None
                    nid = new_note_id()  # a hand-made file took the name (36^10 ids): try another
                except OSError as exc:
                    raise StorageError(f"cannot write {path}: {exc.strerror}") from exc
            staged.append((tmp, path))
            records.append(_add_record(nid, path, data, author, model, origin))
            at = records[-1]["at"]
            meta = {"author": author, "model": model, "created_at": at, "updated_at": at, "revision": 1}
            row = build_row(note_id=nid, path=path, text=text, sha256=records[-1]["sha256"], state=state, meta=meta)
            row.attempt_id, row.note_kind = origin["attempt"], origin["note_kind"]
            rows.append(row)
    except BaseException:
        drop_staged(staged)
        raise
    if not durable:
        os.sync()  # one flush for the whole batch instead of one per file
    return records, rows, staged


def _add_record(
    nid: str, path: str, data: bytes, author: str | None, model: str | None, origin: Origin
) -> dict[str, Any]:
    record = {
        "op": "add",
        "id": nid,
        "path": path,
        "at": now_iso(),
        "author": author,
        "model": model,
        "rev": 1,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }
    if origin["attempt"]:
        record["attempt"] = origin["attempt"]
    if origin["note_kind"] != "note":
        record["note_kind"] = origin["note_kind"]
    return record


def drop_staged(staged: list[tuple[str, str]]) -> None:
    """Remove staged files that were never placed (best effort)."""
    for tmp, _path in staged:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def place_batch(
    index: Index, folder: NoteFolder, staged: list[tuple[str, str]], *, beside: bool = False
) -> Callable[[], None]:
    """Inside the write transaction, after the batch's journal records: give each staged
    file its name and make the names durable; returns the call that waits for that to be
    done (and raises what it met). With *beside*, the names are given on a thread of their
    own while the caller indexes the batch (links release the GIL); the caller must wait
    before the transaction ends. A transaction that fails afterwards removes the files
    placed and the temp files left."""
    placed: list[str] = []
    failed: list[BaseException] = []

    def unplace() -> None:
        for path in placed:
            folder.remove(path)

    index.on_abort(lambda: drop_staged(staged))
    index.on_abort(unplace)

    def place_all() -> None:
        try:
            for tmp, path in staged:
                try:
                    folder.place(tmp, path)
                except FileExistsError:
                    raise StorageError(f"{path} was created by someone else meanwhile; add the note again") from None
                except OSError as exc:
                    raise StorageError(f"cannot write {path}: {exc.strerror}") from exc
                placed.append(path)
            try:
                folder.sync_dirs(placed)
            except OSError as exc:
                raise StorageError(f"cannot sync the notes folder: {exc.strerror}") from exc
        except BaseException as exc:
            failed.append(exc)

    if not beside:
        place_all()
        thread = None
    else:
        thread = threading.Thread(target=place_all, name="notewell-place", daemon=True)
        thread.start()

    def wait() -> None:
        if thread is not None:
            thread.join()
        if failed:
            raise failed[0]

    return wait


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
    keep_old_revision(index.conn, note_id, revision, current.decode("utf-8", errors="replace"), path, then=text)
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
        meta={
            "author": meta.author,
            "model": meta.model,
            "created_at": meta.created_at,
            "updated_at": meta.updated_at,
            "revision": meta.revision,
        },
    )
    row.attempt_id, row.note_kind = meta.attempt, meta.note_kind or "note"
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
