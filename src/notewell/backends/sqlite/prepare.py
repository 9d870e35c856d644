"""Reading, checking, hashing and parsing note files for the index.

Measured on the project's two-core machine: parsing on a second thread slowed a
rebuild down (the parser holds the GIL that every SQLite call must win back), and a
worker process gained nothing (two busy processes there get 1.4 cores between them).
So only the reading runs ahead, on a thread; the parsing runs in the indexing thread.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...errors import InvalidNoteError
from ...model.header import parse_note
from ...model.note import check_text, derive_title
from ...model.timestamps import iso_from_ns
from .files import FileState, NoteFolder
from .index import IndexRow, row_fields

__all__ = ["Prepared", "Preparer", "build_row", "prepare_files", "read_note_file"]


@dataclass(slots=True)
class Prepared:
    """One file as read: its text and byte count (or why it cannot be a note), hash and row."""

    text: str | None
    nbytes: int
    error: str | None = None
    sha: str = ""
    row: IndexRow | None = None


def build_row(*, note_id: str, path: str, text: str, sha256: str, state: FileState, meta: dict) -> IndexRow:
    """The index row for one note text and its journal metadata."""
    parsed = parse_note(text)
    fields = row_fields(parsed)
    return IndexRow(
        id=note_id,
        path=path,
        title=derive_title(parsed, path),
        kind=fields["kind"],
        model=fields["model"] or meta.get("model"),
        summary=fields["summary"],
        tags=fields["tags"],
        builds_on=fields["builds_on"],
        supersedes=fields["supersedes"],
        author=meta.get("author"),
        created_at=meta["created_at"],
        updated_at=meta["updated_at"],
        revision=meta["revision"],
        mtime_ns=state.mtime_ns,
        size=state.size,
        sha256=sha256,
        text=text,
        body=parsed.body,
        header=parsed.header,
        extra=parsed.extra,
    )


def read_note_file(
    folder: NoteFolder, path: str, max_bytes: int, raw: bytes | OSError | None = None
) -> tuple[str, bytes] | str:
    """The file's text and bytes (read now unless *raw* has them), or the reason it
    cannot be a note."""
    try:
        if isinstance(raw, OSError):
            raise raw
        data = raw if raw is not None else folder.read(path, max_bytes + 1)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if len(data) > max_bytes:
        # Read only up to the limit and one byte: the size to report is the file's own.
        size = _file_size(folder, path)
        return f"file is {size if size is not None else f'over {max_bytes}'} bytes; the limit is {max_bytes} bytes"
    try:
        text, data = check_text(data, max_bytes=max_bytes)
    except InvalidNoteError as exc:
        if exc.message == "note is empty":
            return data.decode("utf-8"), data
        return exc.message.replace("note ", "file ", 1)
    return text, data


def _file_size(folder: NoteFolder, path: str) -> int | None:
    state = folder.state(path)
    return state.size if state is not None and state.size >= 0 else None


def prepare_files(
    folder: NoteFolder,
    max_bytes: int,
    items: list[tuple[str, FileState]],
    raw: dict[str, bytes | OSError] | None = None,
) -> dict[str, Prepared]:
    """Read (unless *raw* has the bytes), check, hash and parse files. Rows carry no id
    yet, and the file's mtime as their times until the journal says otherwise."""
    out: dict[str, Prepared] = {}
    for path, state in items:
        if state.size < 0:
            continue
        got = read_note_file(folder, path, max_bytes, (raw or {}).get(path))
        if isinstance(got, str):
            out[path] = Prepared(None, -1, error=got)
            continue
        text, data = got
        sha = hashlib.sha256(data).hexdigest()
        at = iso_from_ns(state.mtime_ns)
        meta = {"created_at": at, "updated_at": at, "revision": 1}
        row = build_row(note_id="", path=path, text=text, sha256=sha, state=state, meta=meta)
        out[path] = Prepared(text, len(data), sha=sha, row=row)
    return out


class Preparer:
    """Prepares batches of files in order, reading the next batch's files on a second
    thread while the caller indexes this one (reads wait on the disk, not the GIL)."""

    def __init__(self, folder: NoteFolder, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def _read_raw(self, batch: list[tuple[str, FileState]]) -> dict[str, bytes | OSError]:
        out: dict[str, bytes | OSError] = {}
        for path, state in batch:
            if state.size >= 0:
                try:
                    out[path] = self.folder.read(path, self.max_bytes + 1)  # a huge file is not read whole
                except OSError as exc:
                    out[path] = exc
        return out

    def run(self, batches: list[list[tuple[str, FileState]]]) -> Iterator[dict[str, Prepared]]:
        """The prepared files of each batch, in order."""
        if len(batches) < 2:
            for batch in batches:
                yield prepare_files(self.folder, self.max_bytes, batch)
            return
        with ThreadPoolExecutor(max_workers=1) as pool:
            ahead = pool.submit(self._read_raw, batches[0])
            for number, batch in enumerate(batches):
                raw = ahead.result()
                if number + 1 < len(batches):
                    ahead = pool.submit(self._read_raw, batches[number + 1])
                yield prepare_files(self.folder, self.max_bytes, batch, raw)
