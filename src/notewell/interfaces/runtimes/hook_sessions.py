"""What the session hooks remember between calls: one small JSON file per agent session.

A runtime calls ``notewell hook ...`` as a fresh process each time, so when a session started,
whether it was reminded and whether a compaction is waiting to be answered live in
``$NOTEWELL_STATE_DIR`` (default ``$XDG_STATE_HOME/notewell`` or ``~/.local/state/notewell``),
under ``hook-sessions/``. The file is named by a hash of the runtime and the session id (the id
comes from the runtime's input, so it never becomes a path), written whole and atomically, and
files untouched for two weeks are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ...settings import setting

__all__ = ["SessionState", "state_dir"]

_KEEP_SECONDS = 14 * 86400
_MAX_BYTES = 64 * 1024  # a state file is a few fields; anything bigger is not ours


def state_dir() -> Path:
    """Where hook state lives: $NOTEWELL_STATE_DIR, else $XDG_STATE_HOME/notewell, else ~/.local/state/notewell."""
    chosen = setting("NOTEWELL_STATE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "notewell"


class SessionState:
    """One session's remembered fields (``started_at``, ``nudged``, ``compacted``, ...)."""

    def __init__(self, runtime: str, session_id: str) -> None:
        digest = hashlib.sha256(f"{runtime}\0{session_id}".encode()).hexdigest()[:32]
        self.folder = state_dir() / "hook-sessions"
        self.path = self.folder / f"{digest}.json"
        self.fields: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read(_MAX_BYTES + 1)
        except OSError:
            return {}
        try:
            loaded = json.loads(data) if len(data) <= _MAX_BYTES else None
        except (ValueError, UnicodeDecodeError):
            loaded = None
        return loaded if isinstance(loaded, dict) else {}  # a damaged file starts the session afresh

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def update(self, **fields: Any) -> bool:
        """Set *fields* and write the file (atomically: a reader sees the old or the new one).
        False when it cannot be written: the state is a convenience, and a hook answers without it."""
        self.fields.update(fields)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.fields, fh)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        self._prune()
        return True

    def _prune(self) -> None:
        cutoff = time.time() - _KEEP_SECONDS
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.name.endswith((".json", ".tmp")) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue  # another hook removed it first
