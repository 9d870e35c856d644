"""Clients that a server must not wait for: slow ones are cut off at their deadline, the number
of connections stays under the process's file limit, and /mcp keeps no sessions for anyone to
pile up. Real servers on 127.0.0.1; the attacking sockets are bounded in number and time."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("mcp")

from notewell.interfaces.http.slow_clients import connection_limit  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes", head_seconds=1.0, request_seconds=2.5, limit=200)
    yield server
    server.close()


def _connect(srv) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.port), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed *sock* (None when it did not within *seconds*)."""
    began = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass
    return time.monotonic() - began


def test_silent_and_dribbling_clients_are_cut_off_while_others_are_answered(srv):
    silent = [_connect(srv) for _ in range(20)]
    heads = [_connect(srv) for _ in range(20)]
    bodies = [_connect(srv) for _ in range(20)]
    for s in bodies:
        s.sendall(
            b"POST /api/notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"
        )
    stop = threading.Event()

    def dribble():
        while not stop.is_set():
            for s in heads:
                try:
                    s.sendall(b"X-Slow: 1\r\n" if s.fileno() != -1 else b"")
                except OSError:
                    pass
            for s in bodies:
                try:
                    s.sendall(b" ")
                except OSError:
                    pass
            stop.wait(0.3)

    for s in heads:
        s.sendall(b"GET /api/notes HTTP/1.1\r\nHost: x\r\n")
    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        assert srv.call("GET", "/healthz").status == 200  # answered while 60 connections wait
        assert srv.call("GET", "/api/notes", token="alice").status == 200
        waited = [_closed_within(s, 6) for s in silent + heads + bodies]
    finally:
        stop.set()
        thread.join(5)
        for s in silent + heads + bodies:
            s.close()
    assert all(w is not None for w in waited), waited  # every slow one was closed by the server
    assert max(waited) < 4  # at its deadline (1 s for the headers, 2.5 s for the whole request)


def test_past_the_connection_limit_the_answer_is_503_at_once(tmp_path):
    server = Server(tmp_path / "notes", head_seconds=5.0, request_seconds=5.0, limit=10)
    held = [_connect(server) for _ in range(12)]
    try:
        time.sleep(0.3)
        began = time.monotonic()
        assert server.call("GET", "/healthz").status == 503
        assert time.monotonic() - began < 2
    finally:
        for s in held:
            s.close()
        server.close()
    assert 64 <= connection_limit() <= 4096


def _post_mcp(srv, body, token=None):
    request = urllib.request.Request(
        f"{srv.url}/mcp",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    if token:
        request.add_header("Authorization", f"Bearer {srv.tokens[token]}")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, dict(answer.headers), answer.read()


def test_anonymous_initializes_open_no_sessions_and_a_token_holder_is_served(srv):
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    }
    for _ in range(300):
        status, headers, _ = _post_mcp(srv, hello)
        assert status == 200 and not any(k.lower() == "mcp-session-id" for k in headers)
    status, _, body = _post_mcp(srv, hello, token="alice")
    assert status == 200 and b"notewell" in body
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_notes", "arguments": {}}}
    status, _, body = _post_mcp(srv, call, token="alice")
    assert status == 200 and b'"isError":false' in body.replace(b" ", b"")


def test_a_request_head_too_long_to_read_gets_its_400_not_a_reset(srv):
    """A request line past h11's 16 KiB is answered 400; the rest of it is read and dropped until
    the client has sent it all, so the client reads the answer (closing with it unread made the
    kernel reset the connection, and the client often got the reset: the HTTP fuzz test's flake)."""
    for _ in range(5):
        with _connect(srv) as sock:
            head = b"GET /api/notes?" + b"&".join(b"kind=" + b"0" * 1000 for _ in range(400)) + b" HTTP/1.1\r\n"
            sock.sendall(head + b"Host: x\r\n\r\n")  # 400 KB: far more than the socket buffers hold
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:80]
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b"content-type: application/json" in head.lower()
        assert json.loads(body)["error"]["code"] == "invalid_argument"
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/api/notes", timeout=10) as r:
        assert r.status == 200  # the server answers the next caller as before
