"""Every interface's add answers with the notes that say much the same: the MCP receipt and its
tool description, HTTP's 201, the CLI (on stderr, so that stdout stays the new id)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.interfaces.cli_harness import call
from tests.services.test_similar_notes import POOL, POOL_AGAIN, RELATED


@pytest.mark.slow
def test_the_cli_names_similar_notes_on_stderr(tmp_path):
    store = ["--store", str(tmp_path / "notes")]
    first = call([*store, "add", "-"], input=POOL, text=True, unset=("NOTEWELL_STORE",))
    assert first.returncode == 0 and first.stderr == ""
    first_id = first.stdout.strip()
    again = call([*store, "add", "-"], input=POOL_AGAIN, text=True, unset=("NOTEWELL_STORE",))
    assert again.returncode == 0 and again.stdout.strip().startswith("nte_") and "\n" not in again.stdout.strip()
    assert (
        f"similar: {first_id}  Connection pool sizing" in again.stderr and f"notewell edit {first_id}" in again.stderr
    )
    as_json = json.loads(call([*store, "--json", "add", "-"], input=POOL_AGAIN, text=True).stdout)
    assert first_id in [s["id"] for s in as_json["similar"]]
    other = call([*store, "add", "-"], input=RELATED, text=True, unset=("NOTEWELL_STORE",))
    assert other.stderr == ""


@pytest.mark.slow
def test_the_mcp_receipt_carries_them_and_the_tool_says_to_look(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession, stdio_client

    from tests.interfaces.test_mcp import _ok, _stdio_params

    async def scenario():
        async with stdio_client(_stdio_params(tmp_path / "notes")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                first = _ok(await s.call_tool("add_note", {"text": POOL}))
                again = _ok(await s.call_tool("add_note", {"text": POOL_AGAIN}))
                return tools["add_note"].description, first, again

    description, first, again = asyncio.run(scenario())
    assert "similar" in description and "edit_note" in description
    assert not first.get("similar")
    assert [x["id"] for x in again["similar"]] == [first["id"]] and again["similar"][0]["similarity"] >= 0.3


@pytest.mark.slow
def test_http_answers_201_with_them(tmp_path):
    from tests.interfaces.server_fixture import Server

    server = Server(tmp_path / "notes")
    try:
        first = server.call("POST", "/api/notes", {"text": POOL}, token="alice")
        again = server.call("POST", "/api/notes", {"text": POOL_AGAIN}, token="alice")
        bobs = server.call("POST", "/api/notes", {"text": POOL_AGAIN}, token="bob")
    finally:
        server.close()
    assert first.status == 201 and first.body["similar"] == []
    assert again.status == 201 and [x["id"] for x in again.body["similar"]] == [first.body["id"]]
    assert bobs.status == 201 and {x["id"] for x in bobs.body["similar"]} == {first.body["id"], again.body["id"]}
