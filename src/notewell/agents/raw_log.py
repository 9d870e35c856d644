"""The notebook's raw log: tool output stored once, untouched, checked by hash.

Each event is a file ``raw/E0001.txt`` (bytes exactly as given) and a line in
``raw/events.jsonl`` with its id, label, size, sha256 and time. Events are never
edited: reading one checks its hash, and a changed or missing file is reported as
tampered, not served.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError, StorageError
from ..model.numbers import whole_number
from ..model.timestamps import now_iso

__all__ = ["EVENT_RE", "RawEvent", "RawLog", "TamperedError"]

EVENT_RE = re.compile(r"E\d{4,}")
RECALL_MAX = 4000  # characters recall prints at most


class TamperedError(StorageError):
    """A raw event's file no longer matches the hash recorded when it was logged."""

    code = "tampered"


@dataclass(frozen=True, slots=True)
class RawEvent:
    id: str
    label: str
    bytes: int
    sha256: str
    at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RawLog:
    """The raw events of one notebook, in *directory*."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.index = self.dir / "events.jsonl"

    def events(self) -> list[RawEvent]:
        try:
            lines = self.index.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            if line.strip():
                try:
                    event = RawEvent(**json.loads(line))
                except (ValueError, TypeError) as exc:
                    raise TamperedError(f"the raw log's index {self.index} has a broken line: {exc}") from None
                if not isinstance(event.id, str) or not EVENT_RE.fullmatch(event.id):
                    raise TamperedError(f"the raw log's index {self.index} names an event {event.id!r}, not an id")
                out.append(event)
        return out

    def ids(self) -> set[str]:
        return {e.id for e in self.events()}

    def log(self, data: bytes, label: str) -> RawEvent:
        """Store *data* as the next event; returns it."""
        if not isinstance(data, bytes):
            raise InvalidArgumentError("raw output is stored as bytes, exactly as produced")
        label = " ".join(str(label or "").split())
        if not label:
            raise InvalidArgumentError("give the raw output a label: what it is (--label)")
        if len(label) > 200:
            raise InvalidArgumentError("a label is at most 200 characters")
        self.dir.mkdir(parents=True, exist_ok=True)
        events = self.events()
        number = max((int(e.id[1:]) for e in events), default=0) + 1
        event = RawEvent(f"E{number:04d}", label, len(data), hashlib.sha256(data).hexdigest(), now_iso())
        path = self.dir / f"{event.id}.txt"
        try:
            # 'x': an event file is written once; an existing one is never overwritten.
            with open(path, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(path, 0o444)
            with open(self.index, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        except FileExistsError:
            raise StorageError(f"{path} exists already: the raw log's index and files disagree") from None
        except OSError as exc:
            raise StorageError(f"cannot store the raw event: {exc.strerror}") from None
        return event

    def read(self, event_id: str) -> bytes:
        """An event's bytes, after checking them against the recorded hash."""
        if not isinstance(event_id, str) or not EVENT_RE.fullmatch(event_id):
            raise InvalidArgumentError(f"not an event id: {event_id!r} (ids look like E0003)")
        found = {e.id: e for e in self.events()}.get(event_id)
        if found is None:
            raise NotFoundError(f"no raw event {event_id}")
        try:
            data = (self.dir / f"{event_id}.txt").read_bytes()
        except FileNotFoundError:
            raise TamperedError(f"raw event {event_id} is missing: its file was removed") from None
        if hashlib.sha256(data).hexdigest() != found.sha256:
            raise TamperedError(f"raw event {event_id} was changed after it was logged (sha256 differs)")
        return data

    def verify(self) -> list[str]:
        """Every problem with the stored events (an empty list: all intact)."""
        try:
            return list(self.problems().values())
        except TamperedError as exc:
            return [exc.message]

    def problems(self) -> dict[str, str]:
        """The events whose stored output is gone or changed, each with why (TamperedError when
        the index itself is broken)."""
        found: dict[str, str] = {}
        for event in self.events():
            try:
                self.read(event.id)
            except TamperedError as exc:
                found[event.id] = exc.message
        return found

    def recall(self, event_id: str, *, grep: str | None = None, offset: int = 0, limit: int = 2000) -> str:
        """A bounded part of an event: *limit* characters from *offset*, or the lines with *grep*."""
        whole_number("offset", offset, 0)
        whole_number("limit", limit, 1, RECALL_MAX)
        text = self.read(event_id).decode("utf-8", errors="replace")
        if grep:
            lines = [
                f"{n}: {line}" for n, line in enumerate(text.splitlines(), 1) if grep.casefold() in line.casefold()
            ]
            text = "\n".join(lines)
            if not lines:
                return f"(no line of {event_id} contains {grep!r})"
        part = text[offset : offset + limit]
        rest = len(text) - offset - len(part)
        if rest > 0:
            part += f"\n… {rest} more characters (recall {event_id} --offset {offset + len(part)})"
        return part
