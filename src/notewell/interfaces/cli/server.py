"""The server commands of the CLI: ``serve`` (HTTP API, and MCP at /mcp), ``mcp`` (stdio) and ``token``.

Each works on a notes folder (``--store``) or on a PostgreSQL database (``--database URL``),
where several servers share one store and one book of tokens.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import json
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError, UnavailableError
from ...services.embedder_loading import EmbedderLoader
from ..mcp.groups import DEFAULT_TOOLS, GROUPS, group_names
from .command import Command
from .next_steps import next_steps

if TYPE_CHECKING:
    from ...services.contract import NoteStore
    from ..http.sessions import Sessions

__all__ = ["COMMANDS", "add_tools_argument", "build_server", "serve_http", "serve_stdio"]

_SERVER_EXTRA = "the server needs the 'server' extra: pip install '.[server]' in notewell's clone"


def _open(
    args: argparse.Namespace, *, watch: bool, pool_size: int = 8, loader: EmbedderLoader | None = None
) -> NoteStore:
    """The store the arguments name, opened the CLI's one way (a server's database gets a pool)."""
    from .store_options import open_from_args

    return open_from_args(args, create=True, watch=watch, pool_size=pool_size, loader=loader)


def _loader() -> EmbedderLoader:
    """The model the environment chooses, to be loaded in the background once the server answers."""
    from ...adapters.embedder_choice import embedder_from_environment

    return EmbedderLoader(embedder_from_environment())


def _start_embedding(store: NoteStore, *, quiet: bool) -> None:
    """New notes become findable by meaning as they come (on a database, every server embeds
    its share of the queue)."""
    try:
        store.start_embedding()
    except UnavailableError as exc:
        if not quiet:
            print(f"notewell serve: semantic search off: {exc.message}", file=sys.stderr)


def cmd_token(args: argparse.Namespace) -> None:
    with _open(args, watch=False, pool_size=1) as store:
        book = store.token_book()
        if args.action == "create":
            if not args.name:
                raise InvalidArgumentError("name the token: notewell token create NAME")
            token, secret = book.create(args.name, read_only=args.read_only, owner=args.owner, expires=args.expires)
            if args.json:
                print(json.dumps({**token.to_dict(), "secret": secret}))
            else:
                print(secret)
                what = "owner" if token.owner else "read-only" if token.read_only else "read-write"
                until = f", expires {token.expires_at}" if token.expires_at else ""
                print(f"token {token.name!r} ({what}{until}); the secret above is shown once", file=sys.stderr)
        elif args.action == "revoke":
            gone = book.revoke(args.name or "")
            print(json.dumps(gone.to_dict()) if args.json else f"revoked {gone.name}")
        else:
            tokens = book.list()
            if args.json:
                print(json.dumps([t.to_dict() for t in tokens]))
            for t in [] if args.json else tokens:
                flags = "owner" if t.owner else "read-only" if t.read_only else "read-write"
                state = f"  expires {t.expires_at}" + (" (expired)" if t.expired() else "") if t.expires_at else ""
                print(f"{t.name}  {flags}  {t.created_at}{state}")


def build_server(
    store: NoteStore,
    *,
    private: bool,
    mcp: bool = True,
    write_rate: float = 20.0,
    host: str = "127.0.0.1",
    ready: Callable[[], None] | None = None,
    tools: str | None = None,
    sessions: Sessions | None = None,
) -> Any:
    """The ASGI application: the HTTP API, and the MCP server at /mcp when its extra is installed
    (set up in the background: the SDK is slow to import), offering the tools *tools* names
    (default: the core group). *ready* waits for a model loading in the background before a
    search that needs it; *sessions*, the page's sign-in."""
    try:
        from ..http.app import make_app
        from ..mcp.deferred import deferred_mcp_routes
    except ImportError:
        raise UnavailableError(_SERVER_EXTRA) from None
    from ...services.server_api import ServerAPI, WriteLimiter

    api = ServerAPI(store, private=private, limiter=WriteLimiter(rate=write_rate, burst=max(1, int(write_rate * 3))))
    tokens = store.token_book()  # a folder's file, or the database's table shared by its servers
    routes: list[Any] = []
    lifespan = None
    if mcp:
        group_names(tools, local=False)  # a mistyped group is said now, not when /mcp is first asked
        deferred = deferred_mcp_routes(api, tokens, host=host, private=private, ready=ready, tools=tools)
        if deferred is not None:
            routes, lifespan = deferred
    return make_app(api, tokens, extra_routes=routes, lifespan=lifespan, host=host, ready=ready, sessions=sessions)


def cmd_serve(args: argparse.Namespace) -> None:
    if not args.no_mcp:
        group_names(args.tools, local=False)  # a mistyped group: one line, before anything starts
    try:
        import uvicorn  # noqa: F401 - the extra's presence, checked before the store opens
    except ImportError:
        raise UnavailableError(_SERVER_EXTRA) from None
    loader = _loader()
    with _open(args, watch=True, loader=loader) as store:
        serve_http(
            store,
            loader,
            host=args.host,
            port=args.port,
            private=args.private,
            mcp=not args.no_mcp,
            write_rate=args.write_rate,
            embed=not args.no_embed,
            tools=args.tools,
            sign_in_link=args.sign_in_link,
        )


def serve_http(
    store: NoteStore,
    loader: EmbedderLoader,
    *,
    host: str,
    port: int,
    private: bool = False,
    mcp: bool = True,
    write_rate: float = 20.0,
    embed: bool = True,
    tools: str | None = None,
    sign_in_link: bool | None = None,
) -> None:
    """Serve *store* (opened with ``embedder=loader.store_embedder``) over HTTP until stopped.
    The model loads once the server listens, and new notes are embedded from then on (*embed*);
    /mcp offers the tools *tools* names. *sign_in_link*: print a one-time link that signs the
    page in as the owner (None: on a loopback address only)."""
    import uvicorn

    # Bound here, before anything is said: a port in use or out of range is one line, and the
    # "serving" line is only ever printed for a socket that listens.
    sock = listening_socket(host, port)
    port = sock.getsockname()[1]
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    sessions = _sessions(url, host, sign_in_link)
    app = build_server(
        store,
        private=private,
        mcp=mcp,
        write_rate=write_rate,
        host=host,
        ready=loader.wait,
        tools=tools,
        sessions=sessions,
    )
    from ..http.slow_clients import server_config  # the server extra's: only this command needs it

    server = uvicorn.Server(server_config(app, host, port))
    loader.start(then=(lambda: _start_embedding(store, quiet=False)) if embed else None, when=lambda: server.started)
    print(f"notewell serving {store.location} at {url} (API /api, MCP /mcp, OpenAPI /openapi.json)", flush=True)
    for line in next_steps("", serving=url):
        print("  " + line, flush=True)
    if sessions.links:
        sessions.new_link(asked=False)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn shut down gracefully and raised it again
        return
    finally:
        sock.close()
    if not server.started:
        raise UnavailableError(f"could not serve at {url} (see the message above)")


def _sessions(url: str, host: str, wanted: bool | None) -> Sessions:
    """The page's sign-in: with one-time links printed here on loopback (or when *wanted*)."""
    from ..http.app import LOOPBACK
    from ..http.sessions import CODE_SECONDS, Sessions, keyboard_owner

    if not (host in LOOPBACK if wanted is None else wanted):
        return Sessions(base=url)
    owner = keyboard_owner()
    said = f"(works once, within {round(CODE_SECONDS / 60)} minutes; the page asks for a new one)"

    def announce(link: str) -> None:
        print(f"  sign in to the page as {owner} (owner): {link}  {said}", flush=True)

    return Sessions(base=url, announce=announce, owner=owner)


def listening_socket(host: str, port: object) -> socket.socket:
    """A TCP socket bound to *host*:*port* and listening (port 0: any free one), or a one-line
    InvalidArgumentError (a port out of range, a host that is no address) / UnavailableError
    (the port in use, not allowed)."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidArgumentError(f"--port must be a whole number from 1 to 65535 (or 0: any free port), got {port}")
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise InvalidArgumentError(f"--host {host!r} is not an address to listen on ({exc})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise UnavailableError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def cmd_mcp(args: argparse.Namespace) -> None:
    group_names(args.tools, local=True)  # a mistyped group: one line, before anything starts
    if importlib.util.find_spec("mcp") is None:
        raise UnavailableError("the MCP server needs the 'mcp' extra: pip install '.[mcp]' in notewell's clone")
    loader = _loader()
    with _open(args, watch=True, pool_size=2, loader=loader) as store:
        serve_stdio(store, loader, tools=args.tools)


def serve_stdio(store: NoteStore, loader: EmbedderLoader, *, tools: str | None = None) -> None:
    """Serve *store* (opened with ``embedder=loader.store_embedder``) to one MCP client over
    stdio. Nothing slow comes before the client's ``initialize`` is answered: that happens
    before the MCP SDK is imported; the model loads once the server reads its input, and a
    semantic search that comes first waits for it (keyword search never does)."""
    from ..mcp.stdio import claim_stdio

    wire = claim_stdio()
    wire.greet()
    try:
        from ..mcp.server import run_stdio
    except ImportError:
        raise UnavailableError(
            "the MCP server needs the 'mcp' extra: pip install '.[mcp]' in notewell's clone"
        ) from None
    embed = lambda: _start_embedding(store, quiet=True)  # noqa: E731 - keyword search works without a model
    run_stdio(store, ready=loader.wait, on_start=lambda: loader.start(then=embed), wire=wire, tools=tools)


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument(
        "--port", type=int, default=8765, help="port to listen on, 1-65535, or 0 for any free one (default 8765)"
    )
    p.add_argument("--private", action="store_true", help="answer nothing without a token")
    p.add_argument("--no-mcp", action="store_true", help="no MCP endpoint at /mcp")
    p.add_argument(
        "--no-embed", action="store_true", help="do not embed new notes in the background (notewell embed does it)"
    )
    p.add_argument("--write-rate", type=float, default=20.0, help="writes per second per token (bursts of 3x)")
    p.add_argument(
        "--sign-in-link",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print a one-time link that signs the web page in as the owner (default: on a loopback --host only)",
    )
    add_tools_argument(p, "the MCP tools at /mcp")


def add_tools_argument(p: argparse.ArgumentParser, what: str) -> None:
    """``--tools``: which MCP tools a server offers (``notewell mcp``, ``serve``, and what
    ``install`` writes into a runtime's MCP server)."""
    p.add_argument(
        "--tools",
        metavar="GROUPS",
        help=f"{what}: {DEFAULT_TOOLS} (the core group), all, or groups with commas"
        f" ({', '.join(g.name for g in GROUPS)}); the reference lists each group's tools",
    )


def _token_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("create", "list", "revoke"), help="create a token, list them, or revoke one")
    p.add_argument("name", nargs="?", help="the token's name: the caller's handle and author name")
    p.add_argument("--read-only", action="store_true", help="reads only")
    p.add_argument("--owner", action="store_true", help="administers the store: sees and edits everything")
    p.add_argument("--expires", metavar="WHEN", help="a lifetime (30d, 12h, 90m) or an ISO date; default: never")


COMMANDS = (
    Command("serve", "servers", "serve the HTTP API (and MCP at /mcp) on 127.0.0.1:8765", cmd_serve, _serve_arguments),
    Command(
        "mcp",
        "servers",
        "serve the store to an MCP client over stdio",
        cmd_mcp,
        lambda p: add_tools_argument(p, "the tools"),
    ),
    Command("token", "servers", "create, list or revoke the servers' bearer tokens", cmd_token, _token_arguments),
)
