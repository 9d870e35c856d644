"""The web page and its static assets (its favicon too), the health check, and the OpenAPI document served."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .answers import Plain, error_response
from .context import Context
from .operations import Operation
from .schemas import OBJECT

__all__ = ["ROUTES", "load_assets"]

_STATIC = Path(__file__).resolve().parent / "web" / "static"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}
# The page's own assets only: no inline script, nothing from elsewhere.
_POLICY = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"


def load_assets() -> dict[str, tuple[bytes, str]]:
    """The page's files by name, with their media types."""
    return {f.name: (f.read_bytes(), _TYPES[f.suffix]) for f in _STATIC.iterdir() if f.suffix in _TYPES}


def _page(ctx: Context, name: str) -> Response:
    body, kind = ctx.assets[name]
    return Response(body, media_type=kind, headers={"Content-Security-Policy": _POLICY, "Cache-Control": "no-cache"})


async def index(ctx: Context, request: Request) -> Response:
    """The web page, for people (every view of it: the page reads the API)."""
    return _page(ctx, "index.html")


async def asset(ctx: Context, request: Request) -> Response:
    """The page's own scripts, style sheet and icon."""
    name = request.path_params["name"]
    if name not in ctx.assets or name == "index.html":
        return error_response("not_found", f"no asset {name[:80]!r}", 404)
    return _page(ctx, name)


async def favicon(ctx: Context, request: Request) -> Response:
    """Where a browser looks for an icon when a page names none (an API answer opened in a tab)."""
    return _page(ctx, "favicon.ico")


async def healthz(ctx: Context, request: Request) -> Response:
    return JSONResponse({"ok": True})


async def openapi(ctx: Context, request: Request) -> Response:
    """The OpenAPI 3.1 document this reference is written from."""
    return JSONResponse(ctx.document)


# The page, its assets and icon, and the document itself are not API operations: left out of the document.
ROUTES = (
    Operation("GET", "/", index, Plain()),
    Operation("GET", "/static/{name}", asset, Plain()),
    Operation("GET", "/favicon.ico", favicon, Plain()),
    Operation("GET", "/healthz", healthz, Plain(OBJECT, "up"), operation_id="healthz", summary="liveness"),
    Operation("GET", "/openapi.json", openapi, Plain()),
)
