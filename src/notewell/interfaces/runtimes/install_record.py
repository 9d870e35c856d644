"""What ``notewell install`` wrote, so that ``notewell uninstall`` gives back the very bytes that
were there: a file it made is removed (and the folders it made for it, once empty), a file it
changed is put back from the backup it kept, as long as nobody changed the file since (else
uninstall takes notewell's entries out of what is there now). The record is ``installs.json`` in
notewell's state folder (``$NOTEWELL_STATE_DIR``), readable by its owner only; it holds paths and
hashes, never a file's contents."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config_files import is_backup_of
from .hook_sessions import state_dir

__all__ = ["NO_RECORD", "forget", "leftovers", "remember", "restoring"]

_NAME = "installs.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load() -> dict[str, Any]:
    try:
        data = json.loads((state_dir() / _NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(records: dict[str, Any]) -> None:
    folder = state_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = folder / f".{_NAME}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(records, fh, indent=1)
        os.replace(tmp, folder / _NAME)
    except OSError:
        pass  # no record: uninstall takes notewell's entries out, as it does for a file changed since


def remember(path: Path, before: bytes | None, backup: Path | None, after: bytes, made: Sequence[Path] = ()) -> None:
    """*path* (its real location) now holds *after*; before install it held *before* (None: no
    file), kept in *backup*; *made*: the folders install made for it. A file installed again
    keeps its first record's original."""
    key = os.path.realpath(path)
    records = _load()
    earlier = records.get(key)
    if isinstance(earlier, dict) and before is not None and earlier.get("after") == _sha(before):
        earlier["after"] = _sha(after)  # installed over notewell's own entries: the original stays
    elif before is not None and b"notewell" in before:
        # It held notewell's entries already, from an install this record does not know as it
        # stands (changed since, or recorded elsewhere): no pristine original to give back, so
        # uninstall takes notewell's entries out of what is there.
        records.pop(key, None)
    else:
        records[key] = {
            "before": None if before is None else _sha(before),
            "backup": None if backup is None else str(backup),
            "after": _sha(after),
            "made": [str(folder) for folder in made],
        }
    _save(records)


class _Nothing:
    pass


NO_RECORD = _Nothing()


def restoring(path: Path) -> bytes | None | _Nothing:
    """What to put back at *path*: the bytes it held before install (None: remove it), when it
    holds exactly what install wrote and the backup is whole; NO_RECORD otherwise."""
    record = _load().get(os.path.realpath(path))
    if not isinstance(record, dict):
        return NO_RECORD
    try:
        if _sha(Path(path).read_bytes()) != record.get("after"):
            return NO_RECORD  # changed since: notewell's entries are taken out of what is there
        if record.get("before") is None:
            return None
        backup = Path(str(record.get("backup")))
        # Only a backup install made beside this very file: a record pointing elsewhere (edited
        # by hand, or by someone who could write the state folder) never picks what is written.
        if not is_backup_of(backup, Path(os.path.realpath(path))):
            return NO_RECORD
        original = backup.read_bytes()
    except OSError:
        return NO_RECORD
    return original if _sha(original) == record.get("before") else NO_RECORD


def leftovers(path: Path) -> tuple[Path | None, list[Path]]:
    """What install left around *path* besides the file: the backup it kept of the file as it
    found it (None: none), and the folders it made for it, deepest first. Only a backup beside
    the file and folders holding it: a record changed by hand never names anything else."""
    record = _load().get(os.path.realpath(path))
    if not isinstance(record, dict):
        return None, []
    real = Path(os.path.realpath(path))
    named = record.get("backup")
    backup = Path(named) if isinstance(named, str) and is_backup_of(Path(named), real) else None
    made = record.get("made")
    folders = [Path(f) for f in made if isinstance(f, str)] if isinstance(made, list) else []
    return backup, [f for f in folders if f.is_absolute() and f in real.parents and f != Path(f.anchor)]


def forget(path: Path) -> None:
    records = _load()
    with contextlib.suppress(KeyError):
        del records[os.path.realpath(path)]
        _save(records)
