"""notewell as the memory of an agent built on Anthropic's SDK (``pip install '.[anthropic]'``).

:class:`NotewellMemoryTool` is the SDK's ``BetaAbstractMemoryTool`` over a store: pass it in
``tools=[...]`` of ``client.beta.messages.tool_runner(...)`` and the model's memory commands
become notes that every other way in (search, the page, MCP) finds. This module imports the SDK
at its top, so it is imported only when used; ``import notewell`` never loads it.

The SDK's tool runner sends a tool's return value as the tool result, and a raised
``ToolError`` as a result with ``is_error``: so a command the protocol refuses, or any notewell
error (a frozen note, a note over the size limit), is raised as ``ToolError`` with its text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import NotewellError, UnavailableError
from ..model.visibility import Viewer
from .memory_files import MemoryFiles, MemoryNotes, check_command, memory_notes

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import (
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
    from anyio.to_thread import run_sync
except ImportError as exc:  # pragma: no cover - the extra is installed wherever this is tested
    raise UnavailableError("the Anthropic memory tool needs the 'anthropic' extra: pip install '.[anthropic]'") from exc

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..services.contract import NoteStore

__all__ = ["NotewellAsyncMemoryTool", "NotewellMemoryTool"]


@contextmanager
def _as_tool_error() -> Iterator[None]:
    """A NotewellError (the protocol's refusals are ones too) as the SDK's ToolError, whose
    text the model reads."""
    try:
        yield
    except NotewellError as exc:
        raise ToolError(exc.message) from exc


class NotewellMemoryTool(BetaAbstractMemoryTool):
    """Anthropic's memory tool (``memory_20250818``) over a notewell store: each file a note of
    kind ``memory`` (see :mod:`notewell.agents.memory_files`), written as *author* (on
    *attempt*, if given), read as *viewer* (None: as the store's owner)."""

    def __init__(
        self,
        store: NoteStore | None = None,
        *,
        author: str | None = None,
        viewer: Viewer | None = None,
        attempt: str | None = None,
        notes: MemoryNotes | None = None,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.files = MemoryFiles(store, author=author, viewer=viewer, attempt=attempt, notes=notes)

    def call(self, input: object) -> Any:
        """The SDK's dispatch, once the input names a command with its fields (the SDK builds
        the command without checking it)."""
        self._run(check_command, input)
        return super().call(input)

    def _run(self, verb: Callable[..., str], *args: Any) -> str:
        with _as_tool_error():
            return verb(*args)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(self.files.view, command.path, command.view_range)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(self.files.create, command.path, command.file_text)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(self.files.str_replace, command.path, command.old_str, command.new_str)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(self.files.insert, command.path, command.insert_line, command.insert_text)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(self.files.delete, command.path)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(self.files.rename, command.old_path, command.new_path)


class NotewellAsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """:class:`NotewellMemoryTool` for ``AsyncAnthropic``'s tool runner: each command runs in a
    worker thread (the store is synchronous), on memory files of its own, so that commands the
    runner makes at once do not share what one of them has read."""

    def __init__(
        self,
        store: NoteStore | None = None,
        *,
        author: str | None = None,
        viewer: Viewer | None = None,
        attempt: str | None = None,
        notes: MemoryNotes | None = None,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.notes = memory_notes(store, notes, author=author, viewer=viewer, attempt=attempt)

    async def call(self, input: object) -> Any:
        """The SDK's dispatch, once the input names a command with its fields."""
        with _as_tool_error():
            check_command(input)
        return await super().call(input)

    async def _off(self, work: Callable[[MemoryFiles], str]) -> str:
        with _as_tool_error():
            return await run_sync(lambda: work(MemoryFiles(notes=self.notes)))

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._off(lambda files: files.view(command.path, command.view_range))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._off(lambda files: files.create(command.path, command.file_text))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._off(lambda files: files.str_replace(command.path, command.old_str, command.new_str))

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._off(lambda files: files.insert(command.path, command.insert_line, command.insert_text))

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._off(lambda files: files.delete(command.path))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._off(lambda files: files.rename(command.old_path, command.new_path))
