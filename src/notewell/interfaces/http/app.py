"""The HTTP API (Starlette): JSON over the same AgentAPI the MCP tools call.

Errors are ``{"error": {"code", "message"}}`` with the status :data:`STATUS` gives their
code, mapped here and nowhere else. A request names its caller with
``Authorization: Bearer <token>``; a token that is not valid is refused (never read as
anonymous). Bodies are limited to :func:`body_limit` bytes.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, request_response

from ...errors import ERROR_KINDS, InvalidArgumentError, NoteTooLargeError, NotewellError, NotFoundError
from ...model.access_tokens import Tokens
from ...model.timestamps import now_iso
from ...search.filters import FILTER_NAMES, FILTERS, MAX_FILTER_CHARS, MAX_FILTER_VALUES
from ...services.agent_api import AgentAPI, Caller, caller_from_header
from .openapi import openapi_document

__all__ = ["LOOPBACK", "STATUS", "body_limit", "make_app"]

log = logging.getLogger("notewell.http")

# HTTP statuses come from the one error table.
STATUS = {kind.code: kind.http_status for kind in ERROR_KINDS}
_HTTP_CODES = {400: "invalid_argument", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def body_limit(api: AgentAPI) -> int:
    """Bytes a request body may have: a note at the store's limit, JSON-escaped, and room around it."""
    return api.store.max_bytes * 2 + 64 * 1024


def _error(code: str, message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _from_exception(exc: NotewellError) -> JSONResponse:
    headers = {}
    if exc.code == "unauthorized":
        headers["WWW-Authenticate"] = 'Bearer realm="notewell"'
    if exc.code == "rate_limited":
        headers["Retry-After"] = str(max(1, round(getattr(exc, "retry_after", 1))))
    return _error(exc.code, exc.message, STATUS.get(exc.code, 500), headers)


class _Handlers:
    """The endpoints; each resolves its caller, reads its input, and calls the API off the event loop."""

    def __init__(self, api: AgentAPI, tokens: Tokens) -> None:
        self.api = api
        self.tokens = tokens
        self.limit = body_limit(api)

    def caller(self, request: Request) -> Caller:
        return caller_from_header(self.tokens, request.headers.get("authorization"))

    async def body(self, request: Request) -> dict[str, Any]:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            if int(declared) <= 4 * self.limit:
                # Read and drop a body not far over the limit, so that a client still sending
                # it reads the 413 instead of a broken connection; a larger one is cut off.
                async for _chunk in request.stream():
                    pass
            raise NoteTooLargeError(f"the request body is {declared} bytes; at most {self.limit}")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.limit:
                raise NoteTooLargeError(f"the request body is over {self.limit} bytes")
            chunks.append(chunk)
        try:
            data = json.loads(b"".join(chunks) or b"null")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise InvalidArgumentError("the request body must be JSON (and not nested too deeply)") from None
        if not isinstance(data, dict):
            raise InvalidArgumentError("the request body must be a JSON object")
        return data


def _note_ref(request: Request) -> str:
    """The note a path names: an id, or a path in the store ending in .md. Anything else with a
    slash (/api/notes/search/, /api/notes/ID/history) is no route, as before paths were taken."""
    ref = str(request.path_params["note_id"])
    if "/" in ref and not ref.endswith(".md"):
        raise NotFoundError(f"no route {request.url.path}")
    return ref


def _search_words(request: Request) -> str:
    """The search words: ``query`` (the MCP tool's name for them), or ``q``, its alias."""
    given = [request.query_params.getlist(name) for name in ("query", "q")]
    words = [w for values in given for w in values]
    if len(words) > 1:
        raise InvalidArgumentError("give the search words once, as query (or its alias q)")
    return words[0] if words else ""


def _query_params(request: Request) -> dict[str, Any]:
    """Search and list parameters from the query string (kind and tags may repeat or be comma-separated)."""
    q = request.query_params
    known = {"query", "q", "mode", "limit", "offset", "wait", *FILTER_NAMES}
    unknown = sorted(set(q.keys()) - known)
    if unknown:
        raise InvalidArgumentError(f"unknown parameter(s): {', '.join(unknown)}")
    out: dict[str, Any] = {"mode": q["mode"]} if "mode" in q else {}
    for spec in FILTERS:
        if spec.shape == "texts":  # may repeat, or be comma-separated
            given = q.getlist(spec.name)
            # Counted as given, as the document counts them: blank ones are dropped below.
            if len(given) > MAX_FILTER_VALUES:
                raise InvalidArgumentError(f"{spec.name}: at most {MAX_FILTER_VALUES} values, got {len(given)}")
            if any(len(value) > MAX_FILTER_CHARS for value in given):  # as given, as the document says
                raise InvalidArgumentError(f"{spec.name}: a value is at most {MAX_FILTER_CHARS} characters")
            values = [v.strip() for value in given for v in value.split(",") if v.strip()]
            if values:
                out[spec.name] = values
        elif spec.name in q:
            value = q[spec.name]
            # The search layer reads tag_mode only beside tags: checked here, "AAA" is refused either way.
            if spec.choices and value not in spec.choices:
                raise InvalidArgumentError(f"{spec.name} takes {' or '.join(spec.choices)}, got {value[:40]!r}")
            out[spec.name] = value
    for name in ("limit", "offset"):
        if name in q:
            out[name] = _whole(name, q[name])
    if "wait" in q:
        out["wait"] = _flag("wait", q["wait"])
    return out


_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _flag(name: str, value: str) -> bool:
    """A query parameter's yes or no (true/false as the document says, 1/0 and yes/no as the page sends)."""
    try:
        return _FLAGS[value.strip().lower()]
    except KeyError:
        raise InvalidArgumentError(f"{name} takes true or false, got {value[:40]!r}") from None


_WHOLE = re.compile(r"-?[0-9]{1,12}")


def _whole(name: str, value: str) -> int:
    """A query parameter's whole number (ASCII digits only: int() would take '²'-like digits too)."""
    if not _WHOLE.fullmatch(value.strip()):
        raise InvalidArgumentError(f"{name} must be a whole number, got {value[:40]!r}")
    return int(value)


def _int_param(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    return None if value is None else _whole(name, value)


def _fields(data: dict[str, Any], *names: str) -> None:
    """Refuse a body field the endpoint does not take (a misspelt optional one would be dropped unseen)."""
    unknown = sorted(set(data) - set(names))
    if unknown:
        shown = ", ".join(repr(name[:40]) for name in unknown[:5])
        raise InvalidArgumentError(f"unknown field(s): {shown}; this body takes {', '.join(names)}")


def _text_field(data: dict[str, Any], name: str, *, required: bool = True) -> Any:
    value = data.get(name)
    if value is None:
        if required:
            raise InvalidArgumentError(f"the body needs {name!r}")
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name!r} must be a string")
    return value


class _Methods:
    """One path's endpoints by method (HEAD answered as GET). Any other method, OPTIONS too,
    is answered 405 with an Allow header naming them all: Starlette's own 405 names only the
    first route of a path, and a path with one route per method would list one of them."""

    def __init__(self, endpoints: dict[str, Callable[[Request], Awaitable[Response]]]) -> None:
        self.apps = {method: request_response(fn) for method, fn in endpoints.items()}
        if "GET" in self.apps:
            self.apps.setdefault("HEAD", self.apps["GET"])
        self.allow = ", ".join(self.apps)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.apps.get(scope["method"])
        if app is None:
            message = f"{scope['method'][:20]} is not allowed here; this path answers {self.allow}"
            app = _error("method_not_allowed", message, 405, {"Allow": self.allow})
        await app(scope, receive, send)


def _resource(path: str, **endpoints: Callable[[Request], Awaitable[Response]]) -> Route:
    # An ASGI endpoint and no methods: the route matches the path whatever the method, and
    # _Methods answers the ones it does not take.
    return Route(path, _Methods(endpoints))


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
                await _error("misdirected", message, 421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(
    api: AgentAPI,
    tokens: Tokens,
    *,
    extra_routes: list[BaseRoute] | None = None,
    lifespan: Any = None,
    host: str = "127.0.0.1",
    ready: Callable[[], None] | None = None,
):
    """The Starlette application serving *api* (``extra_routes``, e.g. the MCP endpoint, come last).
    Bound to loopback, it answers only requests addressed to loopback (a web page that rebinds
    its own name to 127.0.0.1 cannot read the notes). *ready* waits for a model still loading
    in the background, before a search that needs it (off the event loop, outside the store's lock)."""
    h = _Handlers(api, tokens)

    def answering(
        work: Callable[[Request, Caller], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint: the caller from the request, *work*'s answer, and any error as JSON."""

        async def run(request: Request) -> Response:
            try:
                return await work(request, h.caller(request))
            except NotewellError as exc:
                return _from_exception(exc)
            except Exception:  # a bug: logged, answered as one, the server goes on
                log.exception("internal error on %s %s", request.method, request.url.path)
                return _error("internal", "internal error (logged by the server)", 500)

        return run

    def endpoint(
        work: Callable[[Request, Caller], Awaitable[tuple[Any, int]]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def json_answer(request: Request, caller: Caller) -> Response:
            data, status = await work(request, caller)
            # Made on a thread: a note of 1 MiB is a few MB of JSON, which on the event loop held
            # every other request for as long as it took.
            return await run_in_threadpool(JSONResponse, data, status)

        return answering(json_answer)

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Awaitable[Any]:
        return run_in_threadpool(fn, *args, **kwargs)

    # Opened on its own, an SVG is a document: it may run nothing and load nothing.
    svg_headers = {
        "Cache-Control": "no-cache",
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        "X-Content-Type-Options": "nosniff",
    }

    def picture(
        work: Callable[[Request, Caller], Awaitable[str]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """A picture endpoint: SVG made on the server (every text in it escaped; empty: nothing
        to draw, and the page shows no picture), or the JSON error."""

        async def svg_answer(request: Request, caller: Caller) -> Response:
            svg = await work(request, caller)
            return Response(svg, media_type="image/svg+xml; charset=utf-8", headers=svg_headers)

        return answering(svg_answer)

    async def timeline(request: Request, caller: Caller) -> str:
        from .web.pictures import timeline_svg

        project = request.path_params["project"]
        answer = await call(api.list_attempts, caller, project, limit=100)
        projects = await call(api.list_projects, caller)
        named = {a["project"] for a in answer["attempts"]}  # the project as stored (a slug may name it)
        total = next((p["attempts"] for p in projects["projects"] if p["name"] in named), None)
        return await call(timeline_svg, answer["attempts"], now=now_iso(), total=total)

    async def note_graph(request: Request, caller: Caller) -> str:
        from .web.pictures import graph_svg

        found = await call(api.links, caller, _note_ref(request), depth=1)
        return await call(graph_svg, found, found["builds_on"], found["built_on_by"])

    async def attempt_picture(request: Request, caller: Caller) -> str:
        from .web.pictures import attempt_svg

        attempt_id = request.path_params["attempt_id"]
        attempt = await call(api.get_attempt, caller, attempt_id)
        notes = await call(api.list_notes, caller, limit=100, attempt_id=attempt_id)
        reads = await call(api.attempt_reads, caller, attempt_id)
        marks = [{"note": r["note_id"], "title": r["title"], "at": r["at"]} for r in reads["reads"]]
        return await call(attempt_svg, attempt, notes["cards"], marks, now=now_iso())

    async def attempt_reads(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.attempt_reads, caller, request.path_params["attempt_id"]), 200

    async def search(request: Request, caller: Caller) -> tuple[Any, int]:
        params = _query_params(request)
        if "offset" in params:
            raise InvalidArgumentError("search takes no offset: raise limit (up to 100) instead")
        query = _search_words(request)
        if params.get("mode", "keyword") != "keyword" and ready is not None:
            await call(ready)
        return await call(api.search_notes, caller, query, **params), 200

    async def list_notes(request: Request, caller: Caller) -> tuple[Any, int]:
        params = _query_params(request)
        if {"query", "q", "mode", "wait"} & set(request.query_params.keys()):
            raise InvalidArgumentError("GET /api/notes lists notes; search with GET /api/notes/search?query=...")
        return await call(api.list_notes, caller, **params), 200

    async def get_note(request: Request, caller: Caller) -> tuple[Any, int]:
        note_id = _note_ref(request)
        attempt = request.query_params.get("working_attempt_id")
        revision = _int_param(request, "revision")
        render = request.query_params.get("render")
        if render not in (None, "html"):
            raise InvalidArgumentError(f"render takes 'html', got {render[:40]!r}")
        note = await call(api.get_note, caller, note_id, working_attempt_id=attempt, revision=revision)
        if render == "html":
            from .web.render import render_markdown

            # Off the event loop, and cached per note revision.
            revision = f"{note['id']}@{note['revision']}"
            note["body_html"] = await call(render_markdown, note["body"], isolated=True, note=revision)
        return note, 200

    async def projects(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.list_projects, caller), 200

    async def project_attempts(request: Request, caller: Caller) -> tuple[Any, int]:
        limit = _int_param(request, "limit")
        return await call(api.list_attempts, caller, request.path_params["project"], limit=limit), 200

    async def add_note(request: Request, caller: Caller) -> tuple[Any, int]:
        data = await h.body(request)
        _fields(data, "text", "attempt_id", "model")
        text = _text_field(data, "text")
        attempt = _text_field(data, "attempt_id", required=False)
        model = _text_field(data, "model", required=False)
        return await call(api.add_note, caller, text, attempt_id=attempt, model=model), 201

    async def patch_note(request: Request, caller: Caller) -> tuple[Any, int]:
        note_id = _note_ref(request)
        data = await h.body(request)
        # One change per request, so that a request either happens whole or not at all.
        if not (
            set(data) == {"add_tags"} or ("text" in data and set(data) <= {"text", "keep_header", "base_revision"})
        ):
            raise InvalidArgumentError(
                "PATCH takes {'text': ...} to replace the text (with 'keep_header': true, the body;"
                " with 'base_revision': N, only if unchanged since), or {'add_tags': [...]}"
            )
        if "text" in data:
            text = _text_field(data, "text")
            keep, base = data.get("keep_header", False), data.get("base_revision")
            return await call(api.edit_note, caller, note_id, text, keep_header=keep, base_revision=base), 200
        return await call(api.add_tag, caller, note_id, data["add_tags"]), 200

    async def delete_note(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.delete_note, caller, _note_ref(request)), 200

    async def links(request: Request, caller: Caller) -> tuple[Any, int]:
        depth = _int_param(request, "depth")
        note_id = _note_ref(request)
        return await call(api.links, caller, note_id, depth=1 if depth is None else depth), 200

    async def start_attempt(request: Request, caller: Caller) -> tuple[Any, int]:
        data = await h.body(request)
        _fields(data, "project", "model", "campaign")
        project = _text_field(data, "project")
        model = _text_field(data, "model", required=False)
        campaign = _text_field(data, "campaign", required=False)
        return await call(api.start_attempt, caller, project, model=model, campaign=campaign), 201

    async def get_attempt(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.get_attempt, caller, request.path_params["attempt_id"]), 200

    async def end_attempt(request: Request, caller: Caller) -> tuple[Any, int]:
        data = await h.body(request)
        _fields(data, "outcome", "summary")
        outcome = _text_field(data, "outcome")
        summary = _text_field(data, "summary", required=False)
        attempt = request.path_params["attempt_id"]
        return await call(api.end_attempt, caller, attempt, outcome=outcome, summary=summary), 200

    async def brief(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.brief, caller, request.path_params["project"]), 200

    async def tags(request: Request, caller: Caller) -> tuple[Any, int]:
        unknown = set(request.query_params.keys()) - {"notes", "tag"}
        if unknown:
            raise InvalidArgumentError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        notes = "notes" in request.query_params and _flag("notes", request.query_params["notes"])
        tag = request.query_params.get("tag")
        return await call(api.list_tags, caller, notes=notes, tag=tag), 200

    async def summary(request: Request, caller: Caller) -> tuple[Any, int]:
        return await call(api.notes_summary, caller), 200

    static = Path(__file__).resolve().parent / "web" / "static"
    types = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}
    assets = {f.name: (f.read_bytes(), types[f.suffix]) for f in static.iterdir() if f.suffix in types}

    def page(name: str) -> Response:
        body, kind = assets[name]
        # The page's own assets only: no inline script, nothing from elsewhere.
        policy = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
        return Response(body, media_type=kind, headers={"Content-Security-Policy": policy, "Cache-Control": "no-cache"})

    async def index(request: Request) -> Response:
        return page("index.html")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets or name == "index.html":
            return _error("not_found", f"no asset {name[:80]!r}", 404)
        return page(name)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True})

    document = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    routes: list[BaseRoute] = [
        _resource("/", GET=index),
        _resource("/static/{name}", GET=asset),
        _resource("/healthz", GET=healthz),
        _resource("/openapi.json", GET=openapi),
        # Before /api/notes/{note_id}, so that PATCH or DELETE here is refused, not read as a note id.
        _resource("/api/notes/search", GET=endpoint(search)),
        _resource("/api/notes", GET=endpoint(list_notes), POST=endpoint(add_note)),
        # A note by id, or by its path in the store (research/go-tips.md: hence :path, links first).
        _resource("/api/notes/{note_id:path}/links", GET=endpoint(links)),
        _resource("/api/notes/{note_id:path}/graph.svg", GET=picture(note_graph)),
        _resource(
            "/api/notes/{note_id:path}",
            GET=endpoint(get_note),
            PATCH=endpoint(patch_note),
            DELETE=endpoint(delete_note),
        ),
        _resource("/api/attempts", POST=endpoint(start_attempt)),
        _resource("/api/attempts/{attempt_id}", GET=endpoint(get_attempt)),
        _resource("/api/attempts/{attempt_id}/end", POST=endpoint(end_attempt)),
        _resource("/api/attempts/{attempt_id}/reads", GET=endpoint(attempt_reads)),
        _resource("/api/attempts/{attempt_id}/picture.svg", GET=picture(attempt_picture)),
        _resource("/api/projects", GET=endpoint(projects)),
        _resource("/api/projects/{project}/brief", GET=endpoint(brief)),
        _resource("/api/projects/{project}/attempts", GET=endpoint(project_attempts)),
        _resource("/api/projects/{project}/timeline.svg", GET=picture(timeline)),
        _resource("/api/tags", GET=endpoint(tags)),
        _resource("/api/summary", GET=endpoint(summary)),
        *(extra_routes or []),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        code = _HTTP_CODES.get(status, "error")
        headers = getattr(exc, "headers", None)
        return _error(code, str(getattr(exc, "detail", "")) or code.replace("_", " "), status, headers)

    middleware = []
    if host in LOOPBACK:
        middleware.append(Middleware(_LoopbackOnly))
    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={HTTPException: http_error}, lifespan=lifespan
    )
