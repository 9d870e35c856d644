"""Attempts: start and end one, read it, what was read on it, and its picture."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...model.note import MODEL_MAX
from ...model.timestamps import now_iso
from ...services.server_api import Caller
from .answers import Json, Svg
from .context import Context
from .inputs import fields, text_field
from .operations import Operation
from .schemas import ATTEMPT_ID, BLANK, OBJECT, PROJECT, TEXT, body, label, or_null

__all__ = ["ROUTES"]


async def start_attempt(ctx: Context, request: Request, caller: Caller) -> Any:
    data = await ctx.body(request)
    fields(data, "project", "model", "campaign")
    project = text_field(data, "project")
    model = text_field(data, "model", required=False)
    campaign = text_field(data, "campaign", required=False)
    return await run_in_threadpool(ctx.api.start_attempt, caller, project, model=model, campaign=campaign)


async def get_attempt(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.get_attempt, caller, request.path_params["attempt_id"])


async def end_attempt(ctx: Context, request: Request, caller: Caller) -> Any:
    data = await ctx.body(request)
    fields(data, "outcome", "summary")
    outcome = text_field(data, "outcome")
    summary = text_field(data, "summary", required=False)
    attempt = request.path_params["attempt_id"]
    return await run_in_threadpool(ctx.api.end_attempt, caller, attempt, outcome=outcome, summary=summary)


async def attempt_reads(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.attempt_reads, caller, request.path_params["attempt_id"])


async def picture(ctx: Context, request: Request, caller: Caller) -> str:
    from .web.pictures import attempt_svg

    api, attempt_id = ctx.api, request.path_params["attempt_id"]
    attempt = await run_in_threadpool(api.get_attempt, caller, attempt_id)
    notes = await run_in_threadpool(api.list_notes, caller, limit=100, attempt_id=attempt_id)
    reads = await run_in_threadpool(api.attempt_reads, caller, attempt_id)
    marks = [{"note": r["note_id"], "title": r["title"], "at": r["at"]} for r in reads["reads"]]
    return await run_in_threadpool(attempt_svg, attempt, notes["cards"], marks, now=now_iso())


# An outcome: succeeded, failed, abandoned or another short word, in any case (the Kelvin
# sign lowers to k), blanks around it dropped.
_WORD = r"A-Za-z\u212a"
_OUTCOME = {"type": "string", "pattern": rf"^[{BLANK}]*[{_WORD}][{_WORD}0-9_-]{{0,29}}[{BLANK}]*$"}

ROUTES = (
    Operation(
        "POST",
        "/api/attempts",
        start_attempt,
        Json(OBJECT, "the attempt", status=201),
        operation_id="start_attempt",
        summary="Start a run on a project; notes written with its id land on it",
        request_body=body(
            ["project"], {"project": PROJECT, "model": or_null(label(MODEL_MAX)), "campaign": or_null(PROJECT)}
        ),
        errors=(400, 401, 403, 413, 429),
    ),
    Operation(
        "GET",
        "/api/attempts/{attempt_id}",
        get_attempt,
        Json(OBJECT, "the attempt"),
        operation_id="get_attempt",
        summary="An attempt",
        parameters=(ATTEMPT_ID,),
        errors=(400, 401, 404),
    ),
    Operation(
        "POST",
        "/api/attempts/{attempt_id}/end",
        end_attempt,
        Json(OBJECT, "the attempt"),
        operation_id="end_attempt",
        summary="End your attempt with an outcome (and a summary note); its notes freeze",
        parameters=(ATTEMPT_ID,),
        request_body=body(["outcome"], {"outcome": _OUTCOME, "summary": or_null(TEXT)}),
        errors=(400, 401, 403, 404, 409, 413, 429),
    ),
    Operation(
        "GET",
        "/api/attempts/{attempt_id}/reads",
        attempt_reads,
        Json(OBJECT, "reads"),
        operation_id="attempt_reads",
        summary="The notes read while working on an attempt, oldest first",
        parameters=(ATTEMPT_ID,),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/attempts/{attempt_id}/picture.svg",
        picture,
        Svg("the attempt"),
        operation_id="attempt_picture",
        summary="A picture (SVG) of an attempt: its notes, what it read, its outcome, on its time line",
        parameters=(ATTEMPT_ID,),
        errors=(400, 401, 404),
    ),
)
