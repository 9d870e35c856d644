"""The MCP server (official SDK): the store's tools for agents, over stdio or at /mcp.

Every tool calls :class:`ServerAPI`, so parameters and results are those of the Python API
and of the HTTP API. Over stdio the caller is the local owner; over HTTP it is the bearer
token of the request (none: public reads only). A notewell error comes back as a tool
error whose text starts with its code (``not_found: ...``) and whose structured content is
``{"error": {"code", "message"}}``; the server never crashes on one.

The SDK speaks both kinds of protocol revision: those of the ``initialize`` handshake (up to
2025-11-25) and the stateless 2026-07-28 (``server/discover``, every request carrying its
version), over stdio and at /mcp alike. Notes are resources too (:mod:`.resources`), read
with the visibility rules of ``get_note``.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Annotations,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field, ValidationError

from ...errors import InvalidArgumentError, NotewellError, NotFoundError, UnauthorizedError
from ...model.access_tokens import Tokens
from ...services.contract import NoteStore
from ...services.server_api import Caller, ServerAPI, caller_from_header
from ...version import __version__
from ..closest import closest
from . import resources
from .results import answer, failure, invalid_arguments
from .schema import lean_schema
from .stdio import INSTRUCTIONS, StdioWire
from .tool import Arg, ToolSpec, hints
from .tools import served

__all__ = ["INSTRUCTIONS", "http_endpoint", "make_mcp", "run_stdio"]

log = logging.getLogger("notewell.mcp")

# resources/read of a URI that names no note the caller may see: the handshake revisions
# say -32002 ("Resource not found"); 2026-07-28 retired it for -32602 (Invalid params).
RESOURCE_NOT_FOUND = -32002


class _Server(MCPServer):
    """The SDK's server, with argument errors in the project's form (``invalid_argument: ...``
    and structured ``{"error": ...}``) instead of pydantic's report, tools listed with lean
    schemas (:mod:`.schema`), renamed arguments taken by their old names too, and an argument
    the tool does not declare refused (the SDK would drop it silently)."""

    def __init__(
        self,
        *args: Any,
        declared: dict[str, tuple[str, ...]],
        renamed: dict[str, tuple[tuple[str, str], ...]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.declared, self.renamed = declared, renamed

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [tool.model_copy(update={"input_schema": lean_schema(tool.input_schema)}) for tool in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            arguments = _new_names(name, arguments, self.renamed.get(name, ()))
            if name in self.declared:
                _refuse_unknown(name, arguments, self.declared[name])
            return await super().call_tool(name, arguments, context)
        except NotewellError as exc:
            return failure(exc)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return failure(invalid_arguments(name, exc.__cause__))
            raise


def _new_names(tool: str, arguments: dict[str, Any], renamed: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """*arguments* with each old name of *renamed* given its new one (a client set up before
    the rename still works); both names at once is refused."""
    for old, new in renamed:
        if old in arguments:
            if new in arguments:
                raise InvalidArgumentError(f"{tool}: give {new} ({old} is its old name), not both")
            arguments = {(new if key == old else key): value for key, value in arguments.items()}
    return arguments


def _refuse_unknown(tool: str, arguments: dict[str, Any], declared: tuple[str, ...]) -> None:
    """Refuse, in one line, the arguments of *arguments* that *tool* does not declare (a
    mistyped one would otherwise be dropped: a filter not applied, a field not written), each
    with the declared name it most likely mistypes."""
    unknown = [key for key in arguments if key not in declared]
    if not unknown:
        return
    guesses = [(guess, key) for key in unknown if (guess := closest(key, declared)) is not None]
    said = f"unknown argument{'s' if len(unknown) > 1 else ''} " + ", ".join(repr(key) for key in unknown)
    if len(unknown) == 1 and guesses:
        said += f"; did you mean {guesses[0][0]!r}?"
    elif guesses:
        said += "; did you mean " + ", ".join(f"{guess!r} for {key!r}" for guess, key in guesses) + "?"
    raise InvalidArgumentError(f"{tool}: {said}")


def _resource_error(exc: NotewellError, version: str, uri: str | None) -> MCPError:
    """*exc* as the JSON-RPC error of a resources request at protocol *version*."""
    if isinstance(exc, NotFoundError):
        code = INVALID_PARAMS if version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND
        return MCPError(code=code, message=exc.message, data={"uri": uri})
    code = INVALID_PARAMS if isinstance(exc, InvalidArgumentError) else INTERNAL_ERROR
    return MCPError(code=code, message=f"{exc.code}: {exc.message}", data={"error": exc.to_dict()})


def _serve_notes(server: _Server, api: ServerAPI, caller: Callable[[Any], Caller]) -> None:
    """The notes as resources (:mod:`.resources`) on *server*'s lowlevel handlers (the SDK's
    own list every registered resource at once, to every caller). *caller*: who asks, from
    the request's headers (None over stdio). The store is read off the event loop."""

    def who(ctx: Any) -> Caller:
        return caller(getattr(ctx.request, "headers", None))

    async def listing(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        try:
            page, following = await anyio.to_thread.run_sync(resources.listed, api, who(ctx), params.cursor)
        except NotewellError as exc:
            raise _resource_error(exc, ctx.protocol_version, None) from None
        notes = [
            Resource(
                uri=r["uri"],
                name=r["name"],
                title=r["title"],
                mime_type=r["mimeType"],
                annotations=Annotations(last_modified=r["annotations"]["lastModified"]),
            )
            for r in page
        ]
        return ListResourcesResult(resources=notes, next_cursor=following)

    async def reading(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = str(params.uri)
        try:
            found = await anyio.to_thread.run_sync(resources.read, api, who(ctx), uri)
        except NotewellError as exc:
            raise _resource_error(exc, ctx.protocol_version, uri) from None
        return ReadResourceResult(
            contents=[TextResourceContents(uri=uri, mime_type=found["mimeType"], text=found["text"])]
        )

    async def templates(ctx: Any, params: PaginatedRequestParams) -> ListResourceTemplatesResult:
        note = ResourceTemplate(
            name="note",
            title="A note",
            uri_template=resources.TEMPLATE,
            description="One note's Markdown text, header included, by its nte_… id",
            mime_type=resources.MIME_TYPE,
        )
        return ListResourceTemplatesResult(resource_templates=[note])

    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK's MCPServer has no public way to these
    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, listing)
    lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, reading)
    lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, templates)


def _annotation(arg: Arg) -> Any:
    """*arg*'s type, with its description and bounds as pydantic reads them."""
    given: dict[str, Any] = {"description": arg.help, "ge": arg.ge, "le": arg.le, "min_length": arg.min_length}
    field = {key: value for key, value in given.items() if value is not None}
    return Annotated[arg.type, Field(**field)] if field else arg.type


def _as_function(tool: ToolSpec, serve: Callable[[ToolSpec, Context, dict[str, Any]], Any]) -> Callable[..., Any]:
    """*tool* as the SDK registers one: a function whose signature, which the SDK reads the
    tool's schema from, has one keyword argument per argument of the table."""

    def function(ctx: Context, **arguments: Any) -> dict[str, Any]:
        return serve(tool, ctx, arguments)

    function.__name__ = tool.name  # the SDK names the schemas after it (search_notesArguments)
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    parameters = [
        inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, default=arg.default, annotation=_annotation(arg))
        for arg in tool.args
    ]
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [context, *parameters], return_annotation=dict[str, Any]
    )
    return function


def make_mcp(
    api: ServerAPI,
    tokens: Tokens | None,
    *,
    local: bool,
    ready: Callable[[], None] | None = None,
    on_start: Callable[[], None] | None = None,
    tools: str | None = None,
) -> MCPServer:
    """The MCP server over *api*, serving the tools *tools* names (see
    :func:`~.groups.group_names`; default: the core group). *local*: every caller is the
    store's owner (stdio). *ready* waits for a model still loading, before a search that needs
    it (outside the store's lock). *on_start* is called when a session starts, its input
    already being read."""
    offered = served(local, tools)

    @contextlib.asynccontextmanager
    async def started(_server: Any) -> AsyncIterator[dict[str, Any]]:
        if on_start is not None:
            on_start()
        yield {}

    mcp = _Server(
        "notewell",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=started if on_start is not None else None,
        # Nothing is ever pushed to a listener, so 2026-07-28's discover promises no change
        # notifications or resource subscriptions (the SDK would, serving subscriptions/listen).
        subscriptions=False,
        declared={tool.name: tuple(arg.name for arg in tool.args) for tool in offered},
        renamed={tool.name: tool.renamed for tool in offered if tool.renamed},
    )

    def from_headers(headers: Any) -> Caller:
        if local:
            return Caller(local=True)
        return caller_from_header(tokens, (headers or {}).get("authorization"))

    def caller(ctx: Context) -> Caller:
        return Caller(local=True) if local else from_headers(ctx.headers)  # a call in process has no headers

    def serve(tool: ToolSpec, ctx: Context, arguments: dict[str, Any]) -> Any:
        if tool.needs_model is not None and ready is not None and tool.needs_model(arguments):
            ready()
        try:
            return answer(tool.call(api, caller(ctx), **arguments))
        except NotewellError as exc:
            return failure(exc)

    for tool in offered:
        mcp.add_tool(
            _as_function(tool, serve),
            name=tool.name,
            description=tool.description,
            annotations=ToolAnnotations.model_validate(hints(tool)),
            # Every answer is an object (and structured content): a schema saying so tells nothing.
            structured_output=False,
        )
    _serve_notes(mcp, api, from_headers)
    return mcp


def run_stdio(
    store: NoteStore,
    *,
    ready: Callable[[], None] | None = None,
    on_start: Callable[[], None] | None = None,
    wire: StdioWire | None = None,
    tools: str | None = None,
) -> None:
    """Serve *store* over stdio to one MCP client (the local owner). *on_start* is called once
    the server reads its input (where the model starts loading); *ready* and *tools* as for
    :func:`make_mcp`. *wire*: the client's stdio, already greeted (see :mod:`.stdio`); else the
    SDK's own."""
    mcp = make_mcp(ServerAPI(store), None, local=True, ready=ready, on_start=on_start, tools=tools)
    if wire is None or wire.reader is None or wire.writer is None:
        mcp.run()
        return
    reader, writer = wire.reader, wire.writer

    async def serve() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server(stdin=anyio.wrap_file(reader), stdout=anyio.wrap_file(writer)) as (inbox, outbox):
            # MCPServer.run_stdio_async with the streams given; it takes none itself.
            server = mcp._lowlevel_server  # noqa: SLF001
            await server.run(inbox, outbox, server.create_initialization_options())

    anyio.run(serve)


class _Gate:
    """In front of the MCP endpoint: a presented token must be valid, and a private server wants
    one, before the SDK reads the request."""

    def __init__(self, app: Any, tokens: Tokens, private: bool) -> None:
        self.app, self.tokens, self.private = app, tokens, private

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.datastructures import Headers
        from starlette.responses import JSONResponse

        header = Headers(scope=scope).get("authorization") if scope["type"] == "http" else None
        refusal = None
        try:
            caller = caller_from_header(self.tokens, header)
        except UnauthorizedError as exc:
            refusal = exc.message
        else:
            if self.private and caller.token is None and scope["type"] == "http":
                refusal = "this server answers only requests with a token"
        if refusal is not None:
            body = {"error": {"code": "unauthorized", "message": refusal}}
            answer = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": 'Bearer realm="notewell"'})
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


def http_endpoint(
    api: ServerAPI,
    tokens: Tokens,
    *,
    host: str = "127.0.0.1",
    private: bool = False,
    ready: Callable[[], None] | None = None,
    tools: str | None = None,
) -> tuple[Any, Any]:
    """The ASGI endpoint serving MCP over streamable HTTP (behind the token gate), and the
    lifespan it needs; *tools* as for :func:`make_mcp`. Stateless: every request stands alone
    (the caller comes from its own token, and no tool keeps anything between calls), so there
    are no sessions for an anonymous client to open by the thousand and fill the server with,
    and none a token holder must wait for."""
    mcp = make_mcp(api, tokens, local=False, ready=ready, tools=tools)
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host, stateless_http=True)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    (endpoint,) = [r for r in app.routes if getattr(r, "path", None) == "/mcp"]
    return _Gate(endpoint.app, tokens, private), lifespan
