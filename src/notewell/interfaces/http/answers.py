"""How an endpoint answers: JSON, an SVG picture, or a response of its own.

Errors are ``{"error": {"code", "message"}}`` with the status :data:`STATUS` gives their
code, mapped here and nowhere else. Each kind of answer also says what the OpenAPI document
shows of it: its success response, and the security its endpoint reads.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...errors import ERROR_KINDS, NotewellError
from ...services.server_api import Caller
from .context import Context
from .schemas import json_response, svg_response

__all__ = [
    "STATUS",
    "Answer",
    "Document",
    "Endpoint",
    "Json",
    "Plain",
    "Svg",
    "error_response",
    "exception_response",
    "http_error",
]

log = logging.getLogger("notewell.http")

# HTTP statuses come from the one error table.
STATUS = {kind.code: kind.http_status for kind in ERROR_KINDS}
_HTTP_CODES = {400: "invalid_argument", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
# A bearer token, or none: the endpoint answers anonymous callers what anyone may see.
_BEARER_OR_NONE: list[dict[str, list[str]]] = [{"bearer": []}, {}]

Endpoint = Callable[[Request], Awaitable[Response]]
Work = Callable[[Context, Request, Caller], Awaitable[Any]]


def error_response(code: str, message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def exception_response(exc: NotewellError) -> JSONResponse:
    headers = {}
    if exc.code == "unauthorized":
        headers["WWW-Authenticate"] = 'Bearer realm="notewell"'
    if exc.code == "rate_limited":
        headers["Retry-After"] = str(max(1, round(getattr(exc, "retry_after", 1))))
    return error_response(exc.code, exc.message, STATUS.get(exc.code, 500), headers)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, say) in the same shape."""
    status = getattr(exc, "status_code", 500)
    code = _HTTP_CODES.get(status, "error")
    headers = getattr(exc, "headers", None)
    return error_response(code, str(getattr(exc, "detail", "")) or code.replace("_", " "), status, headers)


def _answering(ctx: Context, make: Callable[[Request, Caller], Awaitable[Response]]) -> Endpoint:
    """An endpoint: the caller from the request, *make*'s answer, and any error as JSON."""

    async def run(request: Request) -> Response:
        try:
            return await make(request, ctx.caller(request))
        except NotewellError as exc:
            return exception_response(exc)
        except Exception:  # a bug: logged, answered as one, the server goes on
            log.exception("internal error on %s %s", request.method, request.url.path)
            return error_response("internal", "internal error (logged by the server)", 500)

    return run


@dataclass(frozen=True)
class Json:
    """The handler's data as JSON, with *status*; *schema* and *description* document it."""

    schema: dict[str, Any]
    description: str
    status: int = 200
    # Reads the caller and the store: a bad token, a busy store or a bug answer the error shape.
    guarded: ClassVar[bool] = True
    security: ClassVar[list[dict[str, list[str]]]] = _BEARER_OR_NONE

    def endpoint(self, ctx: Context, work: Work) -> Endpoint:
        async def json_answer(request: Request, caller: Caller) -> Response:
            data = await work(ctx, request, caller)
            # Made on a thread: a note of 1 MiB is a few MB of JSON, which on the event loop held
            # every other request for as long as it took.
            return await run_in_threadpool(JSONResponse, data, self.status)

        return _answering(ctx, json_answer)

    def responses(self) -> dict[str, Any]:
        return {str(self.status): json_response(self.schema, self.description)}


# Opened on its own, an SVG is a document: it may run nothing and load nothing.
_SVG_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


@dataclass(frozen=True)
class Svg:
    """A picture made on the server (every text in it escaped; empty: nothing to draw, and the
    page shows no picture), or the JSON error."""

    description: str
    guarded: ClassVar[bool] = True
    security: ClassVar[list[dict[str, list[str]]]] = _BEARER_OR_NONE

    def endpoint(self, ctx: Context, work: Work) -> Endpoint:
        async def svg_answer(request: Request, caller: Caller) -> Response:
            svg = await work(ctx, request, caller)
            return Response(svg, media_type="image/svg+xml; charset=utf-8", headers=_SVG_HEADERS)

        return _answering(ctx, svg_answer)

    def responses(self) -> dict[str, Any]:
        return {"200": svg_response(self.description)}


@dataclass(frozen=True)
class Plain:
    """The handler's own response, made from the request alone: no caller read, no store met.
    Documented (when it is) by *schema* and *description*."""

    schema: dict[str, Any] | None = None
    description: str = ""
    guarded: ClassVar[bool] = False
    security: ClassVar[list[dict[str, list[str]]]] = [{}]

    def endpoint(self, ctx: Context, work: Callable[[Context, Request], Awaitable[Response]]) -> Endpoint:
        async def run(request: Request) -> Response:
            return await work(ctx, request)

        return run

    def responses(self) -> dict[str, Any]:
        return {} if self.schema is None else {"200": json_response(self.schema, self.description)}


# A document made on the server runs nothing and loads nothing, opened as a page or saved.
_DOCUMENT_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
}


@dataclass(frozen=True)
class Document:
    """A text the handler makes in one of *media* types: it answers ``(text, media type)``
    (an ``application/json`` one as data, sent as JSON), or the JSON error."""

    media: tuple[str, ...]
    description: str
    guarded: ClassVar[bool] = True
    security: ClassVar[list[dict[str, list[str]]]] = _BEARER_OR_NONE

    def endpoint(self, ctx: Context, work: Work) -> Endpoint:
        async def document_answer(request: Request, caller: Caller) -> Response:
            body, media = await work(ctx, request, caller)
            if media == "application/json":
                return await run_in_threadpool(JSONResponse, body)
            return Response(body, media_type=f"{media}; charset=utf-8", headers=_DOCUMENT_HEADERS)

        return _answering(ctx, document_answer)

    def responses(self) -> dict[str, Any]:
        shapes = {m: {"type": "object"} if m == "application/json" else {"type": "string"} for m in self.media}
        content = {m: {"schema": shape} for m, shape in shapes.items()}
        return {"200": {"description": self.description, "content": content}}


Answer = Json | Svg | Document | Plain
