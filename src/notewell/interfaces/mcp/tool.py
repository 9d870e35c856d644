"""What an MCP tool is, as plain data: its name, description, arguments and the call it makes.

The server registers tools from these (see :mod:`.tools`) and the reference documents them,
so neither this module nor the tables import the MCP SDK or pydantic.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union, get_args, get_origin

from ...search.filters import FILTERS, FilterSpec
from ...services.server_api import MAX_LIMIT

__all__ = ["FILTER_ARGS", "FULL", "NOTE_ID", "REQUIRED", "Access", "Arg", "ToolSpec", "hints", "limit"]

REQUIRED: Any = inspect.Parameter.empty
# read: reads only; write: adds; change: replaces or deletes what is there (destructive).
Access = Literal["read", "write", "change"]


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a tool: its type (a Python type the JSON schema is made from), what it
    is, its default (:data:`REQUIRED`: none), and its bounds. *filter*: one of the filters of
    :data:`~notewell.search.filters.FILTERS`."""

    name: str
    type: Any
    help: str | None = None
    default: Any = REQUIRED
    ge: int | None = None
    le: int | None = None
    min_length: int | None = None
    filter: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def takes(self) -> str:
        """The type in words, with its bounds: ``integer, 1-100``."""
        bounds = ""
        if self.ge is not None and self.le is not None:
            bounds = f", {self.ge}-{self.le}"
        elif self.ge is not None:
            bounds = f", at least {self.ge}"
        elif self.min_length is not None:
            bounds = f", at least {self.min_length}"
        return _words(self.type) + bounds


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool. *call* is given the :class:`~notewell.services.server_api.ServerAPI`, the
    caller and every argument by name, and answers the result to send (shaped, not yet
    compacted). *needs_model*: whether a call with these arguments waits for the embedding
    model. *stdio_only*: served to the local owner only. *group*: the set it is offered in
    (see :data:`~.groups.GROUPS`). *renamed*: ``(old, new)`` argument names, the old one still
    taken from clients set up before the rename (deprecated; the schema shows the new one).
    *title*, *idempotent* and *open_world* are its MCP annotations beside what *access* says
    (see :func:`hints`): a title for people, whether calling it again with the same
    arguments changes nothing more, and whether it reaches past the store (none does)."""

    name: str
    access: Access
    description: str
    args: tuple[Arg, ...]
    call: Callable[..., Any]
    needs_model: Callable[[dict[str, Any]], bool] | None = None
    stdio_only: bool = False
    group: str = field(kw_only=True)
    renamed: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    # Defaults that no tool may keep (a test fails on one): a new tool says what it is.
    title: str = field(default="", kw_only=True)
    idempotent: bool | None = field(default=None, kw_only=True)
    open_world: bool = field(default=False, kw_only=True)


def hints(tool: ToolSpec) -> dict[str, Any]:
    """*tool*'s MCP annotations, as sent (``readOnlyHint``...): read-only for *read*,
    destructive for *change* (it replaces or deletes what is there)."""
    return {
        "title": tool.title,
        "readOnlyHint": tool.access == "read",
        "destructiveHint": tool.access == "change",
        "idempotentHint": bool(tool.idempotent),
        "openWorldHint": tool.open_world,
    }


def _words(kind: Any) -> str:
    names = {str: "string", int: "integer", bool: "boolean", type(None): "null"}
    if kind in names:
        return names[kind]
    origin = get_origin(kind)
    if origin is Literal:
        return " or ".join(f"`{v}`" for v in get_args(kind))
    if origin is list:
        return f"list of {_words(get_args(kind)[0])}s"
    if origin in (Union, types.UnionType):
        return " or ".join(_words(k) for k in get_args(kind))
    return str(kind)


def _filter_arg(spec: FilterSpec) -> Arg:
    kind: Any = str | None
    if spec.shape == "texts":
        kind = str | list[str] | None
    elif spec.shape == "choice":
        kind = Literal[spec.choices] | None  # type: ignore[valid-type]
    return Arg(spec.name, kind, spec.short, None, filter=True)


# The filters of the one table, as arguments of the search and list tools (described in the
# words an agent needs: the table's own help is the reference's).
FILTER_ARGS = tuple(_filter_arg(spec) for spec in FILTERS)
NOTE_ID = Arg("id", str, "nte_… id, or the note's file name or path (go-tips.md)")
FULL = Arg("full", bool, "answer with the whole note", False)
_LIMIT = Arg("limit", int, None, ge=1, le=MAX_LIMIT)  # the schema's bounds say it


def limit(default: int) -> Arg:
    """The number of cards a list answers, *default* when not given."""
    return replace(_LIMIT, default=default)
