"""What the folder remembers beyond the notes themselves, in plain text.

``.notewell-history/journal.jsonl`` is an append-only log, one JSON object a
line, of every note event (add, edit, outside change, move, delete) with ids,
timestamps and authors; ``revisions/<id>/<n>.md`` keeps each superseded text.
Both live in the notes folder, so deleting the index loses nothing, and git
merges the journal with the union driver.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ...errors import StorageError
from .files import NoteFolder

__all__ = ["HISTORY_DIR", "History"]

HISTORY_DIR = ".notewell-history"
_GITATTRIBUTES = "journal.jsonl merge=union\n"


class History:
    """The journal and the kept revisions of one store."""

    def __init__(self, root: Path) -> None:
        self.dir = root / HISTORY_DIR
        self.journal_path = self.dir / "journal.jsonl"
        self._revisions = NoteFolder(self.dir / "revisions")

    def ensure(self) -> None:
        """Create the history folder (idempotent)."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # old revisions of private notes
        attrs = self.dir / ".gitattributes"
        if not attrs.exists():
            attrs.write_text(_GITATTRIBUTES, encoding="utf-8")

    def journal_size(self) -> int:
        try:
            return self.journal_path.stat().st_size
        except FileNotFoundError:
            return 0

    def truncate(self, size: int) -> None:
        """Cut the journal back to *size* bytes (undoing an append whose transaction failed)."""
        if self.journal_size() > size:
            os.truncate(self.journal_path, size)

    def append(self, records: list[dict[str, Any]], *, durable: bool = True) -> int:
        """Append records as lines; returns the journal's size afterwards.

        Callers hold the store's write lock, so appends never interleave.
        """
        if not records:
            return self.journal_size()
        payload = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
        data = payload.encode("utf-8")
        try:
            self.ensure()
            fd = os.open(self.journal_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                # A writer killed mid-append leaves a line without its newline: close it off
                # so the torn line stays one bad line instead of spoiling ours.
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                os.write(fd, data)
                if durable:
                    os.fsync(fd)
                return os.fstat(fd).st_size
            finally:
                os.close(fd)
        except OSError as exc:
            raise StorageError(f"cannot write the journal {self.journal_path}: {exc.strerror}") from exc

    def tail_digest(self, offset: int) -> str:
        """A digest of the 64 bytes before *offset*: whether the journal read up to there is
        still the same file (an append keeps it; a replacement changes it)."""
        if offset <= 0:
            return ""
        try:
            with open(self.journal_path, "rb") as fh:
                fh.seek(max(0, offset - 64))
                chunk = fh.read(min(64, offset))
        except OSError:
            return "?"
        return hashlib.sha256(chunk).hexdigest()[:16]

    def read(self, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Records from byte *offset* on, and the offset after the last complete line.

        Lines that are not JSON objects (a torn append, a bad merge) are skipped.
        """
        try:
            with open(self.journal_path, "rb") as fh:
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return [], 0
        except OSError as exc:
            raise StorageError(f"cannot read the journal {self.journal_path}: {exc.strerror}") from exc
        end = data.rfind(b"\n") + 1
        records = []
        for line in data[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str) and "op" in record:
                records.append(record)
        return records, offset + end

    def save_revision(self, note_id: str, revision: int, data: bytes, *, durable: bool = True) -> None:
        """Keep the text of *revision* before it is superseded."""
        try:
            self._revisions.replace(f"{note_id}/{revision}.md", data, durable=durable)
        except OSError as exc:
            raise StorageError(f"cannot keep revision {revision} of {note_id}: {exc.strerror}") from exc

    def load_revision(self, note_id: str, revision: int) -> bytes | None:
        """The kept text of a revision, or None when it was not kept."""
        try:
            return self._revisions.read(f"{note_id}/{revision}.md")
        except OSError:
            return None
