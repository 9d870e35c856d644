"""What the MCP tools answer, shaped for an agent that pays for every token it reads.

The Python and HTTP APIs answer whole records; over MCP the same records go out as one line
of JSON without the fields that say nothing (null, and empty lists or objects inside a
record), a note read is its text once (not the text, the parsed header and the body again),
and a write answers with what identifies the note written (id, title, revision, path, kind,
tags) unless the agent asks for the whole note. Arguments the tool schema refuses come back
as the project's own ``invalid_argument`` error, one line naming the fields.

The tool tables shape notes with this module, and the reference reads those tables: so the
MCP SDK is imported only when an answer is made.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError, NotewellError

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from pydantic import ValidationError

__all__ = ["answer", "compact", "failure", "invalid_arguments", "note_read", "note_receipt"]

_RECEIPT = ("id", "title", "revision", "path", "kind", "tags", "attempt_id", "similar")
_RESTATED = ("header", "body")  # a note's text holds both; its title, kind and tags are fields too


def compact(value: Any, *, top: bool = True) -> Any:
    """*value* without null fields, and without empty lists or objects below the top level."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if item is None:
                continue
            item = compact(item, top=False)
            if not top and isinstance(item, list | dict) and not item:
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [compact(item, top=False) for item in value]
    return value


def note_receipt(note: dict[str, Any]) -> dict[str, Any]:
    """What identifies a note just written."""
    return {key: note[key] for key in _RECEIPT if key in note}


def note_read(note: dict[str, Any]) -> dict[str, Any]:
    """A note as read: its text once, with its fields."""
    return {key: value for key, value in note.items() if key not in _RESTATED}


def answer(result: Any) -> CallToolResult:
    """A tool's result as one compact line of JSON (and the same as structured content)."""
    from mcp.types import CallToolResult, TextContent

    shaped = compact(result)
    text = json.dumps(shaped, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=shaped)


def failure(exc: NotewellError) -> CallToolResult:
    """A notewell error as a tool error: ``code: message``, and ``{"error": {...}}``."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=f"{exc.code}: {exc.message}")],
        structured_content={"error": exc.to_dict()},
        is_error=True,
    )


def invalid_arguments(tool: str, exc: ValidationError) -> InvalidArgumentError:
    """The schema's refusal as one line naming each field and what it must be (never the
    value given: that is the caller's data, and may be long)."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        field = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{field}: {str(error.get('msg', 'invalid')).lower()}")
    return InvalidArgumentError(f"{tool}: " + "; ".join(dict.fromkeys(parts)))
