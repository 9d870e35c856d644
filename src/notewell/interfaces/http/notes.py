"""Notes: list, write, read, edit and delete them; what one builds on, in words and as a picture."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...errors import InvalidArgumentError
from ...model.header import LIMITS
from ...model.ids import ATTEMPT_ID_RE
from ...model.note import MODEL_MAX
from ...model.open_work import STALE_AGE
from ...services.server_api import MAX_OFFSET, Caller
from .answers import Json, Svg
from .context import Context
from .inputs import fields, int_param, note_ref, query_params, text_field
from .operations import Operation
from .schemas import (
    FILTER_PARAMS,
    LIMIT,
    NOTE_ID,
    OBJECT,
    PROJECT,
    REVISION,
    TAG,
    TEXT,
    WHEN,
    body,
    id_schema,
    label,
    or_null,
    param,
    ref,
)

__all__ = ["ROUTES"]


async def list_notes(ctx: Context, request: Request, caller: Caller) -> Any:
    params = query_params(request)
    if {"query", "q", "mode", "wait"} & set(request.query_params.keys()):
        raise InvalidArgumentError("GET /api/notes lists notes; search with GET /api/notes/search?query=...")
    return await run_in_threadpool(ctx.api.list_notes, caller, **params)


async def add_note(ctx: Context, request: Request, caller: Caller) -> Any:
    data = await ctx.body(request)
    fields(data, "text", "attempt_id", "model")
    text = text_field(data, "text")
    attempt = text_field(data, "attempt_id", required=False)
    model = text_field(data, "model", required=False)
    return await run_in_threadpool(ctx.api.add_note, caller, text, attempt_id=attempt, model=model)


async def get_note(ctx: Context, request: Request, caller: Caller) -> Any:
    note_id = note_ref(request)
    attempt = request.query_params.get("working_attempt_id")
    revision = int_param(request, "revision")
    render = request.query_params.get("render")
    if render not in (None, "html"):
        raise InvalidArgumentError(f"render takes 'html', got {render[:40]!r}")
    note = await run_in_threadpool(ctx.api.get_note, caller, note_id, working_attempt_id=attempt, revision=revision)
    if render == "html":
        from .web.render import render_markdown

        # Off the event loop, and cached per note revision.
        at = f"{note['id']}@{note['revision']}"
        note["body_html"] = await run_in_threadpool(render_markdown, note["body"], isolated=True, note=at)
        # The page offers Edit only where saving will work, by the service's own checks.
        note["edit_refusal"] = await run_in_threadpool(ctx.api.edit_refusal, caller, note["id"])
        note["may_edit"] = note["edit_refusal"] is None
    return note


async def edit_note(ctx: Context, request: Request, caller: Caller) -> Any:
    note_id = note_ref(request)
    data = await ctx.body(request)
    # One change per request, so that a request either happens whole or not at all.
    if not (set(data) == {"add_tags"} or ("text" in data and set(data) <= {"text", "keep_header", "base_revision"})):
        raise InvalidArgumentError(
            "PATCH takes {'text': ...} to replace the text (with 'keep_header': true, the body;"
            " with 'base_revision': N, only if unchanged since), or {'add_tags': [...]}"
        )
    if "text" in data:
        text = text_field(data, "text")
        keep, base = data.get("keep_header", False), data.get("base_revision")
        return await run_in_threadpool(ctx.api.edit_note, caller, note_id, text, keep_header=keep, base_revision=base)
    return await run_in_threadpool(ctx.api.add_tag, caller, note_id, data["add_tags"])


async def delete_note(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.delete_note, caller, note_ref(request))


async def links(ctx: Context, request: Request, caller: Caller) -> Any:
    depth = int_param(request, "depth")
    note_id = note_ref(request)
    return await run_in_threadpool(ctx.api.links, caller, note_id, depth=1 if depth is None else depth)


async def graph(ctx: Context, request: Request, caller: Caller) -> str:
    from .web.pictures import graph_svg

    found = await run_in_threadpool(ctx.api.links, caller, note_ref(request), depth=1)
    return await run_in_threadpool(graph_svg, found, found["builds_on"], found["built_on_by"])


_CARDS = {"type": "object", "required": ["cards"], "properties": {"cards": {"type": "array", "items": ref("Card")}}}
_STALE = {
    "type": "object",
    "required": ["older_than", "cards"],
    "properties": {"older_than": {"type": "string"}, "cards": {"type": "array", "items": ref("Card")}},
}


async def stale(ctx: Context, request: Request, caller: Caller) -> Any:
    q = request.query_params
    unknown = sorted(set(q.keys()) - {"older_than", "project", "limit"})
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(u[:40] for u in unknown[:5])}")
    given = {name: q[name] for name in ("older_than", "project") if name in q}
    return await run_in_threadpool(ctx.api.stale, caller, limit=int_param(request, "limit"), **given)


_REPLACE = {
    "type": "object",
    "required": ["text"],
    "properties": {
        "text": TEXT,
        "keep_header": {"type": "boolean", "description": "text is the new body; the header stays as it is"},
        "base_revision": {
            "type": "integer",
            "minimum": 1,
            "description": "the revision the text was written from: 409 conflict if the note changed since",
        },
    },
    "additionalProperties": False,
}
_ADD_TAGS = {
    "type": "object",
    "required": ["add_tags"],
    "additionalProperties": False,
    "properties": {
        "add_tags": {
            "type": "array",
            "items": TAG,
            "minItems": 1,
            "description": f"tags to add (a note holds at most {LIMITS['tags']} different ones)",
        }
    },
}
# PATCH: exactly one change, the text or tags to add.
_ONE_CHANGE = {"required": True, "content": {"application/json": {"schema": {"oneOf": [_REPLACE, _ADD_TAGS]}}}}

ROUTES = (
    Operation(
        "GET",
        "/api/notes",
        list_notes,
        Json(_CARDS, "cards"),
        operation_id="list_notes",
        summary="Notes, most recently updated first",
        parameters=(
            LIMIT,
            param("offset", "query", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, "skip"),
            *FILTER_PARAMS,
        ),
        errors=(400, 401, 404),
    ),
    Operation(
        "POST",
        "/api/notes",
        add_note,
        Json(ref("Note"), "the new note", status=201),
        operation_id="add_note",
        summary="Write a note (one finding), on your running attempt if given",
        request_body=body(
            ["text"],
            {"text": TEXT, "attempt_id": or_null(id_schema(ATTEMPT_ID_RE)), "model": or_null(label(MODEL_MAX))},
        ),
        errors=(400, 401, 403, 404, 409, 413, 429),
    ),
    # A note by id, or by its path in the store (research/go-tips.md: hence :path, links first).
    Operation(
        "GET",
        "/api/notes/{note_id:path}/links",
        links,
        Json(OBJECT, "links"),
        operation_id="links",
        summary="What a note builds on and what builds on it",
        parameters=(NOTE_ID, param("depth", "query", {"type": "integer", "minimum": 1, "maximum": 10}, "steps out")),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/notes/{note_id:path}/graph.svg",
        graph,
        Svg("the graph"),
        operation_id="note_graph",
        summary="A picture (SVG) of what a note builds on and what builds on it; empty when nothing",
        parameters=(NOTE_ID,),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/notes/{note_id:path}",
        get_note,
        Json(ref("Note"), "the note"),
        operation_id="get_note",
        summary="A whole note: text, parsed header, body, attempt, backlinks",
        parameters=(
            NOTE_ID,
            param("working_attempt_id", "query", id_schema(ATTEMPT_ID_RE), "record the read on it"),
            param("revision", "query", REVISION, "an earlier text"),
            param(
                "render",
                "query",
                {"type": "string", "enum": ["html"]},
                "for the page: add body_html (safe HTML), may_edit and edit_refusal (why not)",
            ),
        ),
        # working_attempt_id records the read: a write, on a running attempt.
        errors=(400, 401, 403, 404, 409, 429),
    ),
    Operation(
        "PATCH",
        "/api/notes/{note_id:path}",
        edit_note,
        Json(ref("Note"), "the note"),
        operation_id="edit_note",
        summary="Replace a note's text, or add tags to its header",
        parameters=(NOTE_ID,),
        request_body=_ONE_CHANGE,
        errors=(400, 401, 403, 404, 409, 413, 429),
    ),
    Operation(
        "DELETE",
        "/api/notes/{note_id:path}",
        delete_note,
        Json(OBJECT, "deleted"),
        operation_id="delete_note",
        summary="Remove a note (its text stays in the history)",
        parameters=(NOTE_ID,),
        errors=(400, 401, 403, 404, 409, 429),
    ),
    Operation(
        "GET",
        "/api/stale",
        stale,
        Json(_STALE, "the open blockers and actions left hanging, most recently updated first"),
        operation_id="stale",
        summary="Open blockers and actions not updated for older_than that no later note builds on or supersedes",
        parameters=(
            param("older_than", "query", WHEN, f"not updated since: 14d, 2w, 3m or a date (default {STALE_AGE})"),
            param("project", "query", PROJECT, "only this project's"),
            LIMIT,
        ),
        errors=(400, 401, 404, 429),
    ),
)
