"""One HTTP route as data: what serves it, and what the OpenAPI document says of it.

Each resource module lists its :class:`Operation` values; :mod:`.routes` puts them in one
table, from which ``make_app`` builds the Starlette routes and ``openapi_document`` the paths.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from starlette.routing import Route, request_response

from .answers import Answer, Endpoint, error_response
from .context import Context

__all__ = ["Operation", "starlette_routes"]


@dataclass(frozen=True)
class Operation:
    """A method on a path, its handler, and how it answers (:mod:`.answers`).

    The handler is ``async (ctx, request, caller) -> data`` (an SVG's text for a picture), or
    ``async (ctx, request) -> Response`` for a :class:`~.answers.Plain` answer. An operation
    with an ``operation_id`` is in the OpenAPI document, with *summary*, *parameters*,
    *request_body* and the error statuses it can answer besides those of every guarded one.
    """

    method: str
    path: str
    handler: Callable[..., Awaitable[Any]]
    answer: Answer
    operation_id: str = ""
    summary: str = ""
    parameters: tuple[dict[str, Any], ...] = ()
    request_body: dict[str, Any] | None = None
    errors: tuple[int, ...] = ()

    @property
    def documented_path(self) -> str:
        """The path as OpenAPI writes it: ``{note_id}`` for Starlette's ``{note_id:path}``."""
        return re.sub(r"\{(\w+):\w+\}", r"{\1}", self.path)


class _Methods:
    """One path's endpoints by method (HEAD answered as GET). Any other method, OPTIONS too,
    is answered 405 with an Allow header naming them all: Starlette's own 405 names only the
    first route of a path, and a path with one route per method would list one of them."""

    def __init__(self, endpoints: dict[str, Endpoint]) -> None:
        self.apps = {method: request_response(fn) for method, fn in endpoints.items()}
        if "GET" in self.apps:
            self.apps.setdefault("HEAD", self.apps["GET"])
        self.allow = ", ".join(self.apps)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.apps.get(scope["method"])
        if app is None:
            message = f"{scope['method'][:20]} is not allowed here; this path answers {self.allow}"
            app = error_response("method_not_allowed", message, 405, {"Allow": self.allow})
        await app(scope, receive, send)


def starlette_routes(operations: Iterable[Operation], ctx: Context) -> list[Route]:
    """One Starlette route per path, in the order its first operation comes (Starlette takes
    the first that matches), its methods in the order they come."""
    paths: dict[str, dict[str, Endpoint]] = {}
    for op in operations:
        endpoints = paths.setdefault(op.path, {})
        if op.method in endpoints:
            raise ValueError(f"{op.method} {op.path} is in the route table twice")
        endpoints[op.method] = op.answer.endpoint(ctx, op.handler)
    # An ASGI endpoint and no methods: the route matches the path whatever the method, and
    # _Methods answers the ones it does not take.
    return [Route(path, _Methods(endpoints)) for path, endpoints in paths.items()]
