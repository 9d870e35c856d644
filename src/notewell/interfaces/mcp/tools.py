"""The one list of MCP tools: the server serves it and the reference documents it.

A new tool is one :class:`~.tool.ToolSpec` in a topic module listed here; nothing here
imports the MCP SDK.
"""

from __future__ import annotations

from .notebook_tools import NOTEBOOK_TOOLS
from .store_tools import STORE_TOOLS
from .tool import ToolSpec

__all__ = ["TOOLS", "served"]

TOOLS: tuple[ToolSpec, ...] = STORE_TOOLS + NOTEBOOK_TOOLS


def served(local: bool) -> tuple[ToolSpec, ...]:
    """The tools a server offers: all to the local owner (stdio), else those not stdio-only."""
    return tuple(tool for tool in TOOLS if local or not tool.stdio_only)
