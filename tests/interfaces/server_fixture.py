"""A real notewell server on 127.0.0.1 (uvicorn in a thread) and a small real HTTP client."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import notewell
from notewell.backends.sqlite.tokens import TokenBook
from notewell.search.embedders import HashEmbedder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class Server:
    """A running server over a store of its own; ``tokens`` maps a name to its secret. With
    *sign_in* (Sessions' settings, ``{}`` for the defaults) it makes sign-in links as ``notewell
    serve`` on loopback does; each one it prints is appended to ``printed``."""

    def __init__(
        self,
        root,
        *,
        private: bool = False,
        write_rate: float = 200.0,
        tools: str | None = None,
        sign_in: dict[str, Any] | None = None,
        **config: Any,
    ) -> None:
        import uvicorn

        from notewell.interfaces.cli.server import build_server
        from notewell.interfaces.http.sessions import Sessions
        from notewell.interfaces.http.slow_clients import server_config

        self.store = notewell.open(root, embedder=HashEmbedder())
        book = TokenBook(self.store.root / ".notewell")
        self.tokens = {
            "alice": book.create("alice")[1],
            "bob": book.create("bob")[1],
            "reader": book.create("reader", read_only=True)[1],
            "boss": book.create("boss", owner=True)[1],
        }
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.printed: list[str] = []
        announce = self.printed.append if sign_in is not None else None
        self.sessions = Sessions(base=self.url, announce=announce, owner="keyboard", **(sign_in or {}))
        app = build_server(self.store, private=private, write_rate=write_rate, tools=tools, sessions=self.sessions)
        self.server = uvicorn.Server(server_config(app, "127.0.0.1", self.port, **config))  # as `notewell serve` runs
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.store.close()

    def call(
        self, method: str, path: str, body: Any = None, *, token: str | None = None, raw: bytes | None = None
    ) -> Answer:
        return http_call(self.url, method, path, body, token=self.tokens.get(token, token) if token else None, raw=raw)


def http_call(
    url: str, method: str, path: str, body: Any = None, *, token: str | None = None, raw: bytes | None = None
) -> Answer:
    """One request to a server at *url* (*token*: a bearer secret); the answer's JSON parsed."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, json.loads(response.read() or b"null"), dict(response.headers))
    except urllib.error.HTTPError as exc:
        text = exc.read()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text.decode(errors="replace")
        return Answer(exc.code, parsed, dict(exc.headers))


# A real serve path (server_cli.serve_stdio or serve_http, named by {serve}) with a model that
# loads only when the test says so: a stand-in for the embedder (not the component under test)
# that blocks until the file argv[2] exists, and marks argv[3] when its loading starts.
SLOW_MODEL_TEMPLATE = """
import pathlib, sys, time
import notewell
from notewell.interfaces.cli.server import {serve}
from notewell.search.embedders import HashEmbedder
from notewell.services.embedder_loading import EmbedderLoader

release, called = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])

def slow_model():
    called.touch()
    while not release.exists():
        time.sleep(0.01)
    return HashEmbedder()

loader = EmbedderLoader(slow_model)
with notewell.open(sys.argv[1], embedder=loader.store_embedder) as store:
    {serve}(store, loader{extra})
"""
