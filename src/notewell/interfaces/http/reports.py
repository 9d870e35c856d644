"""A progress report of the notes the caller may see: Markdown, a standalone HTML page, or JSON."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ...errors import InvalidArgumentError
from ...search.filters import DATE_FORMS
from ...services.report_pages import BASE_URL_PATTERN, FORMATS, check_base_url, render_report
from ...services.server_api import Caller
from .answers import Document
from .context import Context
from .operations import Operation
from .schemas import FILTER_PARAMS, param

__all__ = ["ROUTES"]

_MEDIA = {"md": "text/markdown", "html": "text/html", "json": "application/json"}
_FORMATS = (*FORMATS, "json")
_NAMES = ("project", "since", "until", "tz", "format", "base_url")
_FILTER = {p["name"]: p for p in FILTER_PARAMS}
_PARAMETERS = (
    {**_FILTER["project"], "description": "only this project's notes (default: every project you may see)"},
    {**_FILTER["created_after"], "name": "since", "description": f"from this date or time (default 7d: {DATE_FORMS})"},
    {
        **_FILTER["created_after"],
        "name": "until",
        "description": "up to this date or time (default now); a relative since counts back from it",
    },
    _FILTER["tz"],
    param("format", "query", {"type": "string", "enum": list(_FORMATS)}, "md (default), html or json"),
    param(
        "base_url",
        "query",
        {"type": "string", "maxLength": 200, "pattern": f"^{BASE_URL_PATTERN}$"},
        "where the page is served, for the HTML page's links (default: this server, relative links)",
    ),
)


async def report(ctx: Context, request: Request, caller: Caller) -> tuple[Any, str]:
    q = request.query_params
    unknown = sorted(set(q.keys()) - set(_NAMES))
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(u[:40] for u in unknown[:5])}")
    fmt = q.get("format", "md")
    if fmt not in _FORMATS:
        raise InvalidArgumentError(f"format takes {', '.join(_FORMATS)}, got {fmt[:40]!r}")
    if len(q.get("base_url", "")) > 200:
        raise InvalidArgumentError("base_url is at most 200 characters")
    base_url = check_base_url(q.get("base_url"))  # refused whatever the format, as the document says
    args = {name: q[name] for name in ("project", "since", "until", "tz") if name in q}
    made = await run_in_threadpool(lambda: ctx.api.report(caller, **args))
    if fmt == "json":
        return made.to_dict(), _MEDIA[fmt]
    text = await run_in_threadpool(render_report, made, fmt, base_url=base_url or None)
    return text, _MEDIA[fmt]


ROUTES = (
    Operation(
        "GET",
        "/api/report",
        report,
        Document(tuple(_MEDIA.values()), "the report: done, open, decisions, ruled out, superseded"),
        operation_id="report",
        summary="A progress report of the notes written in a window of time (Markdown, HTML or JSON)",
        parameters=_PARAMETERS,
        errors=(400, 401, 404, 429),
    ),
)
