"""What every handler is given beside its request: the API, the tokens, the page's sessions, and
the server's own parts; and who a request comes from (a bearer token, or the page's session cookie)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from ...errors import ForbiddenError, InvalidArgumentError, NoteTooLargeError, UnauthorizedError
from ...model.access_tokens import Tokens
from ...services.server_api import Caller, ServerAPI, caller_from_header
from .sessions import Session, Sessions

__all__ = ["SAFE_METHODS", "Context", "body_limit", "cookie_name", "same_origin"]

SAFE_METHODS = ("GET", "HEAD")


def cookie_name(request: Request) -> str:
    """The session cookie's name on this server: with its port, since a browser sends a cookie
    for 127.0.0.1 to every port, and two servers there must not end each other's sessions."""
    server = request.scope.get("server") or ("", 0)
    return f"notewell_session_{server[1] or 0}"


def same_origin(request: Request) -> bool:
    """Whether the request says it comes from a page of this server (its Origin header). A
    browser sends Origin with every request that is not a GET or HEAD; SameSite=Strict keeps
    the cookie from other sites, and this, from a page on another port of the same host."""
    origin = request.headers.get("origin")
    host = request.headers.get("host")
    return origin is not None and host is not None and origin.lower() == f"{request.url.scheme}://{host}".lower()


def body_limit(api: ServerAPI) -> int:
    """Bytes a request body may have: a note at the store's limit, JSON-escaped, and room around it."""
    return api.store.max_bytes * 2 + 64 * 1024


@dataclass(frozen=True)
class Context:
    """One server's state, made once by ``make_app`` and passed to each handler.

    *ready* waits for a model still loading in the background; *document* is the OpenAPI
    document served; *assets* are the web page's files by name, with their media types."""

    api: ServerAPI
    tokens: Tokens
    ready: Callable[[], None] | None = None
    document: dict[str, Any] = field(default_factory=dict)
    assets: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    sessions: Sessions = field(default_factory=Sessions)

    @property
    def limit(self) -> int:
        return body_limit(self.api)

    def caller(self, request: Request) -> Caller:
        """The caller a request's bearer token names, or else its session cookie; a token or a
        session that is not valid is refused (never read as anonymous), and so is a write with
        the cookie from a page that is not this server's."""
        header = request.headers.get("authorization")
        value = request.cookies.get(cookie_name(request))
        if header is not None or value is None:
            return caller_from_header(self.tokens, header)
        session = self.session(value)
        # A page on another port of this host is "same-site": SameSite=Strict still sends it the
        # cookie. Browsers say where a request comes from; a GET can write too (a read recorded).
        if request.headers.get("sec-fetch-site") in ("same-site", "cross-site"):
            raise ForbiddenError("the page's cookie signs in requests from the page itself, not from another site")
        if request.method not in SAFE_METHODS and not same_origin(request):
            raise ForbiddenError("a write signed in by the page's cookie must come from the page itself")
        return Caller(token=session.token)

    def session(self, value: str) -> Session:
        """The live session a cookie names, its typed token checked again (revoked or expired
        since: the session ends with it); UnauthorizedError when there is none."""
        session = self.sessions.find(value)
        if session is None:
            raise UnauthorizedError(
                "your sign-in has ended (expired, signed out, or the server restarted): sign in again"
            )
        if session.secret is not None:
            token = self.tokens.verify(session.secret)
            if token is None or token.expired():
                self.sessions.end(value)
                raise UnauthorizedError(f"the token {session.token.name!r} this page signed in with is no longer valid")
        return session

    async def body(self, request: Request) -> dict[str, Any]:
        """The request's JSON object, refused past :attr:`limit` bytes."""
        limit = self.limit
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            if int(declared) <= 4 * limit:
                # Read and drop a body not far over the limit, so that a client still sending
                # it reads the 413 instead of a broken connection; a larger one is cut off.
                async for _chunk in request.stream():
                    pass
            raise NoteTooLargeError(f"the request body is {declared} bytes; at most {limit}")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise NoteTooLargeError(f"the request body is over {limit} bytes")
            chunks.append(chunk)
        try:
            data = json.loads(b"".join(chunks) or b"null")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise InvalidArgumentError("the request body must be JSON (and not nested too deeply)") from None
        if not isinstance(data, dict):
            raise InvalidArgumentError("the request body must be a JSON object")
        return data
