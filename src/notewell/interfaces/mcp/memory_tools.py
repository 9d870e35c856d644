"""The ``memory`` group: Anthropic's memory tool (``memory_20250818``) as one MCP tool.

Its arguments are the Anthropic tool's input (``command`` and that command's fields), so an agent
that knows the protocol calls it as it would the Anthropic tool; its answer is the protocol's
text (``{"result": ...}``), and a command the protocol refuses is a tool error whose text holds
the protocol's. The files are notes (see :mod:`notewell.agents.memory_files`); every read and
write goes through the caller's permissions, as every other tool's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ...errors import ForbiddenError
from ...services.server_api import MAX_LIMIT
from .tool import Arg, ToolSpec

__all__ = ["MEMORY_TOOLS", "ApiNotes"]

_MEMORY_KIND = "memory"  # notewell.agents.memory_files.MEMORY_KIND, not imported: the reference reads this table


class ApiNotes:
    """The memory files' notes through :class:`~notewell.services.server_api.ServerAPI`, as *caller*."""

    def __init__(self, api: Any, caller: Any) -> None:
        self.api, self.caller = api, caller

    @property
    def author(self) -> str | None:
        """The author the caller's notes carry: its token's name (none for the local owner)."""
        handle: str | None = None if self.caller.local else self.caller.handle
        return handle

    def memory_cards(self, *, limit: int, offset: int) -> list[Mapping[str, Any]]:
        cards: list[Mapping[str, Any]] = self.api.list_notes(
            self.caller, limit=min(limit, MAX_LIMIT), offset=offset, kind=_MEMORY_KIND
        )["cards"]
        return cards

    def read(self, note_id: str) -> Mapping[str, Any]:
        note: Mapping[str, Any] = self.api.get_note(self.caller, note_id)
        return note

    def add(self, text: str) -> Mapping[str, Any]:
        note: Mapping[str, Any] = self.api.add_note(self.caller, text)
        return note

    def replace(self, note_id: str, text: str, *, base_revision: int) -> None:
        self.api.edit_note(self.caller, note_id, text, base_revision=base_revision)

    def delete(self, note_id: str) -> None:
        self.api.delete_note(self.caller, note_id)

    def check_change(self, note_id: str) -> None:
        refusal = self.api.edit_refusal(self.caller, note_id)
        if refusal is not None:
            raise ForbiddenError(refusal)

    def check_writes(self, count: int) -> None:
        self.api.check_writes(self.caller, count)


def _memory(
    api: Any,
    c: Any,
    command: str,
    path: str | None,
    file_text: str | None,
    old_str: str | None,
    new_str: str | None,
    insert_line: int | None,
    insert_text: str | None,
    view_range: list[int] | None,
    old_path: str | None,
    new_path: str | None,
) -> dict[str, Any]:
    # Imported on a call: the reference and the servers' start read only the table.
    from ...agents.memory_files import MemoryFiles

    fields = {
        "path": path,
        "file_text": file_text,
        "old_str": old_str,
        "new_str": new_str,
        "insert_line": insert_line,
        "insert_text": insert_text,
        "view_range": view_range,
        "old_path": old_path,
        "new_path": new_path,
    }
    given = {"command": command, **{key: value for key, value in fields.items() if value is not None}}
    return {"result": MemoryFiles(notes=ApiNotes(api, c)).execute(given)}


MEMORY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory",
        "change",
        "Anthropic's memory tool (memory_20250818) on notes: files under /memories. view a directory "
        "(two levels, with sizes) or a file (numbered lines, view_range [first, last], -1 for the end); "
        "create path file_text (never overwrites); str_replace path old_str new_str (old_str exactly once); "
        "insert path insert_line (0: the top) insert_text; delete path (a file or a directory); "
        "rename old_path new_path. Each file is a note of kind memory that search_notes finds.",
        (
            Arg("command", Literal["view", "create", "str_replace", "insert", "delete", "rename"]),
            Arg("path", str | None, "under /memories (every command but rename)", None),
            Arg("file_text", str | None, "create: the file's text", None),
            Arg("old_str", str | None, "str_replace: the text to replace", None),
            Arg("new_str", str | None, "str_replace: its replacement", None),
            Arg("insert_line", int | None, "insert: the line to insert after", None),
            Arg("insert_text", str | None, "insert: the text to insert", None),
            Arg("view_range", list[int] | None, "view: [first, last] lines of a file", None),
            Arg("old_path", str | None, "rename: from", None),
            Arg("new_path", str | None, "rename: to", None),
        ),
        _memory,
        group="memory",
        title="Memory files",
        idempotent=False,
    ),
)
