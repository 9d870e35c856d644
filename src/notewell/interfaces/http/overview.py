"""The store at a glance: every tag with its count, and a summary by kind."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...errors import InvalidArgumentError
from ...services.server_api import Caller
from .answers import Json
from .context import Context
from .inputs import flag
from .operations import Operation
from .schemas import OBJECT, param

__all__ = ["ROUTES"]


async def list_tags(ctx: Context, request: Request, caller: Caller) -> Any:
    unknown = set(request.query_params.keys()) - {"notes", "tag"}
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    notes = "notes" in request.query_params and flag("notes", request.query_params["notes"])
    tag = request.query_params.get("tag")
    return await run_in_threadpool(ctx.api.list_tags, caller, notes=notes, tag=tag)


async def notes_summary(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.notes_summary, caller)


ROUTES = (
    Operation(
        "GET",
        "/api/tags",
        list_tags,
        Json(OBJECT, "tags"),
        operation_id="list_tags",
        summary="Every tag with its count",
        parameters=(
            param("notes", "query", {"type": "boolean"}, "also each note's tags and summary"),
            param("tag", "query", {"type": "string"}, "with notes: only this tag's notes"),
        ),
        errors=(400, 401),
    ),
    Operation(
        "GET",
        "/api/summary",
        notes_summary,
        Json(OBJECT, "summary"),
        operation_id="notes_summary",
        summary="Counts by kind and the most recent notes",
        errors=(401,),
    ),
)
