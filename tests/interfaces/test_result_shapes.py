"""One shape for a list or a search on every interface: the CLI's --json, HTTP and MCP answer
the same object (``{"cards": [...]}``, a search with its query and mode), with the same cards
(MCP's without their empty fields), on the same store."""

from __future__ import annotations

import asyncio
import json

import pytest

from notewell.interfaces.mcp.results import compact
from tests.interfaces.cli_harness import call
from tests.interfaces.server_fixture import Server

NOTES = (
    "---\ntitle: Cache stampede\nkind: finding\ntags: [cache]\n---\nEvery worker refills the cache at once.\n",
    "---\ntitle: Cache warmup\nkind: decision\n---\nWarm the cache before the deploy ends.\n",
    "# Pool size\n\nA pool of 32 is enough.\n",
)


def _cli(root, *argv: str) -> dict:
    done = call(["--store", str(root), "--json", *argv], text=True, env={"NOTEWELL_AUTOWATCH": "off"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _mcp(srv: Server, tool: str, arguments: dict) -> dict:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def ask() -> dict:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {srv.tokens['boss']}"}) as http:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    result = await s.call_tool(tool, arguments)
                    assert not result.is_error, result.content[0].text
                    assert json.loads(result.content[0].text) == result.structured_content
                    return result.structured_content

    return asyncio.run(ask())


@pytest.mark.slow
def test_list_and_search_answer_one_shape_on_the_cli_over_http_and_over_mcp(tmp_path):
    pytest.importorskip("mcp")
    srv = Server(tmp_path / "notes")
    try:
        for text in NOTES:
            srv.store.add_note(text, author="alice")
        root = srv.store.root
        # The store's owner each time: the CLI on the folder, an owner token over HTTP and MCP.
        listed = {
            "cli": _cli(root, "list", "--limit", "2", "--kind", "finding", "--kind", "decision"),
            "http": srv.call("GET", "/api/notes?limit=2&kind=finding,decision", token="boss").body,
            "mcp": _mcp(srv, "list_notes", {"limit": 2, "kind": ["finding", "decision"]}),
        }
        found = {
            "cli": _cli(root, "search", "cache", "--tag", "cache"),
            "http": srv.call("GET", "/api/notes/search?query=cache&tags=cache", token="boss").body,
            "mcp": _mcp(srv, "search_notes", {"query": "cache", "tags": "cache"}),
        }
    finally:
        srv.close()
    for answers, keys in ((listed, {"cards"}), (found, {"query", "mode", "cards"})):
        assert {name: set(answer) for name, answer in answers.items()} == dict.fromkeys(answers, keys)
        assert answers["cli"]["cards"] and answers["cli"] == answers["http"]
        assert answers["mcp"] == compact(answers["http"])  # MCP leaves out null and empty fields
    assert [c["title"] for c in listed["http"]["cards"]] == ["Cache warmup", "Cache stampede"]
    assert (found["http"]["query"], found["http"]["mode"]) == ("cache", "keyword")
    assert [c["title"] for c in found["http"]["cards"]] == ["Cache stampede"]
