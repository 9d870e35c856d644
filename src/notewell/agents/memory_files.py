"""Anthropic's memory tool (``memory_20250818``) over a notewell store, without the SDK.

The six commands (view, create, str_replace, insert, delete, rename) answer the protocol's own
strings; a command the protocol refuses raises :class:`MemoryCommandError` whose message is the
protocol's error text. :mod:`notewell.agents.anthropic_memory` hands these to Anthropic's SDK,
and the MCP tool ``memory`` to an MCP client.

Each memory file is one note of kind ``memory``, tagged ``memory``, whose header holds its path
twice: as its title (so a list of cards says where each file is) and as ``memory_path:`` (so a
note someone titled ``/memories/...`` by hand is never taken for one, nor overwritten). Its body
is the file's text, byte for byte. Every write is a revision of the note (``notewell get ID
--revision N`` reads an older one); ``rename`` edits the header, so the note keeps its id and
its history; ``delete`` deletes the note (its last text stays readable by revision number).
Directories are the paths' prefixes: one exists while a file lies under it.

The tool acts as one caller: notes it writes carry its *author* (and its *attempt*, so they join
that attempt's project), and it sees only the notes its *viewer* may see. A file in a private
project the viewer may not see does not exist for it: ``create`` there makes its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConflictError
from ..model.attempt import require_unfrozen
from ..model.header import parse_note, quote_value
from ..model.header_edit import with_line
from ..model.redaction import sensitive_spans, without_private
from ..model.visibility import Viewer
from .memory_paths import ROOT, MemoryCommandError, check_path, shown, under

if TYPE_CHECKING:
    from ..services.contract import NoteStore

__all__ = [
    "COMMANDS",
    "MEMORY_KIND",
    "MemoryCommandError",
    "MemoryFiles",
    "MemoryNotes",
    "StoreNotes",
    "check_command",
    "memory_notes",
    "memory_text",
]

MEMORY_KIND = "memory"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
MAX_LINES = 999_999
_WIDTH = len(str(MAX_LINES))  # line numbers are right-aligned to six places, as the protocol shows
_PAGE = 100  # cards a listing reads at once (as many as a caller over the network is given)
_MATCHES_SHOWN = 100  # line numbers a refusal of several matches lists
_FIELDS = {
    "view": ("path",),
    "create": ("path", "file_text"),
    "str_replace": ("path", "old_str", "new_str"),
    "insert": ("path", "insert_line", "insert_text"),
    "delete": ("path",),
    "rename": ("old_path", "new_path"),
}


class MemoryNotes(Protocol):
    """What the memory files need of a store, as one caller: notes as dicts (``Note.to_dict``)."""

    @property
    def author(self) -> str | None:
        """The author the caller's notes carry (a card's ``author``)."""
        ...

    def memory_cards(self, *, limit: int, offset: int) -> list[Mapping[str, Any]]:
        """Cards (``id``, ``title``, ``author``, ``created_at``) of the notes of kind ``memory``
        the caller may see."""
        ...

    def read(self, note_id: str) -> Mapping[str, Any]: ...

    def add(self, text: str) -> Mapping[str, Any]: ...

    def replace(self, note_id: str, text: str, *, base_revision: int) -> None: ...

    def delete(self, note_id: str) -> None: ...

    def check_change(self, note_id: str) -> None:
        """The error the caller would meet changing the note (none: it may), raised before a
        command that changes several notes changes any."""
        ...

    def check_writes(self, count: int) -> None:
        """The error the caller would meet making *count* writes now (a rate's limit), raised
        before a command that changes several notes changes any."""
        ...


class StoreNotes:
    """:class:`MemoryNotes` on a store, writing as *author* (on *attempt*, if given) and reading
    as *viewer* (None: everything, as the store's owner)."""

    def __init__(
        self, store: NoteStore, *, author: str | None = None, viewer: Viewer | None = None, attempt: str | None = None
    ) -> None:
        self.store, self.author, self.viewer, self.attempt = store, author, viewer, attempt

    def memory_cards(self, *, limit: int, offset: int) -> list[Mapping[str, Any]]:
        cards = self.store.list_notes(limit=limit, offset=offset, viewer=self.viewer, kind=MEMORY_KIND)
        return [
            {"id": card.id, "title": card.title, "author": card.author, "created_at": card.created_at} for card in cards
        ]

    def read(self, note_id: str) -> Mapping[str, Any]:
        return self.store.get_note(note_id, viewer=self.viewer).to_dict()

    def add(self, text: str) -> Mapping[str, Any]:
        return self.store.add_note(text, author=self.author, attempt=self.attempt).to_dict()

    def replace(self, note_id: str, text: str, *, base_revision: int) -> None:
        self.store.edit_note(note_id, text, author=self.author, base_revision=base_revision)

    def delete(self, note_id: str) -> None:
        self.store.delete_note(note_id)

    def check_change(self, note_id: str) -> None:
        note = self.store.get_note(note_id, viewer=self.viewer)
        if note.attempt_id is not None:
            require_unfrozen(note_id, self.store.get_attempt(note.attempt_id, viewer=self.viewer))

    def check_writes(self, count: int) -> None:
        """The store's own caller has no rate."""


def memory_text(path: str, text: str) -> str:
    """The note a memory file at *path* (a checked path) holding *text* is stored as."""
    quoted = quote_value(path)
    return f"---\ntitle: {quoted}\nkind: {MEMORY_KIND}\ntags: [{MEMORY_KIND}]\nmemory_path: {quoted}\n---\n{text}"


def _storable(path: str) -> str:
    """*path*, once its note's header reads it back exactly (else a file made there could never
    be found again)."""
    # The store masks what the path would hold of a secret in the title it is found by: refused
    # here, or the file made there could never be found again.
    held = sensitive_spans(path)
    if held or without_private(path)[1]:
        kind = held[0][0] if held else "<private> span"
        what = ("an " if kind[0] in "aeiou" else "a ") + kind
        raise MemoryCommandError(f"Error: a memory path cannot hold {what}: the store never keeps it")
    parsed = parse_note(memory_text(path, ""))
    if (parsed.header or {}).get("title") != path or f"memory_path: {quote_value(path)}" not in parsed.extra:
        raise MemoryCommandError(f"Error: the path {shown(path)} cannot be kept in a note's header")
    return path


@dataclass(frozen=True, slots=True)
class _File:
    id: str
    path: str
    head: str  # the note's text before the body: its header, as it is now
    body: str
    revision: int


def _lines_of(content: str) -> list[str]:
    """Lines split on LF only (a CR stays), without the empty tail a final newline leaves."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _size(n: int) -> str:
    """A size as the protocol's listing shows it: 0B, 512B, 1.5K, 2M."""
    if n == 0:
        return "0B"
    unit = min((n.bit_length() - 1) // 10, 3)
    value = n / 1024**unit
    number = f"{int(value)}" if value == int(value) else f"{value:.1f}"
    return number + "BKMG"[unit]


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(first + i).rjust(_WIDTH)}\t{line}" for i, line in enumerate(lines))


def _match_lines(content: str, old: str) -> list[int]:
    """The line of each place *old* starts in *content* (counted once each, in one pass)."""
    found: list[int] = []
    line, counted, start = 1, 0, content.find(old)
    while start != -1:
        line += content.count("\n", counted, start)
        counted = start
        if not found or found[-1] != line:
            found.append(line)
        start = content.find(old, start + 1)
    return found


def memory_notes(
    store: NoteStore | None,
    notes: MemoryNotes | None,
    *,
    author: str | None = None,
    viewer: Viewer | None = None,
    attempt: str | None = None,
) -> MemoryNotes:
    """*notes* if given, else :class:`StoreNotes` on *store* (written as *author*, read as *viewer*)."""
    if notes is not None:
        return notes
    if store is None:
        raise TypeError("the memory tool needs a store or notes")
    return StoreNotes(store, author=author, viewer=viewer, attempt=attempt)


def check_command(command: object) -> str:
    """The command *command* (the tool's input) names, once it has the fields that command needs."""
    if not isinstance(command, Mapping):
        raise MemoryCommandError("Error: the input must be an object with a command")
    name = command.get("command")
    if name not in _FIELDS:
        raise MemoryCommandError(f"Error: Unknown command {shown(str(name))!r}: give one of {', '.join(COMMANDS)}")
    missing = [field for field in _FIELDS[name] if command.get(field) is None]
    if missing:
        raise MemoryCommandError(f"Error: the {name} command needs {' and '.join(missing)}")
    return str(name)


class MemoryFiles:
    """The memory tool's six commands over a store (or any :class:`MemoryNotes`): each answers
    the protocol's text, or raises :class:`MemoryCommandError` with the protocol's error text.
    Other notewell errors (a read-only token, a frozen note) pass through."""

    def __init__(
        self,
        store: NoteStore | None = None,
        *,
        author: str | None = None,
        viewer: Viewer | None = None,
        attempt: str | None = None,
        notes: MemoryNotes | None = None,
    ) -> None:
        self.notes = memory_notes(store, notes, author=author, viewer=viewer, attempt=attempt)
        self._listed: list[tuple[str, str]] | None = None
        self._loaded: dict[tuple[str, str], _File | None] = {}

    # -- finding files ---------------------------------------------------------

    def _cards(self) -> list[tuple[str, str]]:
        """(path, note id) of every note titled as a memory file, listed once a command (each
        command starts with :meth:`_fresh`). Where several claim one path, the caller's own
        comes first, then the oldest: a note someone else puts at a path later (one the caller
        may not see, or by hand) never takes the place of the caller's file, so the caller's
        writes never go into another's note, and editing a file never changes which one a path
        names."""
        if self._listed is None:
            found: list[tuple[bool, str, str, str]] = []
            offset = 0
            while True:
                page = self.notes.memory_cards(limit=_PAGE, offset=offset)
                for card in page:
                    title = card.get("title")
                    if isinstance(title, str) and under(title, ROOT):
                        theirs = card.get("author") != self.notes.author
                        found.append((theirs, str(card.get("created_at") or ""), str(card["id"]), title))
                if len(page) < _PAGE:
                    break
                offset += _PAGE
            self._listed = [(title, note_id) for _, _, note_id, title in sorted(found)]
        return self._listed

    def _fresh(self) -> None:
        self._listed, self._loaded = None, {}

    def _load(self, note_id: str, path: str) -> _File | None:
        """The memory file note *note_id* is, if it is one at *path* (its header says so)."""
        if (note_id, path) not in self._loaded:
            self._loaded[note_id, path] = self._read(note_id, path)
        return self._loaded[note_id, path]

    def _read(self, note_id: str, path: str) -> _File | None:
        note = self.notes.read(note_id)
        text, body = str(note.get("text", "")), str(note.get("body", ""))
        marked = f"memory_path: {quote_value(path)}" in (note.get("extra") or [])
        if note.get("kind") != MEMORY_KIND or note.get("title") != path or not marked or not text.endswith(body):
            return None
        return _File(note_id, path, text[: len(text) - len(body)], body, int(note.get("revision", 1)))

    def _files(self, directory: str = ROOT) -> dict[str, _File]:
        """Every memory file under *directory* (where two claim one path, the one :meth:`_cards`
        puts first)."""
        found: dict[str, _File] = {}
        for path, note_id in self._cards():
            if path not in found and (directory == ROOT or under(path, directory)):
                file = self._load(note_id, path)
                if file is not None:
                    found[path] = file
        return found

    def _file(self, path: str) -> _File | None:
        for title, note_id in self._cards():
            if title == path:
                file = self._load(note_id, path)
                if file is not None:
                    return file
        return None

    def _is_directory(self, path: str) -> bool:
        if path == ROOT:
            return True
        return any(under(title, path) and self._load(note_id, title) for title, note_id in self._cards())

    def _existing(self, path: str, said: str) -> _File:
        """The file at *path*, or the protocol's refusal *said* (with the path filled in)."""
        file = self._file(path)
        if file is None:
            if path != ROOT and not self._is_directory(path):
                raise MemoryCommandError(said.format(path=path))
            raise MemoryCommandError(f"Error: The path {path} is not a file.")
        return file

    def _write(self, file: _File, text: str) -> None:
        try:
            self.notes.replace(file.id, file.head + text, base_revision=file.revision)
        except ConflictError:
            raise MemoryCommandError(
                f"Error: The file {file.path} changed while this command ran; view it and try again"
            ) from None

    # -- the six commands ------------------------------------------------------

    def execute(self, command: Mapping[str, Any]) -> str:
        """Run one command given as the tool's input (``{"command": "view", "path": ...}``)."""
        name = check_command(command)
        if name == "view":
            return self.view(command["path"], command.get("view_range"))
        if name == "create":
            return self.create(command["path"], command["file_text"])
        if name == "str_replace":
            return self.str_replace(command["path"], command["old_str"], command["new_str"])
        if name == "insert":
            return self.insert(command["path"], command["insert_line"], command["insert_text"])
        if name == "delete":
            return self.delete(command["path"])
        return self.rename(command["old_path"], command["new_path"])

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        """A directory's files and directories two levels deep, with sizes; or a file's lines,
        numbered (*view_range*: ``[first, last]``, 1-based, last -1 for the end)."""
        self._fresh()
        path = check_path(path)
        file = None if path == ROOT else self._file(path)
        if file is not None:
            return self._view_file(file, view_range)
        files = self._files(path)
        if path != ROOT and not files:
            raise MemoryCommandError(f"The path {path} does not exist. Please provide a valid path.")
        return self._listing(path, files)

    def _listing(self, path: str, files: dict[str, _File]) -> str:
        sizes: dict[str, int] = {}  # each entry two levels deep, directories with their files' bytes
        for file_path, file in list(files.items()):
            parts = file_path[len(path) + 1 :].split("/")
            if any(part.startswith(".") or part == "node_modules" for part in parts):
                del files[file_path]  # the protocol's listing leaves these out
                continue
            size = len(file.body.encode("utf-8"))
            for depth in range(1, min(len(parts), 2) + 1):
                entry = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
                sizes[entry] = sizes.get(entry, 0) + size
        total = sum(len(f.body.encode("utf-8")) for f in files.values())
        lines = [f"{_size(total)}\t{path}"]
        lines += [f"{_size(sizes[entry])}\t{path}/{entry}" for entry in sorted(sizes, key=lambda e: e.rstrip("/"))]
        header = f"Here're the files and directories up to 2 levels deep in {path}, "
        header += "excluding hidden items and node_modules:"
        return header + "\n" + "\n".join(lines)

    def _view_file(self, file: _File, view_range: Any) -> str:
        lines = file.body.split("\n")
        if len(lines) > MAX_LINES:
            raise MemoryCommandError(f"File {file.path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if view_range is not None:
            ok = isinstance(view_range, list | tuple) and len(view_range) == 2
            if not ok or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range):
                raise MemoryCommandError(
                    f"Error: Invalid `view_range` parameter: {shown(str(view_range))}. "
                    "It should be a list of two integers [start, end], end -1 for the last line."
                )
            start, end = view_range
            if start < 1 or start > len(lines) or (end != -1 and end < start):
                raise MemoryCommandError(
                    f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
                    f"It should be within the range of lines of the file: [1, {len(lines)}]."
                )
            first = start
            lines = lines[start - 1 : None if end == -1 else end]
        return f"Here's the content of {file.path} with line numbers:\n" + _numbered(lines, first)

    def _no_file_above(self, path: str) -> None:
        """Refuse *path* when a folder on the way to it is a file."""
        parent = path.rsplit("/", 1)[0]
        while parent != ROOT:
            if self._file(parent) is not None:
                raise MemoryCommandError(f"Error: The path {parent} is a file, not a directory")
            parent = parent.rsplit("/", 1)[0]

    def create(self, path: str, file_text: str) -> str:
        """A new file at *path* holding *file_text*; an existing one is never overwritten."""
        self._fresh()
        path = check_path(path)
        if not isinstance(file_text, str):
            raise MemoryCommandError("Error: file_text must be a string")
        if path == ROOT or self._file(path) is not None:
            raise MemoryCommandError(f"Error: File {path} already exists")
        if self._is_directory(path):
            raise MemoryCommandError(f"Error: The path {path} is a directory")
        self._no_file_above(path)
        self.notes.add(memory_text(_storable(path), file_text))
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """*old_str*, which must appear exactly once in the file, replaced by *new_str*."""
        self._fresh()
        path = check_path(path)
        if not isinstance(old_str, str) or not isinstance(new_str, str) or not old_str:
            raise MemoryCommandError("Error: old_str must be a text that is not empty, and new_str a text")
        file = self._existing(path, "Error: The path {path} does not exist. Please provide a valid path.")
        content = file.body
        at = content.find(old_str)
        if at == -1:
            raise MemoryCommandError(
                f"No replacement was performed, old_str `{shown(old_str)}` did not appear verbatim in {path}."
            )
        if content.find(old_str, at + 1) != -1:
            lines = _match_lines(content, old_str)
            listed = ", ".join(map(str, lines[:_MATCHES_SHOWN])) + (", ..." if len(lines) > _MATCHES_SHOWN else "")
            raise MemoryCommandError(
                f"No replacement was performed. Multiple occurrences of old_str `{shown(old_str)}` in lines: "
                f"{listed}. Please ensure it is unique"
            )
        new_content = content[:at] + new_str + content[at + len(old_str) :]
        self._write(file, new_content)
        changed = content.count("\n", 0, at)
        new_lines = new_content.split("\n")
        start, end = max(0, changed - 2), min(len(new_lines), changed + new_str.count("\n") + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + _numbered(new_lines[start:end], start + 1)
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """*insert_text* as new lines after line *insert_line* (0: at the top)."""
        self._fresh()
        path = check_path(path)
        if not isinstance(insert_text, str):
            raise MemoryCommandError("Error: insert_text must be a string")
        file = self._existing(path, "Error: The path {path} does not exist")
        lines = _lines_of(file.body)
        if not isinstance(insert_line, int) or isinstance(insert_line, bool) or not 0 <= insert_line <= len(lines):
            raise MemoryCommandError(
                f"Error: Invalid `insert_line` parameter: {shown(str(insert_line))}. "
                f"It should be within the range of lines of the file: [0, {len(lines)}]"
            )
        lines.insert(insert_line, insert_text.rstrip("\n"))
        content = "\n".join(lines)
        self._write(file, content if content.endswith("\n") else content + "\n")
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        """The file at *path*, or every file under the directory *path*, deleted."""
        self._fresh()
        path = check_path(path)
        if path == ROOT:
            raise MemoryCommandError("Error: Cannot delete the /memories directory itself")
        file = self._file(path)
        doomed = [file] if file is not None else list(self._files(path).values())
        if not doomed:
            raise MemoryCommandError(f"Error: The path {path} does not exist")
        self._may_change(doomed)
        for each in doomed:
            self.notes.delete(each.id)
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        """The file or directory *old_path* moved to *new_path*, which must not exist; each file
        keeps its note (its id and its revisions)."""
        self._fresh()
        old, new = check_path(old_path), check_path(new_path)
        if old == ROOT:
            raise MemoryCommandError("Error: Cannot rename the /memories directory itself")
        if new == ROOT or self._file(new) is not None or self._is_directory(new):
            raise MemoryCommandError(f"Error: The destination {new} already exists")
        if under(new, old):
            raise MemoryCommandError(f"Error: Cannot move {old} into itself ({new})")
        file = self._file(old)
        moving = {old: file} if file is not None else self._files(old)
        if not moving:
            raise MemoryCommandError(f"Error: The path {old} does not exist")
        self._no_file_above(new)
        # A file deep in the directory may land past the bounds: every target is checked first.
        targets = {path: _storable(check_path(new + path[len(old) :])) for path in moving}
        self._may_change(list(moving.values()))
        for path, each in moving.items():
            self._move(each, targets[path])
        return f"Successfully renamed {old} to {new}"

    def _may_change(self, files: list[_File]) -> None:
        """Every refusal a directory's files would meet, before the first of them changes (one
        file goes straight to its change, which refuses it as it would)."""
        if len(files) > 1:
            for file in files:
                self.notes.check_change(file.id)
            self.notes.check_writes(len(files))

    def _move(self, file: _File, path: str) -> None:
        # The two lines set in place, whatever form a person rewrote them in: the rest of the
        # header (their tags, a summary) stays as it is.
        now = quote_value(path)
        text = with_line(file.head + file.body, "title", f"title: {now}")
        text = with_line(text, "memory_path", f"memory_path: {now}")
        parsed = parse_note(text)
        moved = (parsed.header or {}).get("title") == path and f"memory_path: {now}" in parsed.extra
        if not moved or not text.endswith(file.body):
            text = memory_text(path, file.body)  # a header that cannot be edited so: written again whole
        try:
            self.notes.replace(file.id, text, base_revision=file.revision)
        except ConflictError:
            raise MemoryCommandError(f"Error: The file {file.path} changed while it was moved; try again") from None
