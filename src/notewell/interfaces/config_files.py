"""Reading and rewriting another program's configuration file without losing anything of theirs.

A file is read whole; a JSON file that does not parse is refused (with comments it is JSONC,
which is refused too: rewriting it would drop them), never treated as empty. A change is
written atomically (a reader sees the old file or the new one, never half of either) with the
file's mode kept, after a copy of the old bytes beside it. TOML is changed only inside a block
marked as notewell's, and the whole result must parse before it is written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "CommentedFile",
    "FileChange",
    "dump_json",
    "load_json",
    "load_toml",
    "toml_without_block",
]

BLOCK_START = "# >>> notewell: written by `notewell install`; `notewell uninstall` removes it >>>"
BLOCK_END = "# <<< notewell <<<"
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_MAX_CONFIG = 8 << 20  # configuration files are small; ~/.claude.json holds history and can reach megabytes


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > _MAX_CONFIG:
            raise InvalidArgumentError(f"{path} is over {_MAX_CONFIG >> 20} MB: not a configuration file to rewrite")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"{path} is not UTF-8 text: nothing changed") from None
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {path}: {exc.strerror}") from None


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

    @property
    def changes(self) -> bool:
        return self.by_hand is None and self.old != self.new

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

    def apply(self) -> Path | None:
        """Write the change; returns the backup of the old bytes (None when there was no file)."""
        if not self.changes:
            return None
        link = self.path
        self.path = Path(os.path.realpath(self.path))  # a symlinked file (dotfiles) is changed where it lives
        try:
            return self._write()
        finally:
            self.path = link

    def _write(self) -> Path | None:
        backup = None
        if self.old is not None and self.new is not None:  # a file removed held only notewell's entries
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            backup = self.path.with_name(f"{self.path.name}.notewell-backup-{stamp}")
            n = 1
            while backup.exists():
                n += 1
                backup = self.path.with_name(f"{self.path.name}.notewell-backup-{stamp}-{n}")
            shutil.copy2(self.path, backup)
        if self.new is None:
            self.path.unlink()
            return backup
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mode = self.path.stat().st_mode & 0o777 if self.old is not None else None
        tmp = self.path.with_name(f".{self.path.name}.notewell-{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(self.new)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, self.path)
        return backup
