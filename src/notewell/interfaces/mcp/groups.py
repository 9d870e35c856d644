"""The groups the MCP tools are offered in, and the ``--tools`` choice that names them.

Every agent session is sent the definitions of the tools it is offered, so a server offers
the ``core`` group unless asked for more. This module is read by every command line that takes
``--tools`` (``mcp``, ``serve``, ``install``), so it imports nothing of the tools themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InvalidArgumentError
from ..closest import closest

__all__ = ["DEFAULT_TOOLS", "GROUPS", "ToolGroup", "group_names"]


@dataclass(frozen=True, slots=True)
class ToolGroup:
    """One group: its name, what it is for, and whether its tools are for the local owner
    only (served over stdio, never at /mcp)."""

    name: str
    help: str
    stdio_only: bool = False


GROUPS: tuple[ToolGroup, ...] = (
    ToolGroup("core", "what an agent uses every session: find, read, write and browse notes (the default)"),
    ToolGroup("catalog", "tags, counts, and the open blockers and actions left hanging"),
    ToolGroup("attempts", "runs of work on a project, whose notes freeze when they end"),
    ToolGroup("notebook", "the working-context notebook of one long task", stdio_only=True),
    ToolGroup("memory", "Anthropic's memory tool (memory_20250818): files under /memories, kept as notes"),
)
DEFAULT_TOOLS = "default"
_NAMED = {group.name: group for group in GROUPS}
_WORDS = {DEFAULT_TOOLS: ("core",), "all": tuple(_NAMED)}


def _unknown(word: str) -> InvalidArgumentError:
    known = [*_WORDS, *_NAMED]
    close = closest(word, known)
    hint = f"did you mean {close}? " if close else ""
    return InvalidArgumentError(f"--tools: no group {word!r}: {hint}give {', '.join(known)}, or groups with commas")


def group_names(choice: str | None = None, *, local: bool = True) -> tuple[str, ...]:
    """The groups *choice* names: ``default`` (the core group; also for None), ``all``, or
    groups with commas (``core,attempts``), in the table's order. Not *local* (a server at
    /mcp): ``all`` leaves out the stdio-only groups, and naming one is refused."""
    words = [word.strip() for word in (DEFAULT_TOOLS if choice is None else choice).split(",")]
    if not all(words):
        raise InvalidArgumentError(f"--tools: {choice!r} names an empty group: give groups with commas between")
    chosen: set[str] = set()
    for word in words:
        if word not in _WORDS and word not in _NAMED:
            raise _unknown(word)
        if not local and word in _NAMED and _NAMED[word].stdio_only:
            raise InvalidArgumentError(f"--tools: the {word} tools are served over stdio only (notewell mcp)")
        chosen.update(_WORDS.get(word, (word,)))
    return tuple(group.name for group in GROUPS if group.name in chosen and (local or not group.stdio_only))
