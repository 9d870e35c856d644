"""The MCP server (official SDK): the store's tools for agents, over stdio or at /mcp.

Every tool calls :class:`AgentAPI`, so parameters and results are those of the Python API
and of the HTTP API. Over stdio the caller is the local owner; over HTTP it is the bearer
token of the request (none: public reads only). A notewell error comes back as a tool
error whose text starts with its code (``not_found: ...``) and whose structured content is
``{"error": {"code", "message"}}``; the server never crashes on one.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from ...errors import NotewellError, UnauthorizedError
from ...model.access_tokens import Tokens
from ...search.filters import FILTERS, FilterSpec
from ...services.agent_api import MAX_LIMIT, AgentAPI, Caller, caller_from_header
from ...services.contract import NoteStore
from ...version import __version__
from .results import answer, failure, invalid_arguments, note_read, note_receipt
from .stdio import INSTRUCTIONS, StdioWire

__all__ = ["INSTRUCTIONS", "http_endpoint", "make_mcp", "run_stdio"]

log = logging.getLogger("notewell.mcp")


_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
_CHANGE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

Mode = Literal["keyword", "semantic", "both", "hybrid"]
Text = Annotated[str | None, Field(description="optional")]


def _filter_type(spec: FilterSpec) -> Any:
    """A filter's argument type and description, from the one table of filters."""
    shape: Any = str | None
    if spec.shape == "texts":
        shape = str | list[str] | None
    elif spec.shape == "choice":
        shape = Literal[spec.choices] | None  # type: ignore[valid-type]
    return Annotated[shape, Field(description=spec.help)]


def _with_filters(tool: Callable[..., Any]) -> Callable[..., Any]:
    """*tool* takes the filters as ``**filters``; its signature, which the SDK reads the tool's
    schema from, gains one keyword argument per filter of the one table (each None by default)."""
    signature = inspect.signature(tool, eval_str=True)
    kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    added = [
        inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_filter_type(spec))
        for spec in FILTERS
    ]
    tool.__signature__ = signature.replace(parameters=kept + added)  # type: ignore[attr-defined]
    return tool


Full = Annotated[bool, Field(description="answer with the whole note (its text included)")]
NoteId = Annotated[str, Field(description="a note id, like nte_0h3k9x2c7m, or its file name or path, like go-tips.md")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"how many cards, 1-{MAX_LIMIT}")]
Task = Annotated[str | None, Field(description="the notebook's task (default: the only one)")]


def _written(note: dict[str, Any], full: bool) -> dict[str, Any]:
    return note_read(note) if full else note_receipt(note)


class _Server(MCPServer):
    """The SDK's server, with argument errors in the project's form (``invalid_argument: ...``
    and structured ``{"error": ...}``) instead of pydantic's report."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return failure(invalid_arguments(name, exc.__cause__))
            raise


def make_mcp(
    api: AgentAPI,
    tokens: Tokens | None,
    *,
    local: bool,
    ready: Callable[[], None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> MCPServer:
    """The MCP server over *api*. *local*: every caller is the store's owner (stdio). *ready*
    waits for a model still loading, before a search that needs it (outside the store's lock).
    *on_start* is called when a session starts, its input already being read."""

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
    )

    def caller(ctx: Context) -> Caller:
        if local:
            return Caller(local=True)
        return caller_from_header(tokens, (ctx.headers or {}).get("authorization"))

    def run(ctx: Context, work: Callable[[Caller], Any]) -> Any:
        try:
            return answer(work(caller(ctx)))
        except NotewellError as exc:
            return failure(exc)

    @mcp.tool(annotations=_READ)
    @_with_filters
    def search_notes(
        ctx: Context,
        query: Annotated[str, Field(description="search words; empty with a project or attempt_id: its recent notes")],
        mode: Annotated[Mode, Field(description="keyword (exact), semantic (meaning), both (two lists), hybrid")] = (
            "keyword"
        ),
        limit: Limit = 10,
        wait: Annotated[bool, Field(description="embed notes not embedded yet before a semantic search")] = False,
        **filters: Any,
    ) -> dict[str, Any]:
        """Find notes: short cards (title, kind, tags, snippet, score, the mode that found each), not bodies.

        Use keyword for exact words, identifiers and error messages; semantic when you know what you mean
        but not the words; both to get the exact list and the semantic list side by side in one call.
        Scope with project, campaign or attempt_id (omit all three: all public work). Read a card's note
        with get_note. A card with matched_revision was found only in that older revision of the note
        (it comes after every current match): read it with get_note(id, revision=...)."""
        if mode != "keyword" and ready is not None:
            ready()
        return run(ctx, lambda c: api.search_notes(c, query, mode=mode, limit=limit, wait=wait, **filters))

    @mcp.tool(annotations=_READ)
    def get_note(
        ctx: Context,
        id: NoteId,
        working_attempt_id: Annotated[
            str | None, Field(description="your running attempt: the read is recorded on it")
        ] = None,
        revision: Annotated[int | None, Field(ge=1, description="an earlier revision's number")] = None,
    ) -> dict[str, Any]:
        """Read one note whole: its text as written (header included), its title, kind, tags and other
        fields, extra header lines, the attempt it was written on, and the notes that build on it
        (backlinks). Fields with no value are left out."""
        return run(
            ctx, lambda c: note_read(api.get_note(c, id, working_attempt_id=working_attempt_id, revision=revision))
        )

    @mcp.tool(annotations=_WRITE)
    def add_note(
        ctx: Context,
        text: Annotated[str, Field(description="Markdown, optionally opening with a --- header ---")],
        attempt_id: Annotated[str | None, Field(description="your running attempt, to write the note on it")] = None,
        model: Annotated[str | None, Field(description="the model writing it")] = None,
        full: Full = False,
    ) -> dict[str, Any]:
        """Write one finding as a note. Write at the moments that matter: an approach chosen and why, a
        blocker, a surprise, a change of plan, the end of a phase. Open with a header such as
        '---\\ntitle: ...\\nkind: finding\\ntags: [a, b]\\nbuilds_on: [nte_...]\\n---'. Say what was done
        elsewhere (sources read, scripts run, where their output is) so the next agent can find it.
        Answers with the note's id, title and revision (full: the whole note), and `similar`: existing
        notes that say much the same (by words or meaning, similarity 0-1). Look at them: if one holds this
        finding already, update it with edit_note (and delete the new one) rather than keep two."""
        return run(ctx, lambda c: _written(api.add_note(c, text, attempt_id=attempt_id, model=model), full))

    @mcp.tool(annotations=_CHANGE)
    def edit_note(
        ctx: Context,
        id: NoteId,
        text: Annotated[str, Field(description="the new whole text (with keep_header: the new body)")],
        keep_header: Annotated[bool, Field(description="keep the header as it is; text is the body")] = False,
        base_revision: Annotated[
            int | None, Field(ge=1, description="the revision you read: refused (conflict) if it changed since")
        ] = None,
        full: Full = False,
    ) -> dict[str, Any]:
        """Replace a note's text (the previous text stays as an earlier revision). Only while its attempt
        runs, and only the attempt's author (or the store's owner). Answers with id, title and revision."""

        def work(c: Caller) -> dict[str, Any]:
            return _written(api.edit_note(c, id, text, keep_header=keep_header, base_revision=base_revision), full)

        return run(ctx, work)

    @mcp.tool(annotations=_CHANGE)
    def delete_note(ctx: Context, id: NoteId) -> dict[str, Any]:
        """Delete a note (its last text stays in the history). Prefer editing or superseding a note."""
        return run(ctx, lambda c: api.delete_note(c, id))

    @mcp.tool(annotations=_READ)
    @_with_filters
    def list_notes(
        ctx: Context,
        limit: Limit = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
        **filters: Any,
    ) -> dict[str, Any]:
        """Notes as cards, most recently updated first (for browsing; use search_notes to find)."""
        return run(ctx, lambda c: api.list_notes(c, limit=limit, offset=offset, **filters))

    @mcp.tool(annotations=_READ)
    def notes_summary(ctx: Context) -> dict[str, Any]:
        """How many notes of each kind, and the most recent ones."""

        def work(c: Caller) -> dict[str, Any]:
            found = api.notes_summary(c)
            # Notes without a kind are counted as "(no kind)": a row without its key says nothing.
            for row in found.get("by_kind", []):
                if row.get("kind") is None:
                    row["kind"] = "(no kind)"
            return found

        return run(ctx, work)

    @mcp.tool(annotations=_READ)
    def brief(ctx: Context, project: Annotated[str, Field(description="a project's name")]) -> dict[str, Any]:
        """The one thing to read first on a project: its newest digest, the recent notes, and the notes
        the digest does not cover yet."""
        return run(ctx, lambda c: api.brief(c, project))

    @mcp.tool(annotations=_READ)
    def links(
        ctx: Context, id: NoteId, depth: Annotated[int, Field(ge=1, le=10, description="steps out")] = 1
    ) -> dict[str, Any]:
        """What a note builds on and what builds on it, depth steps out."""
        return run(ctx, lambda c: api.links(c, id, depth=depth))

    @mcp.tool(annotations=_WRITE)
    def add_tag(
        ctx: Context,
        id: NoteId,
        tags: Annotated[list[str], Field(min_length=1, description="tags to add")],
        full: Full = False,
    ) -> dict[str, Any]:
        """Add tags to a note's header; every other line of the note stays as it is. Answers with the
        note's id, title, revision and tags."""
        return run(ctx, lambda c: _written(api.add_tag(c, id, tags), full))

    @mcp.tool(annotations=_READ)
    def list_tags(ctx: Context) -> dict[str, Any]:
        """Every tag in use with its number of notes, most used first."""
        return run(ctx, lambda c: api.list_tags(c))

    @mcp.tool(annotations=_WRITE)
    def start_attempt(
        ctx: Context,
        project: Annotated[
            str, Field(description="the project you work on (a short name; yourname:project in your own namespace)")
        ],
        model: Annotated[str | None, Field(description="the model doing the work")] = None,
        campaign: Text = None,
        author: Annotated[str | None, Field(description="your name (stdio only; over HTTP the token's name)")] = None,
    ) -> dict[str, Any]:
        """Start a run of work on a project. Write your notes with its id (attempt_id) and end it with
        end_attempt; its notes can change until then."""
        return run(ctx, lambda c: api.start_attempt(c, project, model=model, campaign=campaign, author=author))

    @mcp.tool(annotations=_WRITE)
    def end_attempt(
        ctx: Context,
        attempt_id: Annotated[str, Field(description="your running attempt")],
        outcome: Annotated[str, Field(description="succeeded, failed, abandoned, or another short word")],
        summary: Annotated[str | None, Field(description="what the run found, kept as its summary note")] = None,
    ) -> dict[str, Any]:
        """End your attempt with an outcome (and a summary note). Its notes are frozen from then on."""
        return run(ctx, lambda c: api.end_attempt(c, attempt_id, outcome=outcome, summary=summary))

    if local:
        _notebook_tools(mcp, run, api)
    return mcp


def _notebook_tools(mcp: MCPServer, run: Callable[..., Any], api: AgentAPI) -> None:
    """The working-context notebook (stdio only: notebooks live beside the agent, not the server)."""
    from ...agents.notebook import Notebook, chosen_task

    def book(task: str | None) -> Notebook:
        return Notebook(chosen_task(task))

    @mcp.tool(annotations=_WRITE)
    def notebook_init(
        ctx: Context, task: Annotated[str, Field(description="a short task name")], goal: str, budget: int = 2000
    ) -> dict[str, Any]:
        """Open a working notebook for a long task: facts with sources, a tracker, notes, ruled-out
        attempts, the next step. Edit its notebook.md, then notebook_accept."""
        return run(ctx, lambda c: {"path": str(Notebook.init(task, goal=goal, budget=budget).path)})

    @mcp.tool(annotations=_READ)
    def notebook_show(ctx: Context, task: Task = None) -> dict[str, Any]:
        """Read back the accepted notebook: at each phase, after compaction, before a final answer."""
        return run(ctx, lambda c: {"text": book(task).show()})

    @mcp.tool(annotations=_READ)
    def notebook_status(ctx: Context, task: Task = None) -> dict[str, Any]:
        """Budget used, items per section, unaccepted edits, raw events not cited yet, tampering."""
        return run(ctx, lambda c: book(task).status())

    @mcp.tool(annotations=_WRITE)
    def notebook_log(ctx: Context, label: str, text: str, task: Task = None) -> dict[str, Any]:
        """Store long tool output once, untouched; keep the returned pointer instead of the output."""

        def work(c: Caller) -> dict[str, Any]:
            event, pointer = book(task).log(text.encode("utf-8"), label)
            return {**event.to_dict(), "pointer": pointer}

        return run(ctx, work)

    @mcp.tool(annotations=_READ)
    def notebook_recall(
        ctx: Context, event: str, grep: str | None = None, offset: int = 0, limit: int = 2000, task: Task = None
    ) -> dict[str, Any]:
        """A bounded part of a raw event (lines with grep, or limit characters from offset)."""
        return run(ctx, lambda c: {"text": book(task).recall(event, grep=grep, offset=offset, limit=limit)})

    @mcp.tool(annotations=_WRITE)
    def notebook_accept(ctx: Context, task: Task = None) -> dict[str, Any]:
        """Validate the edited notebook.md and checkpoint it; errors (with lines) change nothing."""

        def work(c: Caller) -> dict[str, Any]:
            result = book(task).accept()
            return {
                "accepted": result.accepted,
                "revision": result.revision,
                "errors": [str(e) for e in result.errors],
                "warnings": [str(w) for w in result.warnings],
            }

        return run(ctx, work)

    @mcp.tool(annotations=_WRITE)
    def notebook_promote(ctx: Context, ids: list[str], task: Task = None) -> dict[str, Any]:
        """Turn accepted facts, ruled-out items and notes into durable notes in the store."""
        return run(ctx, lambda c: api.promote_notebook(c, book(task), ids))


def run_stdio(
    store: NoteStore,
    *,
    ready: Callable[[], None] | None = None,
    on_start: Callable[[], None] | None = None,
    wire: StdioWire | None = None,
) -> None:
    """Serve *store* over stdio to one MCP client (the local owner). *on_start* is called once
    the server reads its input (where the model starts loading); *ready* as for :func:`make_mcp`.
    *wire*: the client's stdio, already greeted (see :mod:`.stdio`); else the SDK's own."""
    mcp = make_mcp(AgentAPI(store), None, local=True, ready=ready, on_start=on_start)
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
    api: AgentAPI,
    tokens: Tokens,
    *,
    host: str = "127.0.0.1",
    private: bool = False,
    ready: Callable[[], None] | None = None,
) -> tuple[Any, Any]:
    """The ASGI endpoint serving MCP over streamable HTTP (behind the token gate), and the
    lifespan it needs. Stateless: every request stands alone (the caller comes from its own
    token, and no tool keeps anything between calls), so there are no sessions for an anonymous
    client to open by the thousand and fill the server with, and none a token holder must wait for."""
    mcp = make_mcp(api, tokens, local=False, ready=ready)
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host, stateless_http=True)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    (endpoint,) = [r for r in app.routes if getattr(r, "path", None) == "/mcp"]
    return _Gate(endpoint.app, tokens, private), lifespan
