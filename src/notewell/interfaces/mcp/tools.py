"""The one list of MCP tools: the server serves it and the reference documents it.

A new tool is one :class:`~.tool.ToolSpec` in a topic module listed here, in one of the
:data:`~.groups.GROUPS`; nothing here imports the MCP SDK.
"""

from __future__ import annotations

from .groups import group_names
from .memory_tools import MEMORY_TOOLS
from .notebook_tools import NOTEBOOK_TOOLS
from .store_tools import STORE_TOOLS
from .tool import ToolSpec

__all__ = ["TOOLS", "served"]

TOOLS: tuple[ToolSpec, ...] = STORE_TOOLS + NOTEBOOK_TOOLS + MEMORY_TOOLS


def served(local: bool, choice: str | None = None) -> tuple[ToolSpec, ...]:
    """The tools a server offers, in the table's order: those of the groups *choice* names
    (see :func:`~.groups.group_names`; default: the core group), and over HTTP (not *local*)
    none that is stdio only."""
    groups = group_names(choice, local=local)
    return tuple(tool for tool in TOOLS if tool.group in groups and (local or not tool.stdio_only))
