"""A note's revisions: when each was written and by whom, and what changed between any two."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...errors import InvalidArgumentError, NotFoundError
from ...services.server_api import Caller, ServerAPI
from .answers import Json
from .context import Context
from .inputs import int_param, note_ref
from .operations import Operation
from .schemas import NOTE_ID, REVISION, param

__all__ = ["ROUTES", "revision_diff"]


async def history(ctx: Context, request: Request, caller: Caller) -> Any:
    if request.query_params:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(sorted(request.query_params.keys()))}")
    return await run_in_threadpool(ctx.api.history, caller, note_ref(request))


def revision_diff(api: ServerAPI, caller: Caller, ref: str, old: int | None, new: int | None) -> dict[str, Any]:
    """What changed from revision *old* to *new* of a note (by default the current one and the
    one before it), each side with when and by whom; both read as the caller may read them."""
    from .web.diff import line_diff

    revisions = [r for r in api.history(caller, ref)["revisions"] if r["op"] != "delete"]
    by_number = {r["revision"]: r for r in revisions}
    current = next((r["revision"] for r in revisions if r["current"]), max(by_number, default=1))
    new = current if new is None else new
    old = new - 1 if old is None else old
    for number in (old, new):
        if number not in by_number:
            raise NotFoundError(f"note {ref} has no revision {number}")
        if not by_number[number]["kept"]:
            raise NotFoundError(f"the text of revision {number} of note {ref} was not kept")
    notes = [api.get_note(caller, ref, revision=number) for number in (old, new)]
    sides = {
        name: {key: by_number[number][key] for key in ("revision", "at", "author", "op", "size")}
        for name, number in (("from", old), ("to", new))
    }
    return {"id": notes[1]["id"], **sides, **line_diff(notes[0]["text"], notes[1]["text"])}


async def diff(ctx: Context, request: Request, caller: Caller) -> Any:
    unknown = set(request.query_params.keys()) - {"from", "to"}
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    old, new = int_param(request, "from"), int_param(request, "to")
    for name, value in (("from", old), ("to", new)):
        if value is not None and value < 1:
            raise InvalidArgumentError(f"{name} is a revision, 1 or more; got {value}")
    return await run_in_threadpool(revision_diff, ctx.api, caller, note_ref(request), old, new)


_SIDE = {
    "type": "object",
    "properties": {
        "revision": {"type": "integer"},
        "at": {"type": "string"},
        "author": {"type": ["string", "null"]},
        "op": {"type": "string"},
        "size": {"type": ["integer", "null"]},
    },
}
_LINE = {
    "type": "object",
    "required": ["op", "old", "new", "text"],
    "properties": {
        "op": {"type": "string", "enum": ["=", "+", "-"]},
        "old": {"type": ["integer", "null"], "description": "its line in the older text"},
        "new": {"type": ["integer", "null"], "description": "its line in the newer text"},
        "text": {"type": "string", "description": "the line, as text (never markup)"},
    },
}
_DIFF = {
    "type": "object",
    "required": ["id", "from", "to", "hunks", "added", "removed", "coarse", "truncated"],
    "properties": {
        "id": {"type": "string"},
        "from": _SIDE,
        "to": _SIDE,
        "hunks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "old_start": {"type": "integer"},
                    "new_start": {"type": "integer"},
                    "lines": {"type": "array", "items": _LINE},
                },
            },
        },
        "added": {"type": "integer"},
        "removed": {"type": "integer"},
        "coarse": {"type": "boolean", "description": "a long changed part shown whole, as removed and added"},
        "truncated": {"type": "boolean", "description": "more lines changed than are listed"},
    },
}
_HISTORY = {
    "type": "object",
    "required": ["revisions"],
    "properties": {
        "revisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "revision": {"type": "integer"},
                    "op": {"type": "string"},
                    "at": {"type": ["string", "null"]},
                    "author": {"type": ["string", "null"]},
                    "size": {"type": ["integer", "null"]},
                    "current": {"type": "boolean"},
                    "kept": {"type": "boolean", "description": "its text can be read (get_note with revision)"},
                },
            },
        }
    },
}

# Before the notes' routes: a note's path ends in .md, so .../history and .../diff are these.
ROUTES = (
    Operation(
        "GET",
        "/api/notes/{note_id:path}/history",
        history,
        Json(_HISTORY, "the revisions"),
        operation_id="note_history",
        summary="A note's revisions, oldest first: when, by whom, how large, and whether its text is kept",
        parameters=(NOTE_ID,),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/notes/{note_id:path}/diff",
        diff,
        Json(_DIFF, "the diff"),
        operation_id="note_diff",
        summary="What changed between two revisions of a note, line by line (default: the last change)",
        parameters=(
            NOTE_ID,
            param("from", "query", REVISION, "the older revision (default: the one before to)"),
            param("to", "query", REVISION, "the newer revision (default: the current one)"),
        ),
        errors=(400, 401, 404),
    ),
)
