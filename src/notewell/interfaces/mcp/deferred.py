"""MCP at /mcp for ``notewell serve``, set up once the server answers.

The MCP SDK takes about a second to import (its protocol types are pydantic models, for
two protocol versions), so the server answers ``/healthz`` and the API at once and builds
the MCP endpoint on a thread; a request to /mcp that comes meanwhile waits for it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.to_thread
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from ...model.access_tokens import Tokens
from ...services.server_api import ServerAPI

__all__ = ["deferred_mcp_routes"]

log = logging.getLogger("notewell.mcp")


class _Deferred:
    """The /mcp endpoint: waits until the real one exists, then hands every request to it."""

    def __init__(self) -> None:
        self.app: Any = None
        self.arrived: anyio.Event | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.app is None and self.arrived is not None:
            await self.arrived.wait()
        if self.app is None:
            body = {"error": {"code": "unavailable", "message": "the MCP endpoint could not be set up"}}
            await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def deferred_mcp_routes(
    api: ServerAPI,
    tokens: Tokens,
    *,
    host: str = "127.0.0.1",
    private: bool = False,
    ready: Callable[[], None] | None = None,
    tools: str | None = None,
) -> tuple[list[BaseRoute], Any] | None:
    """The /mcp route and the lifespan that builds its endpoint in the background, serving the
    tools *tools* names (see :func:`~.groups.group_names`); None without the 'mcp' extra."""
    if importlib.util.find_spec("mcp") is None:
        return None
    endpoint = _Deferred()

    def build() -> tuple[Any, Any]:
        from .server import http_endpoint

        return http_endpoint(api, tokens, host=host, private=private, ready=ready, tools=tools)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        endpoint.arrived = anyio.Event()
        stop = anyio.Event()

        async def run() -> None:
            try:
                inner, inner_lifespan = await anyio.to_thread.run_sync(build)
            except Exception:  # noqa: BLE001 - the API goes on; /mcp answers 503
                log.exception("the MCP endpoint could not be set up")
                endpoint.arrived.set()
                return
            async with inner_lifespan(app):
                endpoint.app = inner
                endpoint.arrived.set()
                await stop.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            try:
                yield
            finally:
                stop.set()

    return [Route("/mcp", endpoint=endpoint)], lifespan
