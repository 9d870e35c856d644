"""Bringing conversations from Claude Code, ChatGPT and claude.ai into a store, again and again.

``import_conversations(store, source, path)`` finds the source's files (a Claude Code projects
folder or one transcript; an export's zip, folder or ``conversations*.json``), reads each one
whole before writing anything from it, and writes one note per conversation (parts, when it is
long) on the project named after the source (on one attempt left running, so that the notes
stay the owner's to edit or delete). A note's id comes from the source's
own id, so importing again finds what it wrote before: a conversation that grew gets a new part
with only the turns after the last one kept; one already complete, or deleted here since, is
left as it is. A file that cannot be read is reported and contributes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from ..errors import ConflictError, InvalidArgumentError, NotewellError, NotFoundError
from ..model.conversations import (
    Conversation,
    as_imported,
    conversation_parts,
    import_digest,
    merged_sessions,
    parse_chatgpt,
    parse_claude_ai,
    parse_claude_code,
)
from ..model.conversations.json_items import ItemTooLarge, NotAnArray, json_array_items
from ..model.header import parse_note
from ..model.ids import derived_note_id
from .contract import NoteStore

__all__ = ["SOURCES", "ImportReport", "default_path", "import_conversations", "part_note_id"]

SOURCES = ("claude-code", "chatgpt", "claude")
_SHAPE = {"chatgpt": "mapping", "claude": "chat_messages"}  # the key every conversation of an export has
MAX_FILE = 1 << 30  # a transcript or an export member past 1 GiB is refused, not read into memory
MAX_CONVERSATION = 32 << 20  # characters of one conversation's JSON: an export holding a larger one is refused
_EXPORT_READ = 3 * MAX_FILE  # an export's members read in all passes (each is read twice, a refused one thrice)
_MEMBERS_MAX = 1000  # conversations*.json files in one export (ChatGPT shards into a few dozen)
_SHAPELESS_AFTER = 10_000  # items read with none of the source's shape: not its export
_ID_MAX = 200
_ERRORS_PER_FILE = 20
IMPORT_MODEL = "notewell-import"  # marks the attempt imports write on


@dataclass
class ImportReport:
    """What an import did: files read, conversations found, notes written, and what failed."""

    source: str
    project: str
    files: int = 0
    conversations: int = 0  # found with at least one request
    new: int = 0  # conversations imported for the first time
    continued: int = 0  # imported before, grown since: a part added
    unchanged: int = 0
    changed_in_place: int = 0  # earlier turns differ (edited, another branch): kept as imported
    deleted_here: int = 0  # imported before and deleted from the store since: not brought back
    notes: int = 0  # notes written
    elsewhere: int = 0  # of them, on the project their conversation was first imported on, not *project*
    strays: int = 0  # turns of a session held here, found only in other sessions' files: not imported
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file or conversation, why)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["errors"] = [{"where": w, "error": e} for w, e in self.errors]
        return out


def part_note_id(source: str, source_id: str, number: int) -> str:
    """The note id of part *number* of a conversation: the same every import, in every store."""
    return derived_note_id(f"import:{source}:{source_id}:{number}")


def default_path(source: str) -> Path | None:
    """Where *source* keeps its files when no path is given (Claude Code's projects folder)."""
    if source == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
        return Path(base) / "projects"
    return None


# -- finding and reading the source's files ------------------------------------------------


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
            raise InvalidArgumentError(f"the export needs over {_EXPORT_READ >> 20:,} MB read: not read further")
        return data


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
                shaped = shaped or _SHAPE[source] in item
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
        report.errors.append((name, f"not a {source} export: no conversation has {_SHAPE[source]!r}{hint}"))
        return
    if odd:  # once for the file, not once per item: an export of a million numbers is one mistake
        report.errors.append((name, f"{odd:,} item(s) are not conversation objects"))
    parse = parse_chatgpt if source == "chatgpt" else parse_claude_ai
    unreadable = 0
    if not objects:
        return
    if budget[0] < before - budget[0]:  # the parse would spend the budget part-way: a file cut short imports nothing
        report.errors.append((name, f"the export needs over {_EXPORT_READ >> 20:,} MB read: not read further"))
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
                    if unreadable <= _ERRORS_PER_FILE:
                        report.errors.append((f"{name}[{i}]", f"unreadable conversation: {exc}"))
                    continue
                if conv is not None:
                    yield name, [conv]
    except (ValueError, RecursionError, *_UNREADABLE) as exc:  # changed since the first reading
        report.errors.append((name, _why(exc)))
    if unreadable > _ERRORS_PER_FILE:
        report.errors.append((name, f"and {unreadable - _ERRORS_PER_FILE:,} more unreadable conversations"))


def _other_source(source: str, opener: Opener, budget: list[int]) -> str | None:
    """The other source whose export this member looks like, if any (for a hint; none when
    reading it again fails, or would spend more than the export's budget)."""
    try:
        return next((s for s in _SHAPE if s != source and _has_key(opener, budget, _SHAPE[s])), None)
    except (ValueError, RecursionError, *_UNREADABLE):
        return None


def _has_key(opener: Opener, budget: list[int], key: str) -> bool:
    with opener(budget) as stream:
        items = json_array_items(stream.read, max_item=MAX_CONVERSATION)
        return any(isinstance(item, dict) and key in item for item in items)


def _file_conversations(source: str, path: Path, report: ImportReport) -> Iterator[tuple[str, list[Conversation]]]:
    """(file, its conversations) for each file of *source* under *path*; unreadable files are reported."""
    if not path.exists():
        raise NotFoundError(f"no such file or folder: {path}")
    if source == "claude-code":
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
    budget = [_EXPORT_READ]  # bytes left to unpack and read for the whole export, however many members
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
                    (str(path), f"the export needs over {_EXPORT_READ >> 20:,} MB read: not read further")
                )
            break
        report.files += 1
        if report.files > _MEMBERS_MAX:
            report.errors.append((str(path), f"more than {_MEMBERS_MAX:,} conversations*.json: the rest are not read"))
            break
        yield from _export_conversations(source, name, opener, report, budget)
    if report.files == 0:
        raise InvalidArgumentError(f"{path} holds no conversations*.json (is it the {source} export?)")


# -- writing ------------------------------------------------------------------------------


def _header_extras(text: str) -> dict[str, str]:
    out = {}
    for line in parse_note(text).extra:
        key, _, raw = line.partition(":")
        raw = raw.strip()
        try:
            value = json.loads(raw) if raw.startswith('"') else raw
        except ValueError:
            value = raw
        out[key.strip()] = str(value)
    return out


@dataclass
class _Kept:
    """What the store holds of a conversation: how many parts, the last one's header extras and
    text, and the attempt the parts were written on (their project: where new parts go too)."""

    count: int = 0
    extras: dict[str, str] = field(default_factory=dict)
    text: str = ""
    attempt: dict[str, Any] | None = None


def _kept_parts(store: NoteStore, source: str, source_id: str) -> _Kept:
    kept = _Kept()
    while True:
        try:
            note = store.get_note(part_note_id(source, source_id, kept.count + 1))
        except NotFoundError:
            return kept
        kept = _Kept(kept.count + 1, _header_extras(note.text), note.text, note.attempt)


def _last_part_start(conv: Conversation, extras: dict[str, str]) -> tuple[int, int] | None:
    """Where the last part kept starts and ends in ``conv.turns`` (its turns are written again,
    with any that came after); None when the turns it holds are not where they were (edited,
    another branch). Found by its last message's id where it has one: the turns before it may
    have been counted otherwise (a resumed session's copied turns, left out since)."""
    first, _, upto = extras.get("messages", "").partition("-")
    if not (first.isdigit() and upto.isdigit()) or not 1 <= int(first) <= int(upto):
        return None
    last = extras.get("last_message")
    shift = 0
    at_place = int(upto) <= len(conv.turns) and conv.turns[int(upto) - 1].ident == last
    if last and not at_place:
        where = [i for i, t in enumerate(conv.turns) if t.ident == last]
        if len(where) != 1:
            return None  # gone, or not one place to tell
        shift = where[0] + 1 - int(upto)
    # A part counted turns this file does not hold (copied from a session it resumed, which
    # earlier versions kept; or a continuation file without the session's start): start 0 says
    # so with a negative start, and the caller then only adds what comes after the part.
    start, end = int(first) - 1 + shift, int(upto) + shift
    if end < 1 or end > len(conv.turns):
        return None
    return start, end


_RUN = "\x00run"  # the run's own attempt, on the project asked for (started at the first write)


class _Writer:
    """Writes the parts of many conversations in batches (one transaction per attempt written
    on), and tells the report what each conversation came to."""

    BATCH = 200

    def __init__(self, store: NoteStore, report: ImportReport, author: str) -> None:
        self.store, self.report, self.author = store, report, author
        self.runs: dict[str, str] = {}  # project -> the running import attempt written on there
        self.project_of: dict[str | None, str | None] = {None: None}  # attempt written on -> its project
        # (imported before, [(id, text)], what, attempt id, _RUN, or None for no attempt)
        self.pending: list[tuple[bool, list[tuple[str, str]], str, str | None]] = []
        self.size = 0

    def add(
        self,
        conv: Conversation,
        before: bool,
        parts: list[tuple[str, str]],
        replace: tuple[str, str] | None = None,
        attempt: str | None = _RUN,
    ) -> None:
        """Write *parts* (id, text) on *attempt*; first, with *replace*, put a new text in a kept part."""
        if replace is not None:
            try:
                self.store.edit_note(replace[0], replace[1])
            except NotewellError as exc:
                self.report.errors.append((f"{conv.source} conversation {conv.source_id}", exc.message))
                return
            self.report.notes += 1  # written again: a new revision
            self.report.elsewhere += self.project_of.get(attempt if attempt != _RUN else None) != self.report.project
            if not parts:
                self.report.continued += 1
                return
        self.pending.append((before, parts, f"{conv.source} conversation {conv.source_id}", attempt))
        self.size += len(parts)
        if self.size >= self.BATCH:
            self.flush()

    def home(self, attempt: dict[str, Any] | None) -> str | None:
        """The attempt a conversation's new parts go on: that of its parts already here while it
        runs, else the running import attempt of their project (never another project: its
        visibility may differ); None when they are on none."""
        if attempt is None:
            return None
        if attempt.get("running"):
            self.project_of[str(attempt["id"])] = str(attempt["project"])
            return str(attempt["id"])
        return self.standing(str(attempt["project"]))

    def standing(self, project: str) -> str:
        if project not in self.runs:
            self.runs[project] = _standing_attempt(self.store, project, self.author)
            self.project_of[self.runs[project]] = project
        return self.runs[project]

    def flush(self) -> None:
        pending, self.pending, self.size = self.pending, [], 0
        groups: dict[str | None, list[tuple[bool, list[tuple[str, str]], str]]] = {}
        for before, parts, what, attempt in pending:
            run = self.standing(self.report.project) if attempt == _RUN else attempt
            groups.setdefault(run, []).append((before, parts, what))
        for run, group in groups.items():
            written = self.report.notes
            self._write(run, group)
            if self.project_of.get(run) != self.report.project:
                self.report.elsewhere += self.report.notes - written

    def _write(self, run: str | None, pending: list[tuple[bool, list[tuple[str, str]], str]]) -> None:
        parts = [p for _, ps, _ in pending for p in ps]
        try:
            self.store.add_notes([t for _, t in parts], attempt=run, note_ids=[i for i, _ in parts])
            for before, ps, _ in pending:
                self._count(before, len(ps))
            return
        except NotewellError:
            pass  # a part deleted here once, or one the store refuses: one by one, to tell which
        for before, ps, where in pending:
            try:
                for note_id, text in ps:
                    self.store.add_note(text, attempt=run, note_id=note_id)
                    self.report.notes += 1
            except ConflictError:
                self.report.deleted_here += 1  # its id was used: it was here and has been deleted
                continue
            except NotewellError as exc:
                self.report.errors.append((where, exc.message))  # this one only: the rest go in
                continue
            self._count(before, 0)

    def _count(self, before: bool, notes: int) -> None:
        self.report.notes += notes
        if before:
            self.report.continued += 1
        else:
            self.report.new += 1


@dataclass
class _Session:
    """A Claude Code session as this run found it: its pieces put together, a file it was read
    from (its own, when any), what the store holds of it, and the sessions whose lines its own
    files also hold (those it resumed: a new one goes where they are, when no project is asked)."""

    name: str
    conv: Conversation
    kept: _Kept
    resumed: list[str]


def _claude_code_sessions(
    store: NoteStore,
    files: Iterator[tuple[str, list[Conversation]]],
    report: ImportReport,
    copied: set[str],
    placed: dict[str, tuple[str, dict[str, Any] | None]],
) -> list[_Session]:
    """Every session of the run, oldest first (a resumed one after the one it repeats), each
    with its pieces from every file put together. A session the store holds takes lines from
    another session's file only when its own file is read too, or when those lines hold the
    last message kept (a copy that continues it): a file cannot add turns to a session held
    here by claiming its id (such turns are counted as strays). The message ids of sessions
    held here go into *copied* before anything is written, so that a new session sharing them
    (a fork, a copy under another id) leaves them where they are; where each is goes into
    *placed* (its last turn's time, the attempt its notes are on)."""
    groups: dict[str, list[tuple[str, Conversation]]] = {}
    beside: dict[str, list[Conversation]] = {}  # a session -> other sessions' pieces in its own files
    for name, pieces in files:
        for piece in pieces:
            groups.setdefault(piece.source_id, []).append((name, piece))
            if piece.own_file:
                beside.setdefault(piece.source_id, []).extend(p for p in pieces if p.source_id != piece.source_id)
    kept_of = {sid: _kept_session(store, sid, group) for sid, group in groups.items()}
    sessions = []
    for sid, group in groups.items():
        key, kept = kept_of[sid]
        own = [(name, p) for name, p in group if p.own_file]
        if kept.count and not own:
            report.strays += sum(len(p.turns) for _, p in group if not _continues(p, kept))
            group = [(name, p) for name, p in group if _continues(p, kept)]
        conv = merged_sessions([p for _, p in group])
        if conv is None:
            continue
        if kept.count:
            copied.update(t.ident for t in conv.turns if t.ident)
            placed[sid] = (_last_time(conv), kept.attempt)
        conv.source_id = key
        # The sessions it resumed: new here, or held here and truly copied (their last message kept is in it).
        resumed = {p.source_id for p in beside.get(sid, ()) if _continues(p, kept_of[p.source_id][1])}
        sessions.append(_Session((own or group)[0][0], conv, kept, sorted(resumed)))
    # Earliest turn, then latest: a file that extends another (a resumed session) after it.
    sessions.sort(
        key=lambda s: (
            min((t.at for t in s.conv.turns if t.at), default="~"),
            max((t.at for t in s.conv.turns if t.at), default="~"),
            s.conv.source_id,
        )
    )
    return sessions


def _kept_session(store: NoteStore, sid: str, group: list[tuple[str, Conversation]]) -> tuple[str, _Kept]:
    """The key a session is kept under and what the store holds of it: its id, or the name of
    its own file, under which an earlier version imported a renamed transcript."""
    kept = _kept_parts(store, "claude-code", sid)
    for stem in sorted({Path(name).stem for name, p in group if p.own_file} - {sid}):
        if not kept.count:
            found = _kept_parts(store, "claude-code", stem)
            if found.count:
                return stem, found
    return sid, kept


def _continues(piece: Conversation, kept: _Kept) -> bool:
    """Whether *piece* may join a session the store holds as *kept*: it is new here, or the
    piece holds the last message kept (a copy made after it, not lines that only claim its id)."""
    last = kept.extras.get("last_message")
    return not kept.count or (bool(last) and any(t.ident == last for t in piece.turns))


def _last_time(conv: Conversation) -> str:
    return max((t.at for t in conv.turns if t.at), default="")


def _standing_attempt(store: NoteStore, project: str, author: str) -> str:
    """The attempt imports write on: one per project, left running, so that the notes stay
    the owner's to edit or delete (an ended attempt freezes its notes)."""
    for attempt in store.list_attempts(project=project, running=True, limit=200):
        if attempt.model == IMPORT_MODEL:
            return attempt.id
    return store.start_attempt(project, author=author, model=IMPORT_MODEL).id


def _turns_digest(conv: Conversation) -> str:
    digest = hashlib.sha256()
    for turn in conv.turns:
        digest.update(f"{turn.role}\0{turn.text}\0{turn.ident}\0".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _resumed_home(session: _Session, placed: dict[str, tuple[str, dict[str, Any] | None]]) -> dict[str, Any] | None:
    """The attempt of the latest session *session* resumed that is placed (held here, or
    imported in this run before it): a continuation of a private session stays private."""
    known = [placed[sid] for sid in session.resumed if sid in placed and placed[sid][1] is not None]
    return max(known, key=lambda k: k[0])[1] if known else None


def _import_one(store: NoteStore, conv: Conversation, writer: _Writer, kept: _Kept, attempt: str | None) -> None:
    """Write what is new of *conv*: all of it, the last part again with what it grew by (when
    that part is as the import wrote it), or the turns after it in parts of their own (when a
    person changed it: their tags, summary and edits stay)."""
    report = writer.report
    part_id = lambda n: part_note_id(conv.source, conv.source_id, n)  # noqa: E731
    if not kept.count:
        parts = conversation_parts(conv, part_id=part_id)
        writer.add(conv, False, [(part_id(p.number), p.text) for p in parts], attempt=attempt)
        return
    span = _last_part_start(conv, kept.extras)
    if span is None:
        report.changed_in_place += 1
        return
    start, upto = span
    clamped = start < 0  # the part holds turns this file does not: never written again from it
    start = max(start, 0)
    # The last part again, with what its last turn has grown by and the turns after it.
    builds_on = part_id(kept.count - 1) if kept.count > 1 else None
    parts = conversation_parts(conv, start=start, first_part=kept.count, builds_on=builds_on, part_id=part_id)
    digest = import_digest(kept.text)
    if len(parts) == 1 and (parts[0].text == kept.text or (digest and import_digest(parts[0].text) == digest)):
        report.unchanged += 1  # nothing new (a person may have changed the part: left as it is)
        return
    rewrite = as_imported(kept.text) and not clamped  # else only turns after the part are added
    if not rewrite and upto >= len(conv.turns):
        report.unchanged += 1  # only the last turn of a part a person changed grew: the part stays theirs
        return
    # Only now, when something is written: finding the attempt may start one (an ended one's project).
    home = writer.home(kept.attempt)
    if rewrite:
        writer.add(
            conv, True, [(part_id(p.number), p.text) for p in parts[1:]], (part_id(kept.count), parts[0].text), home
        )
        return
    parts = conversation_parts(
        conv, start=upto, first_part=kept.count + 1, builds_on=part_id(kept.count), part_id=part_id
    )
    writer.add(conv, True, [(part_id(p.number), p.text) for p in parts], None, home)


def import_conversations(
    store: NoteStore,
    source: str,
    path: str | os.PathLike[str] | None = None,
    *,
    project: str | None = None,
    author: str | None = None,
    progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import *source*'s conversations under *path* into *store* (see the module's docstring)."""
    if source not in SOURCES:
        raise InvalidArgumentError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    chosen = Path(path) if path is not None else default_path(source)
    if chosen is None:
        raise InvalidArgumentError(f"give the {source} export to import (a .zip, a folder or conversations.json)")
    report = ImportReport(source, project or source)
    began = time.perf_counter()
    writer = _Writer(store, report, author or "notewell-import")
    taken: dict[str, str] = {}  # conversations met in this run (an export may repeat one): id -> their turns' digest
    copied: set[str] = set()  # Claude Code message ids in a session held here or read before
    placed: dict[str, tuple[str, dict[str, Any] | None]] = {}  # Claude Code session -> (its last turn, attempt)
    try:
        found = _file_conversations(source, chosen, report)
        if source == "claude-code":  # every session is read before anything is written
            sessions = _claude_code_sessions(store, found, report, copied, placed)
            found = ((s.name, [s.conv]) for s in sessions)
            by_id = {s.conv.source_id: s for s in sessions}
        for name, convs in found:
            for conv in convs:
                if not conv.source_id or len(conv.source_id) > _ID_MAX or not conv.source_id.isprintable():
                    report.errors.append(
                        (name, f"a conversation id that is not one short line: {conv.source_id!r:.40}")
                    )
                    continue
                text = _turns_digest(conv)
                if conv.source_id in taken:
                    if taken[conv.source_id] != text:  # not a repeat: a conversation left out, said so
                        report.errors.append(
                            (name, f"a second conversation with the id {conv.source_id!r:.60} and other text:"
                                   " only the first read was imported")
                        )  # fmt: skip
                    continue
                taken[conv.source_id] = text
                attempt: str | None = _RUN
                if source == "claude-code":
                    session = by_id[conv.source_id]
                    kept = session.kept
                    if not kept.count:  # a fork or copy under another id: the lines stay where they are
                        conv.turns = [t for t in conv.turns if t.ident is None or t.ident not in copied]
                    copied.update(t.ident for t in conv.turns if t.ident)
                    if not any(t.role == "user" for t in conv.turns):
                        continue
                    if not kept.count and project is None:  # it goes where the session it resumed is
                        home = _resumed_home(session, placed)
                        placed[conv.source_id] = (_last_time(conv), home)
                        attempt = writer.home(home) if home is not None else _RUN
                else:
                    kept = _kept_parts(store, source, conv.source_id)
                report.conversations += 1
                _import_one(store, conv, writer, kept, attempt)
            if progress is not None:
                progress(report)
    finally:
        writer.flush()
        report.seconds = time.perf_counter() - began
    return report
