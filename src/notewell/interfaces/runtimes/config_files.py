"""Reading and rewriting another program's configuration file without losing anything of theirs.

A file is read whole; a JSON file that does not parse is refused (with comments it is JSONC,
which is refused too: rewriting it would drop them), never treated as empty. A change is
written atomically (a reader sees the old file or the new one, never half of either) with the
file's mode kept, after a copy of the old bytes beside it when asked (one backup a file). TOML is
changed only inside a block marked as notewell's, and the whole result must parse before it is
written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidArgumentError, StorageError

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "CommentedFile",
    "FileChange",
    "backup_path",
    "dump_json",
    "is_backup_of",
    "load_json",
    "load_toml",
    "toml_without_block",
]

BLOCK_START = "# >>> notewell: written by `notewell install`; `notewell uninstall` removes it >>>"
BLOCK_END = "# <<< notewell <<<"
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_MAX_CONFIG = 8 << 20  # configuration files are small; ~/.claude.json holds history and can reach megabytes


def _read(path: Path) -> str | None:
    """The text of the configuration file at *path* (None when there is none). Only a regular
    file is read, through a link that leads to one: a link to nothing (writing would make its
    target, anywhere), a device or a FIFO is refused in one line."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {path}: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode) and not os.path.exists(path):
        raise InvalidArgumentError(f"{path} is a link to nothing: notewell makes no file through it; nothing changed")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open must not wait for a writer
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InvalidArgumentError(
                    f"{path} is not a regular file (a device, a FIFO, a folder): nothing changed"
                )
            if info.st_size > _MAX_CONFIG:
                raise InvalidArgumentError(
                    f"{path} is over {_MAX_CONFIG >> 20} MB: not a configuration file to rewrite"
                )
            data = fh.read(_MAX_CONFIG + 1)
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"{path} is not UTF-8 text: nothing changed") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text() reads it


def _without_comments(text: str) -> str:
    """*text* with // and /* */ comments outside strings removed (to tell JSONC from broken JSON)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            m = _JSON_STRING.match(text, i)
            end = m.end() if m else n
            out.append(text[i:end])
            i = end
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def load_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the object, the text) of a JSON file; (None, None) when there is none. A file that is
    not a JSON object is refused: with comments, saying so (rewriting would drop them)."""
    text = _read(path)
    if text is None:
        return None, None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise InvalidArgumentError(f"{path} is nested too deeply to read: nothing changed") from None
    except _DuplicateKey as exc:
        raise InvalidArgumentError(
            f"{path} has the key {exc.args[0]!r} twice in one object, which rewriting would merge: nothing changed"
        ) from None
    except ValueError as exc:
        try:
            json.loads(_without_comments(text))
        except ValueError:
            raise InvalidArgumentError(f"{path} is not valid JSON ({exc}): fix it first; nothing changed") from None
        raise CommentedFile(
            f"{path} has comments, which rewriting it would lose: add notewell's entries by hand"
            " (--dry-run prints them); nothing changed"
        ) from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{path} holds a JSON {type(data).__name__}, not an object: nothing changed")
    try:
        json.dumps(data, allow_nan=False)
    except RecursionError:
        raise InvalidArgumentError(f"{path} is nested too deeply to read: nothing changed") from None
    except ValueError:
        raise InvalidArgumentError(
            f"{path} holds a number too large for JSON (1e999, say), which rewriting would change: nothing changed"
        ) from None
    return data, text


class _DuplicateKey(ValueError):
    pass


class CommentedFile(InvalidArgumentError):
    """A JSON file with comments (JSONC): read, never rewritten."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_INDENT = re.compile(r"\n([ \t]+)\S")


def dump_json(data: dict[str, Any], like: str | None = None) -> str:
    """*data* as JSON text, indented as *like* (the file's old text) was, else by two spaces."""
    found = _INDENT.search(like or "")
    indent: int | str = 2
    if found:
        lead = found.group(1)
        indent = lead if "\t" in lead else len(lead)
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a "\\ud800" escape) cannot be UTF-8: keep it escaped
        text = json.dumps(data, indent=indent, ensure_ascii=True) + "\n"
    if like is not None and "\r\n" in like:
        text = text.replace("\n", "\r\n")  # a Windows file stays one
    return text


def load_toml(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the parsed document, the text) of a TOML file; (None, None) when there is none."""
    text = _read(path)
    if text is None:
        return None, None
    try:
        return tomllib.loads(text), text
    except RecursionError:
        raise InvalidArgumentError(f"{path} is nested too deeply to read: nothing changed") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgumentError(f"{path} is not valid TOML ({exc}): fix it first; nothing changed") from None


_BLOCK_LINE = re.compile(r"\[mcp_servers\.notewell\]|(command|args) = .*|")


def toml_without_block(text: str, path: Path) -> str:
    """*text* with notewell's marked block (and the blank line before it) taken out. A block
    without its end line, or holding lines notewell does not write, is refused: taking it out
    would take what is not notewell's."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped == BLOCK_START:
            if inside:
                raise InvalidArgumentError(f"{path}: notewell's block opens twice (line {number}): fix it by hand")
            inside = True
            if out and not out[-1].strip():
                out.pop()
            continue
        if inside:
            if stripped == BLOCK_END:
                inside = False
            elif not _BLOCK_LINE.fullmatch(stripped):
                raise InvalidArgumentError(
                    f"{path}: line {number} inside notewell's block is not notewell's: move it out of the block"
                    " (or delete the block by hand); nothing changed"
                )
            continue
        out.append(line)
    if inside:
        raise InvalidArgumentError(
            f"{path}: notewell's block has no end line ({BLOCK_END!r}): fix it by hand; nothing changed"
        )
    return "".join(out)


@dataclass
class FileChange:
    """One file's old text (None: it does not exist) and new text (None: remove it)."""

    path: Path
    old: str | None
    new: str | None
    what: str  # what the change is, for the report
    by_hand: str | None = None  # a file notewell may not rewrite: the entries to add to it by hand
    exact: bytes | None = None  # the bytes to write instead of *new* (uninstall putting a file back as it was)
    had_ours: bool = False  # the file held notewell's entries already: not the person's original
    made: list[Path] = field(default_factory=list)  # the folders apply() made for it, deepest first

    @property
    def changes(self) -> bool:
        return self.by_hand is None and (self.old != self.new or self.exact is not None)

    def diff(self) -> str:
        import difflib

        old = (self.old or "").splitlines(keepends=True)
        new = (self.new or "").splitlines(keepends=True)
        before = str(self.path) if self.old is not None else "/dev/null"
        after = str(self.path) if self.new is not None else "/dev/null"
        out = []
        for line in difflib.unified_diff(old, new, before, after):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)

    def check(self) -> None:
        """InvalidArgumentError when the file may not be changed: read-only, or in a folder that is."""
        if not self.changes:
            return
        target = Path(os.path.realpath(self.path))
        if self.old is not None and not os.access(target, os.W_OK):
            raise InvalidArgumentError(f"{self.path} is read-only: nothing changed")
        folder = target.parent
        while not folder.exists():
            folder = folder.parent
        if not os.access(folder, os.W_OK):
            raise InvalidArgumentError(f"cannot write in {folder}: nothing changed")

    def apply(self, *, keep: bool = True) -> Path | None:
        """Write the change; with *keep*, the old bytes are kept first in :func:`backup_path`,
        which is returned (None: no file was there, or none kept)."""
        if not self.changes:
            return None
        link = self.path
        self.path = Path(os.path.realpath(self.path))  # a symlinked file (dotfiles) is changed where it lives
        try:
            return self._write(keep)
        finally:
            self.path = link

    def _write(self, keep: bool) -> Path | None:
        folder, name = self.path.parent, self.path.name
        _sweep_temps(folder, name)
        backup = None
        mode = stat.S_IMODE(os.stat(self.path).st_mode) if self.old is not None else None
        if keep and self.old is not None and self.new is not None:  # a file removed held only notewell's entries
            backup = backup_path(self.path)
            backup.unlink(missing_ok=True)  # one backup a file: an older one held what is there now, or less
            _write_new(backup, self.path.read_bytes(), mode, f"the backup of {self.path}")
        if self.new is None:
            self.path.unlink()
            return backup
        missing = folder
        while not missing.exists():
            self.made.append(missing)
            missing = missing.parent
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.notewell-{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)  # this process's own, from a write that failed before
        try:
            data = self.exact if self.exact is not None else self.new.encode("utf-8")
            _write_new(tmp, data, mode, str(self.path))
            os.replace(tmp, self.path)
        except BaseException:
            if backup is not None:
                backup.unlink(missing_ok=True)  # nothing changed: no backup of it either
            raise
        return backup


def backup_path(path: Path) -> Path:
    """Where the one backup of *path* goes: beside it, ``settings.json.notewell-backup``."""
    return path.with_name(f"{path.name}.notewell-backup")


def is_backup_of(backup: Path, path: Path) -> bool:
    """Whether *backup* is a backup install makes of *path* (its real location): beside it, and
    named by :func:`backup_path` or, before there was one backup a file, with a timestamp."""
    return backup.parent == path.parent and (
        backup.name == f"{path.name}.notewell-backup" or backup.name.startswith(f"{path.name}.notewell-backup-")
    )


def _write_new(path: Path, data: bytes, mode: int | None, what: str) -> None:
    """Write *data* to a new file *path*, made with *mode* (the file it copies or replaces: a
    private file's copy is never readable by others, not even for a moment; else 0644 less the
    umask) and synced; on failure (a full disk) nothing is left and the error is one line."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode & 0o600)
    except OSError as exc:
        raise StorageError(f"cannot write {what}: {exc.strerror}; nothing changed") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise StorageError(f"cannot write {what}: {exc.strerror}; nothing changed") from None


_TEMP = re.compile(r"\.(.+)\.notewell-(\d+)\.tmp")


def _sweep_temps(folder: Path, name: str) -> None:
    """Remove the temp files that installs killed while writing *name* left beside it (their
    process is gone): a copy of a private file must not stay behind."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        m = _TEMP.fullmatch(entry.name)
        if m is None or m[1] != name or int(m[2]) == os.getpid():
            continue
        try:
            os.kill(int(m[2]), 0)
            continue  # its writer still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
