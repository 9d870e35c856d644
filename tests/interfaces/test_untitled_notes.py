"""A note written as plain text, with no header and no ``# heading`` (issue 40: such a note was
titled by its id everywhere), is titled by its first line on every interface: the CLI (piped in
and with --text), HTTP and MCP; in list, brief, the session-start briefing and the API the page
reads."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.interfaces.cli_harness import run
from tests.interfaces.server_fixture import Server

PIPED = "the checkout hangs behind the proxy\n\nten seconds each time, then it goes through\n"
GIVEN = "Retries double the load on the payment service when it is already slow, so the queue grows"


@pytest.mark.slow
def test_the_cli_titles_a_plain_note_by_its_first_line_in_list_brief_and_the_briefing(tmp_path):
    store = tmp_path / "notes"
    attempt = run(["attempt", "start", "shop", "--author", "a"], store).stdout.decode().strip()
    env = {"NOTEWELL_ATTEMPT": attempt}
    piped = run(["add", "-"], store, input=PIPED.encode(), env_extra=env).stdout.decode().strip()
    given = run(["add", "--text", GIVEN, "--kind", "finding"], store, env_extra=env).stdout.decode().strip()
    shortened = "Retries double the load on the payment service when it is already slow, so the…"
    listed = run(["list"], store).stdout.decode()
    assert f"{piped}  the checkout hangs behind the proxy\n" in listed
    assert f"{given}  {shortened}  [finding]\n" in listed
    assert json.loads(run(["get", piped, "--json"], store).stdout)["title"] == "the checkout hangs behind the proxy"
    brief = json.loads(run(["brief", "shop", "--json"], store).stdout)
    assert {c["title"] for c in brief["recent"]} == {"the checkout hangs behind the proxy", shortened}
    hook = run(["hook", "session-start", "--project", "shop"], store).stdout.decode()
    assert f'{piped}] "the checkout hangs behind the proxy"' in hook and f'{given}] "{shortened}"' in hook


@pytest.mark.slow
def test_http_and_mcp_title_a_plain_note_by_its_first_line(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    srv = Server(tmp_path / "notes")
    try:
        posted = srv.call("POST", "/api/notes", {"text": PIPED}, token="alice")
        assert posted.status == 201 and posted.body["title"] == "the checkout hangs behind the proxy"

        async def add_over_mcp():
            headers = {"Authorization": f"Bearer {srv.tokens['alice']}"}
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(f"{srv.url}/mcp", http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        result = await session.call_tool("add_note", {"text": "缓存击穿。热点键过期时所有请求同时回源"})
                        assert not result.is_error, result.content[0].text
                        return result.structured_content

        added = asyncio.run(add_over_mcp())
        assert added["title"] == "缓存击穿。热点键过期时所有请求同时回源"
        cards = srv.call("GET", "/api/notes?limit=5").body["cards"]  # what the page lists
        assert {c["id"]: c["title"] for c in cards} == {
            posted.body["id"]: "the checkout hangs behind the proxy",
            added["id"]: "缓存击穿。热点键过期时所有请求同时回源",
        }
    finally:
        srv.close()
