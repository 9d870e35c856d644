"""MCP as clients speak it now: the SDK's client at each protocol revision (2025-11-25 with its
`initialize` handshake, 2026-07-28 stateless) against `notewell mcp` over stdio and `/mcp` over
HTTP; notes as resources, read with get_note's visibility; raw JSON-RPC where the revision's
text says what the wire must hold (headers, negotiation, error codes)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

import notewell  # noqa: E402
from notewell.interfaces.mcp.resources import PAGE  # noqa: E402
from notewell.interfaces.mcp.server import make_mcp  # noqa: E402
from notewell.services.server_api import ServerAPI  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402

LEGACY, MODERN = "legacy", "2026-07-28"  # the SDK client's modes: the handshake (2025-11-25), stateless
NOT_FOUND = {LEGACY: -32002, MODERN: -32602}  # resources/read of no note, as each revision says
SRC = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
ENV = {
    "PATH": os.environ.get("PATH", ""),
    "HOME": os.environ.get("HOME", "/tmp"),
    "PYTHONPATH": SRC,
    "PYTHONDONTWRITEBYTECODE": "1",
    "NOTEWELL_EMBEDDER": "hash",
    "NOTEWELL_AUTOWATCH": "off",
}
MISSING = "notewell://note/nte_0000000000"


def _stdio(store) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "notewell", "--store", str(store), "mcp"], env=ENV)


def _ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def _refusal(client: Client, uri: str) -> tuple[int, str]:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    return refused.value.error.code, refused.value.error.message


async def _first_hour(client: Client, mode: str) -> None:
    """What an agent does first, at either revision: the tools with their annotations, a note
    written, found and read, and the note as a resource."""
    assert client.session.protocol_version == ("2025-11-25" if mode == LEGACY else MODERN)
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools][:3] == ["search_notes", "get_note", "add_note"]
    for tool in tools:
        hints = tool.annotations
        assert hints.title and None not in (hints.read_only_hint, hints.idempotent_hint), tool.name
    written = _ok(await client.call_tool("add_note", {"text": "---\ntitle: Heron\nkind: finding\n---\nheron nest"}))
    found = _ok(await client.call_tool("search_notes", {"query": "heron"}))
    assert [c["id"] for c in found["cards"]] == [written["id"]]
    read = _ok(await client.call_tool("get_note", {"id": written["id"]}))
    listed = (await client.list_resources()).resources
    assert [r.uri for r in listed] == [f"notewell://note/{written['id']}"]
    assert listed[0].title == "Heron" and listed[0].mime_type == "text/markdown"
    contents = (await client.read_resource(listed[0].uri)).contents
    assert [(c.text, c.mime_type) for c in contents] == [(read["text"], "text/markdown")]
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["notewell://note/{id}"]
    assert (await _refusal(client, MISSING))[0] == NOT_FOUND[mode]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
def test_notewell_mcp_over_stdio_at_each_revision(tmp_path, mode):
    async def scenario():
        async with Client(_stdio(tmp_path / "notes"), mode=mode) as client:
            await _first_hour(client, mode)

    asyncio.run(scenario())


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes", tools="all")
    yield server
    server.close()


async def _over_http(srv, token, mode, work):
    headers = {"Authorization": f"Bearer {srv.tokens[token]}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(f"{srv.url}/mcp", http_client=http), mode=mode) as client:
            return await work(client)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
def test_mcp_over_http_at_each_revision(srv, mode):
    asyncio.run(_over_http(srv, "alice", mode, lambda client: _first_hour(client, mode)))


@pytest.mark.slow
def test_the_auto_client_finds_the_stateless_revision_over_both_transports(srv, tmp_path):
    async def version(client):
        return client.session.protocol_version

    async def over_stdio():
        async with Client(_stdio(tmp_path / "other")) as client:
            return client.session.protocol_version

    assert asyncio.run(_over_http(srv, None, "auto", version)) == MODERN
    assert asyncio.run(over_stdio()) == MODERN


@pytest.mark.slow
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
def test_resources_over_http_show_each_caller_only_what_it_may_see(srv, mode):
    srv.store.set_project("alice:secret", private=True, owner="alice")

    async def as_alice(client):
        aid = _ok(await client.call_tool("start_attempt", {"project": "alice:secret"}))["id"]
        hidden = _ok(await client.call_tool("add_note", {"text": "# launch codes\n\nzebra", "attempt_id": aid}))
        public = _ok(await client.call_tool("add_note", {"text": "# public zebra\n\nzebra outside"}))
        assert {r.name for r in (await client.list_resources()).resources} == {hidden["id"], public["id"]}
        assert "launch codes" in (await client.read_resource(f"notewell://note/{hidden['id']}")).contents[0].text
        return hidden["id"], public["id"]

    hidden, public = asyncio.run(_over_http(srv, "alice", mode, as_alice))

    async def as_other(client):
        assert [r.name for r in (await client.list_resources()).resources] == [public]
        code, message = await _refusal(client, f"notewell://note/{hidden}")
        # A note it may not see reads exactly like one that never was.
        assert (code, message.replace(hidden, "ID")) == (NOT_FOUND[mode], "no note at 'notewell://note/ID'")
        assert await _refusal(client, MISSING) == (code, message.replace(hidden, "nte_0000000000"))
        return True

    assert asyncio.run(_over_http(srv, "bob", mode, as_other))
    assert asyncio.run(_over_http(srv, None, mode, as_other))  # no token: public reads only

    async def as_owner(client):
        return {r.name for r in (await client.list_resources()).resources}

    assert asyncio.run(_over_http(srv, "boss", mode, as_owner)) == {hidden, public}


@pytest.mark.slow
@pytest.mark.parametrize("mode", [LEGACY, MODERN])
def test_over_stdio_the_local_owner_sees_private_notes_as_resources(tmp_path, mode):
    root = tmp_path / "notes"
    with notewell.open(root, embedder=None) as store:
        store.set_project("alice:secret", private=True, owner="alice")
        attempt = store.start_attempt("alice:secret", author="alice")
        hidden = store.add_note("# launch codes\n\nzebra", attempt=attempt.id, author="alice").id

    async def scenario():
        async with Client(_stdio(root), mode=mode) as client:
            assert [r.name for r in (await client.list_resources()).resources] == [hidden]
            return (await client.read_resource(f"notewell://note/{hidden}")).contents[0].text

    assert "launch codes" in asyncio.run(scenario())


def _in_process(store, *, local: bool, mode: str = MODERN) -> Client:
    # The server in this process (no transport): the caller is the owner when local, else
    # anonymous (no headers to name a token).
    return Client(make_mcp(ServerAPI(store), None, local=local), mode=mode)


@pytest.mark.slow
def test_resources_come_a_page_at_a_time_and_a_bad_cursor_is_refused(tmp_path):
    with notewell.open(tmp_path / "notes", embedder=None) as store:
        ids = {store.add_note(f"# note {i}\n\nbody {i}").id for i in range(2 * PAGE + 7)}

        async def scenario():
            async with _in_process(store, local=True) as client:
                pages, cursor = [], None
                while True:
                    page = await client.list_resources(cursor=cursor)
                    pages.append([r.name for r in page.resources])
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                with pytest.raises(MCPError) as refused:
                    await client.list_resources(cursor="not a cursor")
                return pages, refused.value.error

        pages, error = asyncio.run(scenario())
    assert [len(page) for page in pages] == [PAGE, PAGE, 7]
    assert sorted(sum(pages, [])) == sorted(ids)  # each note once
    assert error.code == -32602 and error.message.startswith("invalid_argument: cursor:")


@pytest.mark.slow
def test_anonymous_callers_get_public_resources_only_and_hidden_reads_like_missing(tmp_path):
    with notewell.open(tmp_path / "notes", embedder=None) as store:
        store.set_project("alice:secret", private=True, owner="alice")
        attempt = store.start_attempt("alice:secret", author="alice")
        hidden = store.add_note("# secret\n\nx", attempt=attempt.id, author="alice").id
        public = store.add_note("# public\n\ny").id

        async def scenario(mode):
            async with _in_process(store, local=False, mode=mode) as client:
                listed = [r.name for r in (await client.list_resources()).resources]
                refusals = [await _refusal(client, f"notewell://note/{nid}") for nid in (hidden, "nte_0000000000")]
                return listed, refusals

        for mode in (LEGACY, MODERN):
            listed, (secret, missing) = asyncio.run(scenario(mode))
            assert listed == [public]
            assert secret[0] == missing[0] == NOT_FOUND[mode]
            assert secret[1].replace(hidden, "nte_0000000000") == missing[1]


def test_a_uri_that_names_no_note_is_not_found_however_long(tmp_path):
    with notewell.open(tmp_path / "notes", embedder=None) as store:
        store.add_note("# kept\n\nx")

        async def scenario():
            async with _in_process(store, local=True) as client:
                said = [
                    await _refusal(client, uri)
                    for uri in ("notewell://note/../etc/passwd", "notewell://other/x", "notewell://note/kept.md")
                ]
                # Process CPU time: the store is read on a worker thread.
                started = time.process_time()
                worst = await _refusal(client, "notewell://note/" + "nte_" * 250_000)  # a 1 MB URI
                cursor = time.process_time()
                with pytest.raises(MCPError):
                    await client.list_resources(cursor="9" * 1_000_000)
                return said, worst, cursor - started, time.process_time() - cursor

        said, worst, read_cpu, list_cpu = asyncio.run(scenario())
    assert {code for code, _ in said} == {-32602}
    assert worst[0] == -32602 and len(worst[1]) < 250  # the URI is said back cut short
    assert read_cpu < 0.5 and list_cpu < 0.5, (read_cpu, list_cpu)


# --- the wire, as each revision's text says it -----------------------------------------------

META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def _post(srv, body, headers):
    request = urllib.request.Request(f"{srv.url}/mcp", data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode()
    if text.startswith("event:"):  # one answer on an SSE stream (the handshake revisions)
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return status, json.loads(text)


def _modern(method, params=None, version=MODERN, ident=1):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": version}
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {"_meta": meta, **(params or {})}}


@pytest.mark.slow
def test_the_http_wire_of_each_revision(srv):
    headers = {"Mcp-Method": "server/discover", "MCP-Protocol-Version": MODERN}
    status, found = _post(srv, _modern("server/discover"), headers)
    assert status == 200 and MODERN in found["result"]["supportedVersions"]
    # Nothing is pushed to a listener: no change notifications, no subscriptions promised.
    assert found["result"]["capabilities"]["resources"] == {"listChanged": False, "subscribe": False}
    # 2026-07-28: the routing headers must say what the body says.
    status, refused = _post(srv, _modern("tools/list"), {"MCP-Protocol-Version": MODERN})
    assert status == 400 and refused["error"]["code"] == -32020
    call = _modern("tools/call", {"name": "list_tags", "arguments": {}})
    headers = {"Mcp-Method": "tools/call", "MCP-Protocol-Version": MODERN}
    assert _post(srv, call, headers)[1]["error"]["code"] == -32020  # no Mcp-Name
    status, answered = _post(srv, call, {**headers, "Mcp-Name": "list_tags"})
    assert status == 200 and answered["result"]["structuredContent"] == {"tags": []}
    read = _modern("resources/read", {"uri": MISSING})
    headers = {"Mcp-Method": "resources/read", "Mcp-Name": MISSING, "MCP-Protocol-Version": MODERN}
    assert _post(srv, read, headers)[1]["error"]["code"] == -32602
    # A version the server does not speak: refused, naming the ones it does.
    headers = {"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2099-01-01"}
    status, refused = _post(srv, _modern("tools/list", version="2099-01-01"), headers)
    assert status == 400 and refused["error"]["code"] == -32022
    assert refused["error"]["data"]["supported"] == [MODERN]
    # The handshake: a version it does not know is answered with its newest handshake one.
    hello = {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    status, init = _post(srv, {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": hello}, {})
    assert status == 200 and init["result"]["protocolVersion"] == "2025-11-25"
    legacy_read = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": MISSING}}
    assert _post(srv, legacy_read, {"MCP-Protocol-Version": "2025-11-25"})[1]["error"]["code"] == -32002
    # The old HTTP+SSE transport (deprecated since 2025-03-26) is not served.
    for path in ("/sse", "/messages/"):
        assert srv.call("GET", path).status == 404, path


def _stdio_exchange(store, messages: list[dict]) -> list[dict]:
    """*messages* sent to a real `notewell mcp` one at a time, each once the one before is
    answered (requests run side by side); the answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(store), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    answers = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            assert line, "the server closed its output early"
            answers.append(json.loads(line))
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return answers


@pytest.mark.slow
def test_the_stdio_wire_answers_stateless_requests_without_initialize(tmp_path):
    answers = _stdio_exchange(
        tmp_path / "notes",
        [
            _modern("server/discover", ident=1),
            _modern("tools/call", {"name": "add_note", "arguments": {"text": "# x\n\ny"}}, ident=2),
            _modern("resources/list", ident=3),
            _modern("resources/read", {"uri": MISSING}, ident=4),
        ],
    )
    by_id = {a["id"]: a for a in answers}
    assert MODERN in by_id[1]["result"]["supportedVersions"]
    note = by_id[2]["result"]["structuredContent"]["id"]
    assert [r["uri"] for r in by_id[3]["result"]["resources"]] == [f"notewell://note/{note}"]
    assert by_id[4]["error"]["code"] == -32602
