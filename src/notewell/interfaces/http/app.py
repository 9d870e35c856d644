"""The HTTP API (Starlette): JSON over the same ServerAPI the MCP tools call.

The routes are the table in :mod:`.routes`; errors are answered as :mod:`.answers` says. A
request names its caller with ``Authorization: Bearer <token>``; a token that is not valid is
refused (never read as anonymous). Bodies are limited to :func:`body_limit` bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from ...model.access_tokens import Tokens
from ...services.server_api import ServerAPI
from .answers import STATUS, error_response, http_error
from .context import Context, body_limit
from .openapi import openapi_document
from .operations import starlette_routes
from .routes import ROUTES
from .sessions import Sessions
from .site import load_assets

__all__ = ["LOOPBACK", "STATUS", "body_limit", "make_app"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _LoopbackOnly:
    """Answer only requests whose Host is a loopback name (DNS rebinding protection)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "")
            name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]", 1)[0]
            if name.lower() not in LOOPBACK:
                message = f"this server answers requests to 127.0.0.1 or localhost, not to {host[:80]!r}"
                await error_response("misdirected", message, 421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(
    api: ServerAPI,
    tokens: Tokens,
    *,
    extra_routes: list[BaseRoute] | None = None,
    lifespan: Any = None,
    host: str = "127.0.0.1",
    ready: Callable[[], None] | None = None,
    sessions: Sessions | None = None,
) -> Starlette:
    """The Starlette application serving *api* (``extra_routes``, e.g. the MCP endpoint, come last).
    Bound to loopback, it answers only requests addressed to loopback (a web page that rebinds
    its own name to 127.0.0.1 cannot read the notes). *ready* waits for a model still loading
    in the background, before a search that needs it (off the event loop, outside the store's lock).
    *sessions*: the page's sign-in (by default, typed tokens only: no sign-in links)."""
    ctx = Context(
        api,
        tokens,
        ready=ready,
        document=openapi_document(ROUTES),
        assets=load_assets(),
        sessions=sessions or Sessions(),
    )
    routes: list[BaseRoute] = [*starlette_routes(ROUTES, ctx), *(extra_routes or [])]
    middleware = [Middleware(_LoopbackOnly)] if host in LOOPBACK else []
    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={HTTPException: http_error}, lifespan=lifespan
    )
