"""Finding and reading the files conversations come in: a Claude Code projects folder or one
transcript; a folder of Codex or Gemini CLI sessions or one of them; an export's zip, folder or
``conversations*.json``. Only regular files are read, never more than their limits; an export is
read one conversation at a time; a file that cannot be read is reported (on the import's report)
and contributes nothing."""

from __future__ import annotations

import contextlib
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, BinaryIO

from ..errors import InvalidArgumentError, NotFoundError
from ..model.conversations import Conversation, parse_claude_code
from ..model.conversations.json_items import ItemTooLarge, NotAnArray, json_array_items
from .conversation_sources import SOURCE_TABLE, source_named
from .import_report import ERRORS_SHOWN, ImportReport

__all__ = ["EXPORT_READ", "MAX_CONVERSATION", "MAX_FILE", "file_conversations"]

MAX_FILE = 1 << 30  # a transcript or an export member past 1 GiB is refused, not read into memory
MAX_CONVERSATION = 32 << 20  # characters of one conversation's JSON: an export holding a larger one is refused
EXPORT_READ = 3 * MAX_FILE  # an export's members read in all passes (each is read twice, a refused one thrice)
_MEMBERS_MAX = 1000  # conversations*.json files in one export (ChatGPT shards into a few dozen)
_SHAPELESS_AFTER = 10_000  # items read with none of the source's shape: not its export


def _open_regular(path: Path) -> BinaryIO:
    """*path* opened for reading when it is a regular file of at most MAX_FILE bytes: a FIFO, a
    device or a folder is refused at once (opening never waits for a FIFO's writer)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgumentError("not a regular file (a FIFO, a device or a folder): not read")
        if info.st_size > MAX_FILE:
            raise InvalidArgumentError(f"over {MAX_FILE >> 20} MB")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _read_limited(path: Path) -> bytes:
    with _open_regular(path) as f:
        data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise InvalidArgumentError(f"over {MAX_FILE >> 20} MB")
    return data


class _Bounded:
    """A binary stream's read(), refusing more than MAX_FILE bytes of one member (its unpacked
    size is what its zip says, which need not be true) and charging every byte it gives to the
    export's *budget*, whichever pass reads it: what an export can make notewell unpack and parse
    is bounded, however many members, broken or not, it holds."""

    def __init__(self, stream: BinaryIO | IO[bytes], budget: list[int]) -> None:
        self.stream, self.left, self.budget = stream, MAX_FILE, budget

    def read(self, size: int) -> bytes:
        data = self.stream.read(min(size, self.left + 1, self.budget[0] + 1))
        self.left -= len(data)
        self.budget[0] -= len(data)
        if self.left < 0:
            raise InvalidArgumentError(f"over {MAX_FILE >> 20} MB unpacked")
        if self.budget[0] < 0:
            raise InvalidArgumentError(f"the export needs over {EXPORT_READ >> 20:,} MB read: not read further")
        return data


def _session_files(root: Path, pattern: str) -> list[Path]:
    """A folder's session files named like *pattern*, at any depth (Codex files them by date,
    Gemini CLI by project); the path itself when it is not a folder."""
    if not root.is_dir():
        return [root]
    return sorted(p for p in root.rglob(pattern) if not p.is_dir())


def _transcripts(root: Path) -> list[Path]:
    """A Claude Code projects folder's session files (sub-agents' files are part of their session);
    a FIFO or a device among them is listed, to be refused in one line when it is read."""
    if not root.is_dir():
        return [root]  # one transcript: read as such, or refused in one line when it is not a file
    found = [
        p
        for p in root.rglob("*.jsonl")
        if "subagents" not in p.relative_to(root).parts and not p.name.startswith("agent-") and not p.is_dir()
    ]
    return sorted(found)


# open(budget): a member's bytes, each charged to the export's budget (see _Bounded).
Opener = Callable[[list[int]], contextlib.AbstractContextManager[_Bounded]]


@contextlib.contextmanager
def _plain(path: Path, budget: list[int]) -> Iterator[_Bounded]:
    with _open_regular(path) as f:
        if f.read(4) == b"PK\x03\x04":  # a zip's first bytes, yet not a zip zipfile can open
            raise InvalidArgumentError("a damaged zip (cut short while downloading?)")
        f.seek(0)
        yield _Bounded(f, budget)


def _export_members(path: Path) -> Iterator[tuple[str, Opener]]:
    """(name, open) for each ``conversations*.json`` of an export: in a zip, a folder, or the
    file itself; open() gives its bytes, as often as asked, never more than MAX_FILE of them."""
    if path.is_dir():
        for p in sorted(path.glob("conversations*.json")):
            yield str(p), lambda budget, p=p: _plain(p, budget)
        return
    with _open_regular(path) as f:
        if not zipfile.is_zipfile(f):
            yield str(path), lambda budget: _plain(path, budget)
            return
        with zipfile.ZipFile(f) as archive:
            infos = [
                i
                for i in archive.infolist()
                if not i.is_dir()
                and "__MACOSX" not in i.filename
                and Path(i.filename).name.startswith("conversations")
                and Path(i.filename).name.endswith(".json")
            ]
            for info in sorted(infos, key=lambda i: i.filename):

                @contextlib.contextmanager
                def member(budget: list[int], info: zipfile.ZipInfo = info) -> Iterator[_Bounded]:
                    if info.file_size > MAX_FILE:
                        raise InvalidArgumentError(f"over {MAX_FILE >> 20} MB unpacked")
                    with archive.open(info) as fh:
                        yield _Bounded(fh, budget)

                yield f"{path}:{info.filename}", member


# What reading an export member may raise, and how each is told.
_UNREADABLE = (OSError, EOFError, InvalidArgumentError, zipfile.BadZipFile, zlib.error)


def _why(exc: BaseException) -> str:
    if isinstance(exc, NotAnArray):
        kind = {"{": "dict", '"': "str", "t": "bool", "f": "bool", "n": "NoneType"}.get(str(exc), "number")
        return f"a JSON {kind}, not the export's list of conversations"
    if isinstance(exc, ItemTooLarge):
        return f"a conversation of more than {MAX_CONVERSATION >> 20} MB: the file is not imported"
    if isinstance(exc, RecursionError):
        return "nested too deep to read"
    if isinstance(exc, _UNREADABLE):
        return getattr(exc, "message", None) or str(exc)
    return f"not JSON (cut short?): {exc}"


def _survey(source: str, opener: Opener, budget: list[int]) -> tuple[int, int, bool]:
    """Read a member through once, keeping nothing: (objects, items that are not objects,
    whether any object has the source's key). It stops early on a file whose first items are
    none of the source's conversations. Raises what :func:`_why` tells."""
    objects = odd = 0
    shaped = False
    with opener(budget) as stream:
        for item in json_array_items(stream.read, max_item=MAX_CONVERSATION):
            if not isinstance(item, dict):
                odd += 1
            else:
                objects += 1
                shaped = shaped or source_named(source).shape in item
            if not shaped and objects + odd >= _SHAPELESS_AFTER:
                break  # not this source's export: no need to read on to say so
    return objects, odd, shaped


def _export_conversations(
    source: str, name: str, opener: Opener, report: ImportReport, budget: list[int]
) -> Iterator[tuple[str, list[Conversation]]]:
    """A member's conversations, one at a time: read through once to check it whole (a file
    cut short imports nothing), then again to parse, so that memory holds one conversation."""
    before = budget[0]
    try:
        objects, odd, shaped = _survey(source, opener, budget)
    except (ValueError, RecursionError, *_UNREADABLE) as exc:
        report.errors.append((name, _why(exc)))
        return
    if objects and not shaped:
        other = _other_source(source, opener, budget)
        hint = f": is it the {other} export? (notewell import {other} ...)" if other else ""
        report.errors.append((name, f"not a {source} export: no conversation has {source_named(source).shape!r}{hint}"))
        return
    if odd:  # once for the file, not once per item: an export of a million numbers is one mistake
        report.errors.append((name, f"{odd:,} item(s) are not conversation objects"))
    parse = source_named(source).parse
    assert parse is not None  # an export's source reads its conversations
    unreadable = 0
    if not objects:
        return
    if budget[0] < before - budget[0]:  # the parse would spend the budget part-way: a file cut short imports nothing
        report.errors.append((name, f"the export needs over {EXPORT_READ >> 20:,} MB read: not read further"))
        budget[0] = -1
        return
    try:
        with opener(budget) as stream:
            i = -1
            for item in json_array_items(stream.read, max_item=MAX_CONVERSATION):
                if not isinstance(item, dict):
                    continue
                i += 1
                try:
                    conv = parse(item)
                except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
                    unreadable += 1
                    if unreadable <= ERRORS_SHOWN:
                        report.errors.append((f"{name}[{i}]", f"unreadable conversation: {exc}"))
                    continue
                if conv is not None:
                    yield name, [conv]
    except (ValueError, RecursionError, *_UNREADABLE) as exc:  # changed since the first reading
        report.errors.append((name, _why(exc)))
    if unreadable > ERRORS_SHOWN:
        report.errors.append((name, f"and {unreadable - ERRORS_SHOWN:,} more unreadable conversations"))


def _other_source(source: str, opener: Opener, budget: list[int]) -> str | None:
    """The other source whose export this member looks like, if any (for a hint; none when
    reading it again fails, or would spend more than the export's budget)."""
    try:
        others = [s for s in SOURCE_TABLE if s.name != source and s.shape is not None]
        return next((s.name for s in others if _has_key(opener, budget, str(s.shape))), None)
    except (ValueError, RecursionError, *_UNREADABLE):
        return None


def _has_key(opener: Opener, budget: list[int], key: str) -> bool:
    with opener(budget) as stream:
        items = json_array_items(stream.read, max_item=MAX_CONVERSATION)
        return any(isinstance(item, dict) and key in item for item in items)


def file_conversations(source: str, path: Path, report: ImportReport) -> Iterator[tuple[str, list[Conversation]]]:
    """(file, its conversations) for each file of *source* under *path*; unreadable files are reported."""
    if not path.exists():
        raise NotFoundError(f"no such file or folder: {path}")
    read_session = source_named(source).session_file
    if read_session is not None:  # one session a file (Codex, Gemini CLI)
        for file in _session_files(path, source_named(source).pattern):
            report.files += 1
            try:
                conv = read_session(_read_limited(file), file.stem)
            except (OSError, InvalidArgumentError) as exc:
                report.errors.append((str(file), getattr(exc, "message", None) or str(exc)))
                continue
            yield str(file), [conv] if conv is not None else []
        return
    if source_named(source).shape is None:  # Claude Code's transcripts, one file each
        for file in _transcripts(path):
            report.files += 1
            try:
                pieces = parse_claude_code(_read_limited(file), file.stem)
            except (OSError, InvalidArgumentError) as exc:
                report.errors.append((str(file), getattr(exc, "message", None) or str(exc)))
                continue
            yield str(file), pieces
        return
    members = _export_members(path)  # a generator: a zip stays open while its members are read
    budget = [EXPORT_READ]  # bytes left to unpack and read for the whole export, however many members
    while True:
        try:
            name, opener = next(members)
        except StopIteration:
            break
        except (OSError, InvalidArgumentError, zipfile.BadZipFile) as exc:
            report.files += 1
            report.errors.append((str(path), _why(exc)))
            break
        if budget[0] < 0:  # the export read all it may: said once
            if not any("not read further" in why for _, why in report.errors):
                report.errors.append(
                    (str(path), f"the export needs over {EXPORT_READ >> 20:,} MB read: not read further")
                )
            break
        report.files += 1
        if report.files > _MEMBERS_MAX:
            report.errors.append((str(path), f"more than {_MEMBERS_MAX:,} conversations*.json: the rest are not read"))
            break
        yield from _export_conversations(source, name, opener, report, budget)
    if report.files == 0:
        raise InvalidArgumentError(f"{path} holds no conversations*.json (is it the {source} export?)")
