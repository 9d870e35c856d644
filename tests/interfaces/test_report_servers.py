"""The report over HTTP (GET /api/report) and MCP (the `report` tool at /mcp), on a real server on
127.0.0.1: what each caller's report holds of a private project, the media types, the errors."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest

from notewell.model.timestamps import now_iso
from tests.interfaces.server_fixture import Server

pytestmark = pytest.mark.slow  # a server started per test


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes", tools="all")
    store = server.store
    store.set_project("alice:secret", private=True, owner="alice")
    public = store.start_attempt("shared", author="bob")
    secret = store.start_attempt("alice:secret", author="alice")
    blocker = store.add_note("---\ntitle: Public blocker\nkind: blocker\n---\nx\n", attempt=public.id).id
    shown = store.add_note("---\ntitle: Public finding\nkind: finding\n---\nx\n", attempt=public.id).id
    fix = f"---\ntitle: Secret fix\nkind: finding\nbuilds_on: [{blocker}]\n---\nx\n"
    hidden = [
        store.add_note("---\ntitle: Secret finding\nkind: finding\n---\nx\n", attempt=secret.id).id,
        store.add_note(fix, attempt=secret.id).id,
    ]
    time.sleep(0.002)
    server.ids = {"blocker": blocker, "shown": shown, "hidden": hidden, "secret_attempt": secret.id}
    server.until = now_iso()
    yield server
    server.close()


def _get(srv, params, token=None):
    request = urllib.request.Request(f"{srv.url}/api/report?{urlencode(params)}")
    if token:
        request.add_header("Authorization", f"Bearer {srv.tokens[token]}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def test_each_caller_s_report_over_http(srv):
    ids, window = srv.ids, {"since": "1d", "until": srv.until}
    for token in (None, "bob"):
        status, headers, md = _get(srv, window, token)
        assert status == 200 and headers["Content-Type"] == "text/markdown; charset=utf-8"
        assert ids["shown"] in md and ids["blocker"] in md  # the hidden fix closes nothing for them
        assert not any(h in md for h in ids["hidden"]) and "Secret" not in md and ids["secret_attempt"] not in md
        assert "2 notes written in the window" in md
    status, _, alice = _get(srv, window, "alice")
    assert all(h in alice for h in ids["hidden"]) and f"`{ids['blocker']}`" not in alice
    status, headers, page = _get(srv, {**window, "format": "html"}, "bob")
    assert headers["Content-Type"] == "text/html; charset=utf-8" and page.startswith("<!doctype html>")
    assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert f'<a href="/?note={ids["shown"]}">Public finding</a>' in page
    status, headers, shaped = _get(srv, {**window, "format": "json", "project": "shared"}, "bob")
    data = json.loads(shaped)
    assert headers["Content-Type"] == "application/json" and data["project"] == "shared"
    assert [line["ref"] for line in data["done"]] == [ids["shown"]]
    assert _get(srv, window, "bob")[2] == _get(srv, window, "bob")[2]  # the same dates, the same bytes


@pytest.mark.parametrize(
    "params, status, code",
    [
        ({"format": "pdf"}, 400, "invalid_argument"),
        ({"sort": "x"}, 400, "invalid_argument"),
        ({"since": "soon"}, 400, "invalid_argument"),
        ({"base_url": "javascript:alert(1)", "format": "html"}, 400, "invalid_argument"),
        ({"project": "nowhere"}, 404, "not_found"),
    ],
)
def test_bad_requests_answer_the_error_shape(srv, params, status, code):
    got, headers, body = _get(srv, params, "bob")
    assert got == status and headers["Content-Type"] == "application/json"
    assert json.loads(body)["error"]["code"] == code


def test_a_hidden_project_is_not_found_like_one_nobody_has(srv):
    hidden = json.loads(_get(srv, {"project": "alice:secret"}, "bob")[2])["error"]["message"]
    missing = json.loads(_get(srv, {"project": "alice:other"}, "bob")[2])["error"]["message"]
    assert hidden.replace("secret", "X") == missing.replace("other", "X")
    assert _get(srv, {"project": "alice:secret"}, "alice")[0] == 200


def test_the_mcp_tool_gives_the_http_report(srv):
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def report(token):
        headers = {"Authorization": f"Bearer {srv.tokens[token]}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    tools = {t.name: t for t in (await s.list_tools()).tools}
                    assert tools["report"].annotations.read_only_hint is True
                    done = await s.call_tool("report", {"since": "1d", "until": srv.until})
                    bad = await s.call_tool("report", {"since": "soon"})
                    return json.loads(done.content[0].text), bad

    answer, bad = asyncio.run(report("bob"))
    assert answer["report"] == _get(srv, {"since": "1d", "until": srv.until}, "bob")[2]
    assert answer["until"] == srv.until and not any(h in answer["report"] for h in srv.ids["hidden"])
    assert bad.is_error and bad.content[0].text.startswith("invalid_argument: since:")
