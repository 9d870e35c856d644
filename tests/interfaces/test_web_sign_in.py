"""Signing in to the page, over real HTTP: the one-time link of ``notewell serve``, a typed token
swapped for a session, signing out, and what an attacker can and cannot do with either."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import quote, urlsplit

import pytest

pytest.importorskip("uvicorn")
# Each test starts a server (0.3-3 s): out of the fast lane, where test_sessions.py covers the rules.
pytestmark = pytest.mark.slow

import notewell  # noqa: E402
from notewell.backends.sqlite.tokens import TokenBook  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self):
        return json.loads(self.body)

    def cookie(self) -> SimpleCookie:
        jar: SimpleCookie = SimpleCookie()
        for header in self.headers.get_all("set-cookie") or []:
            jar.load(header)
        return jar


def ask(
    url: str, method: str = "GET", path: str = "/", body=None, *, cookie: str | None = None, origin=None, site=None
) -> Reply:
    """One request, redirects not followed, with the session *cookie* (``name=value``), *origin*
    and *site* (the Sec-Fetch-Site a browser sends)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if cookie:
        headers["Cookie"] = cookie
    if origin:
        headers["Origin"] = origin
    if site:
        headers["Sec-Fetch-Site"] = site
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    answer = conn.getresponse()
    reply = Reply(answer.status, answer.headers, answer.read())
    conn.close()
    return reply


def path_of(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


def session_cookie(reply: Reply) -> str:
    (name, morsel), *rest = reply.cookie().items()
    assert not rest
    return f"{name}={morsel.value}"


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes", sign_in={})
    yield server
    server.close()


def signed_in_by_link(server: Server) -> str:
    server.sessions.new_link(asked=False)
    reply = ask(server.url, path=path_of(server.printed[-1]))
    assert reply.status == 303 and reply.headers["location"] == "/"
    return session_cookie(reply)


def test_the_link_signs_in_once_with_an_http_only_strict_cookie(srv):
    srv.sessions.new_link(asked=False)
    link = srv.printed[-1]
    assert link.startswith(srv.url + "/signin?code=") and len(link.split("code=")[1]) >= 40
    first = ask(srv.url, path=path_of(link))
    assert first.status == 303 and first.headers["location"] == "/"
    assert first.headers["cache-control"] == "no-store" and first.headers["referrer-policy"] == "no-referrer"
    ((name, morsel),) = first.cookie().items()
    assert name == f"notewell_session_{srv.port}"  # a server on another port keeps its own
    assert morsel["httponly"] and morsel["samesite"].lower() == "strict" and morsel["path"] == "/"
    assert 0 < int(morsel["max-age"]) <= 12 * 3600
    cookie = f"{name}={morsel.value}"
    who = ask(srv.url, path="/api/session", cookie=cookie).json()
    assert who["signed_in"] and who["owner"] and who["name"] == "keyboard" and who["via"] == "link"
    assert who["links"] is True and who["ends_at"].endswith("Z")
    # The owner session writes and edits as the owner.
    note = ask(
        srv.url, "POST", "/api/notes", {"text": "# By the owner\n\nfrom the page"}, cookie=cookie, origin=srv.url
    )
    assert note.status == 201 and note.json()["author"] == "keyboard"
    theirs = srv.store.add_note("# Alice's\n\ntext", author="alice")
    edit = ask(
        srv.url, "PATCH", f"/api/notes/{theirs.id}", {"text": "# Alice's\n\nfixed"}, cookie=cookie, origin=srv.url
    )
    assert edit.status == 200
    # Used once: the same link again signs nobody in.
    again = ask(srv.url, path=path_of(link))
    assert again.status == 303 and again.headers["location"] == "/?signin=failed"
    assert not again.headers.get_all("set-cookie")
    assert srv.sessions.count() == 1


def test_a_link_expires(tmp_path):
    server = Server(tmp_path / "notes", sign_in={"code_seconds": 0.4})
    try:
        server.sessions.new_link(asked=False)
        time.sleep(0.6)
        late = ask(server.url, path=path_of(server.printed[-1]))
        assert late.status == 303 and late.headers["location"] == "/?signin=failed"
        assert not late.headers.get_all("set-cookie") and server.sessions.count() == 0
    finally:
        server.close()


def test_near_misses_sign_nobody_in_and_leave_the_code_working(srv):
    srv.sessions.new_link(asked=False)
    link = srv.printed[-1]
    code = link.split("code=")[1]
    flipped = code[:-1] + ("A" if code[-1] != "A" else "B")
    guesses = [flipped, code[:-1], code + "x", code.upper() if code.upper() != code else code.lower(), "", "x" * 5000]
    guesses += [code[:10], "\x00", "ü" * 20, code + "\x00"]
    for guess in guesses:
        reply = ask(srv.url, path="/signin?code=" + quote(guess, safe=""))
        assert reply.status == 303 and reply.headers["location"] == "/?signin=failed", guess[:20]
        assert not reply.headers.get_all("set-cookie")
    assert ask(srv.url, path="/signin").headers["location"] == "/?signin=failed"
    assert ask(srv.url, path=path_of(link)).headers["location"] == "/"  # the right one still works, once


def test_asking_for_links_is_bounded_and_never_answers_the_code(tmp_path):
    server = Server(tmp_path / "notes", sign_in={"link_seconds": 0.5, "max_sessions": 3})
    try:
        server.sessions.new_link(asked=False)
        old = server.printed[-1]
        time.sleep(0.55)
        asked = ask(server.url, "POST", "/api/session/link", {}, origin=server.url)
        assert asked.status == 200 and asked.json() == {"printed": True, "expires_in": 600.0}
        new = server.printed[-1]
        assert new != old and new.split("code=")[1].encode() not in asked.body
        # The pending code is the newest only: the older one no longer signs in.
        assert ask(server.url, path=path_of(old)).headers["location"] == "/?signin=failed"
        again = ask(server.url, "POST", "/api/session/link", {}, origin=server.url)
        assert again.status == 429 and int(again.headers["retry-after"]) >= 1
        assert len(server.printed) == 2
        # Asked from elsewhere than the page (no Origin, another port's page): refused.
        time.sleep(0.55)
        assert ask(server.url, "POST", "/api/session/link", {}).status == 403
        assert ask(server.url, "POST", "/api/session/link", {}, origin="http://127.0.0.1:1").status == 403
        assert len(server.printed) == 2
        # Sessions are bounded: the fourth ends the first.
        cookies = []
        for _ in range(4):
            reply = ask(server.url, "POST", "/api/session", {"token": server.tokens["bob"]}, origin=server.url)
            assert reply.status == 200
            cookies.append(session_cookie(reply))
        assert server.sessions.count() == 3
        assert ask(server.url, path="/api/session", cookie=cookies[0]).json()["signed_in"] is False
        assert ask(server.url, path="/api/session", cookie=cookies[3]).json()["name"] == "bob"
    finally:
        server.close()


def test_a_write_with_the_cookie_must_come_from_the_page(srv):
    cookie = signed_in_by_link(srv)
    text = {"text": "# Forged\n\nfrom another page"}
    assert ask(srv.url, "POST", "/api/notes", text, cookie=cookie).status == 403
    other = f"http://127.0.0.1:{srv.port + 1}"
    refused = ask(srv.url, "POST", "/api/notes", text, cookie=cookie, origin=other)
    assert refused.status == 403 and refused.json()["error"]["code"] == "forbidden"
    assert srv.store.search_notes("forged") == []
    assert ask(srv.url, "POST", "/api/notes", text, cookie=cookie, origin=srv.url).status == 201
    # Reading with the cookie needs no Origin; but not from another site, nor another port's page
    # (same-site to a browser), since a GET can write too: a read recorded on an attempt.
    assert ask(srv.url, path="/api/notes", cookie=cookie).status == 200
    assert ask(srv.url, path="/api/notes", cookie=cookie, site="same-origin").status == 200
    assert ask(srv.url, path="/api/notes", cookie=cookie, site="none").status == 200  # typed into the address bar
    for site in ("same-site", "cross-site"):
        assert ask(srv.url, path="/api/notes", cookie=cookie, site=site).status == 403


def test_signing_out_ends_the_session_on_the_server(srv):
    cookie = signed_in_by_link(srv)
    out = ask(srv.url, "DELETE", "/api/session", cookie=cookie, origin=srv.url)
    assert out.status == 200 and out.json()["signed_in"] is False
    ((name, morsel),) = out.cookie().items()
    assert morsel.value == "" and morsel["max-age"] == "0"  # the browser drops it
    # The old cookie, kept and sent again, signs nobody in: writes are refused, not anonymous.
    replay = ask(srv.url, "POST", "/api/notes", {"text": "# Replayed\n\nx"}, cookie=cookie, origin=srv.url)
    assert replay.status == 401 and "sign in again" in replay.json()["error"]["message"]
    who = ask(srv.url, path="/api/session", cookie=cookie)
    assert who.json()["signed_in"] is False and who.cookie()[f"notewell_session_{srv.port}"]["max-age"] == "0"
    assert srv.sessions.count() == 0


def test_a_typed_token_becomes_a_session_that_ends_with_the_token(srv):
    bad = ask(srv.url, "POST", "/api/session", {"token": "nwt_not-a-token"}, origin=srv.url)
    assert bad.status == 401 and not bad.headers.get_all("set-cookie")
    assert ask(srv.url, "POST", "/api/session", {"token": srv.tokens["alice"]}).status == 403  # not from the page
    reply = ask(srv.url, "POST", "/api/session", {"token": srv.tokens["alice"]}, origin=srv.url)
    assert reply.status == 200 and srv.tokens["alice"].encode() not in reply.body
    who = reply.json()
    assert (who["name"], who["owner"], who["via"]) == ("alice", False, "token")
    cookie = session_cookie(reply)
    note = ask(srv.url, "POST", "/api/notes", {"text": "# Alice on the page\n\nx"}, cookie=cookie, origin=srv.url)
    assert note.status == 201 and note.json()["author"] == "alice"
    TokenBook(srv.store.root / ".notewell").revoke("alice")
    after = ask(srv.url, "POST", "/api/notes", {"text": "# After revoking\n\nx"}, cookie=cookie, origin=srv.url)
    assert after.status == 401 and "alice" in after.json()["error"]["message"]
    assert ask(srv.url, path="/api/session", cookie=cookie).json()["signed_in"] is False


def test_a_server_not_asked_to_makes_no_links(tmp_path):
    server = Server(tmp_path / "notes")  # as `serve --host 0.0.0.0` without --sign-in-link
    try:
        assert ask(server.url, path="/api/session").json()["links"] is False
        assert ask(server.url, "POST", "/api/session/link", {}, origin=server.url).status == 404
        assert ask(server.url, path="/signin?code=anything").headers["location"] == "/?signin=failed"
        assert server.printed == []
    finally:
        server.close()


def _serve(store, out, *extra: str) -> subprocess.Popen:
    """`notewell serve` in a process of its own, what it prints going to the file *out*."""
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {**os.environ, "PYTHONPATH": src, "NOTEWELL_EMBEDDER": "hash", "NOTEWELL_AUTOWATCH": "off"}
    cmd = [sys.executable, "-m", "notewell", "--store", str(store), "serve", "--port", "0", "--no-mcp", *extra]
    with open(out, "w") as sink:
        return subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE, env=env, text=True)


def _answering(server: subprocess.Popen, out) -> str:
    """What serve printed once it answers (every line it prints before it answers is out by then)."""
    deadline = time.monotonic() + 30
    while True:
        assert time.monotonic() < deadline and server.poll() is None, server.stderr.read()
        said = out.read_text()
        if " at http://" in said:
            url = said.split(" at ", 1)[1].split()[0].replace("0.0.0.0", "127.0.0.1")
            try:
                if ask(url, path="/healthz").status == 200:
                    return out.read_text()
            except OSError:
                pass
        time.sleep(0.1)


@pytest.mark.slow
def test_serve_prints_a_link_on_loopback_only_unless_asked(tmp_path):
    store, out = tmp_path / "s", tmp_path / "out.txt"
    for extra, printed in (((), True), (("--host", "0.0.0.0"), False), (("--host", "0.0.0.0", "--sign-in-link"), True)):
        server = _serve(store, out, *extra)
        try:
            said = _answering(server, out)
            assert ("/signin?code=" in said) is printed, (extra, said)
            if not extra:
                line = next(line for line in said.splitlines() if "/signin?code=" in line)
                assert "sign in to the page as" in line and "(owner)" in line and "10 minutes" in line
                base = said.split(" at ", 1)[1].split()[0]
                reply = ask(base, path=path_of(line.split(": ", 1)[1].split()[0]))
                assert reply.status == 303 and reply.headers["location"] == "/" and session_cookie(reply)
        finally:
            server.terminate()
            server.communicate(timeout=20)
