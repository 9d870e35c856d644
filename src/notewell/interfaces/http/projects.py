"""Projects: the list, one's brief and attempts, and its time line as a picture."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...model.timestamps import now_iso
from ...services.server_api import Caller
from .answers import Json, Svg
from .context import Context
from .inputs import int_param
from .operations import Operation
from .schemas import LIMIT, OBJECT, PROJECT_PATH

__all__ = ["ROUTES"]


async def list_projects(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.list_projects, caller)


async def brief(ctx: Context, request: Request, caller: Caller) -> Any:
    return await run_in_threadpool(ctx.api.brief, caller, request.path_params["project"])


async def list_attempts(ctx: Context, request: Request, caller: Caller) -> Any:
    limit = int_param(request, "limit")
    return await run_in_threadpool(ctx.api.list_attempts, caller, request.path_params["project"], limit=limit)


async def timeline(ctx: Context, request: Request, caller: Caller) -> str:
    from .web.pictures import timeline_svg

    answer = await run_in_threadpool(ctx.api.list_attempts, caller, request.path_params["project"], limit=100)
    projects = await run_in_threadpool(ctx.api.list_projects, caller)
    named = {a["project"] for a in answer["attempts"]}  # the project as stored (a slug may name it)
    total = next((p["attempts"] for p in projects["projects"] if p["name"] in named), None)
    return await run_in_threadpool(timeline_svg, answer["attempts"], now=now_iso(), total=total)


ROUTES = (
    Operation(
        "GET",
        "/api/projects",
        list_projects,
        Json(OBJECT, "projects"),
        operation_id="list_projects",
        summary="Every project you may see: settings, counts, last activity",
        errors=(401,),
    ),
    Operation(
        "GET",
        "/api/projects/{project}/brief",
        brief,
        Json(OBJECT, "the brief"),
        operation_id="brief",
        summary="The one thing to read first on a project: its digest, the recent stream, what is new",
        parameters=(PROJECT_PATH,),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/projects/{project}/attempts",
        list_attempts,
        Json(OBJECT, "attempts"),
        operation_id="list_attempts",
        summary="A project's attempts, newest first: author, model, outcome, times",
        parameters=(PROJECT_PATH, LIMIT),
        errors=(400, 401, 404),
    ),
    Operation(
        "GET",
        "/api/projects/{project}/timeline.svg",
        timeline,
        Svg("the timeline"),
        operation_id="project_timeline",
        summary="A picture (SVG) of a project's attempts on a time line, coloured by outcome",
        parameters=(PROJECT_PATH,),
        errors=(400, 401, 404),
    ),
)
