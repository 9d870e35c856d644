"""Signing in to the page and out: the one-time link, a typed token, who is signed in.

The session lives in an HttpOnly, SameSite=Strict cookie (see :mod:`.sessions`); these answers
set and clear it. A link's code is never in an answer: it is said only where ``notewell serve``
prints, so only the person at that terminal can open it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from ...errors import ForbiddenError, NotewellError, UnauthorizedError
from ...services.server_api import caller_from_header
from .answers import Plain, exception_response
from .context import Context, cookie_name, same_origin
from .inputs import fields, text_field
from .operations import Operation
from .schemas import body

__all__ = ["ROUTES"]

# Nothing about signing in is kept by a cache, nor told to the page a link came from.
_PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
_WHO = {
    "type": "object",
    "required": ["signed_in", "name", "owner", "read_only", "ends_at", "via", "links"],
    "properties": {
        "signed_in": {"type": "boolean"},
        "name": {"type": ["string", "null"], "description": "the handle notes are written under"},
        "owner": {"type": "boolean", "description": "sees and edits everything"},
        "read_only": {"type": "boolean"},
        "ends_at": {"type": ["string", "null"], "description": "when the session ends (UTC)"},
        "via": {"type": ["string", "null"], "enum": ["link", "token", "bearer", None]},
        "links": {"type": "boolean", "description": "this server prints sign-in links (POST /api/session/link)"},
    },
}
_PRINTED = {
    "type": "object",
    "required": ["printed", "expires_in"],
    "properties": {"printed": {"type": "boolean"}, "expires_in": {"type": "number"}},
}


def _answering(work: Callable[[Context, Request], Awaitable[Response]]) -> Callable[..., Awaitable[Response]]:
    """A handler whose errors are answered in the error shape, as every API operation's are."""

    async def run(ctx: Context, request: Request) -> Response:
        try:
            return await work(ctx, request)
        except NotewellError as exc:
            return exception_response(exc)

    return run


def _who(ctx: Context, **fields: Any) -> dict[str, Any]:
    out = {"signed_in": False, "name": None, "owner": False, "read_only": False, "ends_at": None, "via": None}
    return {**out, **fields, "links": ctx.sessions.links}


def _set_cookie(response: Response, request: Request, value: str, seconds: float) -> None:
    response.set_cookie(
        cookie_name(request),
        value,
        max_age=max(1, int(seconds)),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _clear_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(cookie_name(request), path="/", httponly=True, samesite="strict")


async def open_link(ctx: Context, request: Request) -> Response:
    """The link printed by ``notewell serve``: its code swapped, once, for an owner session."""
    found = ctx.sessions.redeem(request.query_params.get("code"))
    if found is None:
        return RedirectResponse("/?signin=failed", 303, headers=_PRIVATE)
    value, session = found
    response = RedirectResponse("/", 303, headers=_PRIVATE)
    _set_cookie(response, request, value, ctx.sessions.session_seconds)
    return response


@_answering
async def who(ctx: Context, request: Request) -> Response:
    """Who the page is signed in as; a cookie whose session has ended is cleared, not refused."""
    header = request.headers.get("authorization")
    if header is not None:
        token = caller_from_header(ctx.tokens, header).token
        assert token is not None  # a header names a token, or is refused
        return JSONResponse(
            _who(ctx, signed_in=True, name=token.name, owner=token.owner, read_only=token.read_only, via="bearer"),
            headers=_PRIVATE,
        )
    value = request.cookies.get(cookie_name(request))
    if value is None:
        return JSONResponse(_who(ctx), headers=_PRIVATE)
    try:
        session = ctx.session(value)
    except UnauthorizedError:
        response = JSONResponse(_who(ctx), headers=_PRIVATE)
        _clear_cookie(response, request)
        return response
    token = session.token
    return JSONResponse(
        _who(
            ctx,
            signed_in=True,
            name=token.name,
            owner=token.owner,
            read_only=token.read_only,
            ends_at=session.ends_at,
            via=session.via,
        ),
        headers=_PRIVATE,
    )


@_answering
async def sign_in(ctx: Context, request: Request) -> Response:
    """A token typed into the page, swapped for a session: the page keeps no secret."""
    if not same_origin(request):
        raise ForbiddenError("signing in with a token is done from the page itself")
    data = await ctx.body(request)
    fields(data, "token")
    secret = str(text_field(data, "token")).strip()
    token = caller_from_header(ctx.tokens, f"Bearer {secret}").token
    assert token is not None
    old = request.cookies.get(cookie_name(request))
    if old is not None:
        ctx.sessions.end(old)
    value, session = ctx.sessions.sign_in(token, secret)
    answer = _who(
        ctx,
        signed_in=True,
        name=token.name,
        owner=token.owner,
        read_only=token.read_only,
        ends_at=session.ends_at,
        via="token",
    )
    response = JSONResponse(answer, headers=_PRIVATE)
    _set_cookie(response, request, value, session.ends - time.time())
    return response


@_answering
async def sign_out(ctx: Context, request: Request) -> Response:
    """End the page's session and clear its cookie."""
    value = request.cookies.get(cookie_name(request))
    if value is not None:
        if not same_origin(request):
            raise ForbiddenError("signing out is done from the page itself")
        ctx.sessions.end(value)
    response = JSONResponse(_who(ctx), headers=_PRIVATE)
    _clear_cookie(response, request)
    return response


@_answering
async def print_link(ctx: Context, request: Request) -> Response:
    """A new sign-in link, printed where ``notewell serve`` runs (never in this answer)."""
    if not same_origin(request):
        raise ForbiddenError("a sign-in link is asked for from the page itself")
    ctx.sessions.new_link()
    return JSONResponse({"printed": True, "expires_in": ctx.sessions.code_seconds}, headers=_PRIVATE)


_SECRET = {"type": "string", "minLength": 1, "maxLength": 1000, "description": "a token's secret (nwt_...)"}

ROUTES = (
    Operation("GET", "/signin", open_link, Plain()),
    Operation(
        "GET",
        "/api/session",
        who,
        Plain(_WHO, "who the page is signed in as"),
        operation_id="who_am_i",
        summary="Who the page (its session cookie) or the bearer token is signed in as",
        errors=(401,),
    ),
    Operation(
        "POST",
        "/api/session",
        sign_in,
        Plain(_WHO, "signed in: the session cookie is set"),
        operation_id="sign_in",
        summary="Sign the page in with a token: an HttpOnly session cookie instead of the secret in the page",
        request_body=body(["token"], {"token": _SECRET}),
        errors=(400, 401, 403, 413),
    ),
    Operation(
        "DELETE",
        "/api/session",
        sign_out,
        Plain(_WHO, "signed out: the session cookie is cleared"),
        operation_id="sign_out",
        summary="Sign the page out: its session ends",
        errors=(403,),
    ),
    Operation(
        "POST",
        "/api/session/link",
        print_link,
        Plain(_PRINTED, "a link was printed"),
        operation_id="sign_in_link",
        summary="Print a new one-time sign-in link in the terminal notewell serve runs in (loopback servers)",
        errors=(403, 404, 429),
    ),
)
