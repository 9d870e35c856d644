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

__all__ = ["BLOCK_END", "BLOCK_START", "FileChange", "dump_json", "load_json", "load_toml", "toml_without_block"]

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
        data = json.loads(text)
    except ValueError as exc:
        try:
            json.loads(_without_comments(text))
        except ValueError:
            raise InvalidArgumentError(f"{path} is not valid JSON ({exc}): fix it first; nothing changed") from None
        raise InvalidArgumentError(
            f"{path} has comments, which rewriting it would lose: add notewell's entries by hand"
            " (--dry-run prints them); nothing changed"
        ) from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{path} holds a JSON {type(data).__name__}, not an object: nothing changed")
    return data, text


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def load_toml(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the parsed document, the text) of a TOML file; (None, None) when there is none."""
    text = _read(path)
    if text is None:
        return None, None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgumentError(f"{path} is not valid TOML ({exc}): fix it first; nothing changed") from None


def toml_without_block(text: str) -> str:
    """*text* with notewell's marked block (and the blank line before it) taken out."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for line in lines:
        stripped = line.strip()
        if stripped == BLOCK_START:
            inside = True
            if out and not out[-1].strip():
                out.pop()
            continue
        if inside:
            if stripped == BLOCK_END:
                inside = False
            continue
        out.append(line)
    return "".join(out)


@dataclass
class FileChange:
    """One file's old text (None: it does not exist) and new text (None: remove it)."""

    path: Path
    old: str | None
    new: str | None
    what: str  # what the change is, for the report

    @property
    def changes(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        import difflib

        old = (self.old or "").splitlines(keepends=True)
        new = (self.new or "").splitlines(keepends=True)
        before = str(self.path) if self.old is not None else "/dev/null"
        after = str(self.path) if self.new is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, before, after))

    def apply(self) -> Path | None:
        """Write the change; returns the backup of the old bytes (None when there was no file)."""
        if not self.changes:
            return None
        backup = None
        if self.old is not None:
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
