"""The `memory` tool group: Anthropic's memory tool as one MCP tool, driven by the MCP SDK's own
client over stdio (`notewell mcp --tools memory`) and at /mcp with tokens (each caller's
permissions and visibility)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, stdio_client  # noqa: E402

from tests.interfaces.server_fixture import Server  # noqa: E402
from tests.interfaces.test_mcp import _http_session, _stdio_params  # noqa: E402

LISTING = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"


async def _memory(session: ClientSession, **arguments) -> tuple[str, bool]:
    result = await session.call_tool("memory", arguments)
    text = result.structured_content.get("result") if not result.is_error else result.content[0].text
    return text, bool(result.is_error)


@pytest.mark.slow
def test_the_memory_tool_over_stdio(tmp_path):
    async def scenario():
        async with stdio_client(_stdio_params(tmp_path / "notes", tools="memory")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                (tool,) = (await s.list_tools()).tools
                assert tool.name == "memory" and tool.annotations.destructive_hint is True
                schema = tool.input_schema["properties"]
                assert schema["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]
                assert {"path", "file_text", "old_str", "new_str", "insert_line", "insert_text", "view_range"} <= set(
                    schema
                )
                said = [
                    await _memory(s, command="view", path="/memories"),
                    await _memory(s, command="create", path="/memories/todo.md", file_text="- ship\n"),
                    await _memory(
                        s, command="str_replace", path="/memories/todo.md", old_str="ship", new_str="ship it"
                    ),
                    await _memory(s, command="insert", path="/memories/todo.md", insert_line=1, insert_text="- rest"),
                    await _memory(s, command="view", path="/memories/todo.md", view_range=[2, -1]),
                    await _memory(s, command="rename", old_path="/memories/todo.md", new_path="/memories/done.md"),
                    await _memory(s, command="view", path="/memories/%2e%2e/etc"),
                    await _memory(s, command="create", path="/memories/done.md", file_text="x"),
                    await _memory(s, command="view", path="/memories"),
                    await _memory(s, command="delete", path="/memories/done.md"),
                    await _memory(s, command="view", path="/memories/done.md"),
                ]
                bad = await s.call_tool("memory", {"command": "view", "path": "/memories", "paht": "x"})
                return said, bad

    said, bad = asyncio.run(scenario())
    assert said == [
        (LISTING + "\n0B\t/memories", False),
        ("File created successfully at: /memories/todo.md", False),
        (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\t- ship it\n     2\t",
            False,
        ),
        ("The file /memories/todo.md has been edited.", False),
        ("Here's the content of /memories/todo.md with line numbers:\n     2\t- rest\n     3\t", False),
        ("Successfully renamed /memories/todo.md to /memories/done.md", False),
        ("invalid_argument: Path /memories/%2e%2e/etc would escape /memories directory", True),
        ("invalid_argument: Error: File /memories/done.md already exists", True),
        (LISTING + "\n17B\t/memories\n17B\t/memories/done.md", False),
        ("Successfully deleted /memories/done.md", False),
        ("invalid_argument: The path /memories/done.md does not exist. Please provide a valid path.", True),
    ]
    assert bad.is_error and "unknown argument 'paht'; did you mean 'path'?" in bad.content[0].text


@pytest.mark.slow
def test_the_memory_tool_at_mcp_keeps_each_callers_permissions(tmp_path):
    srv = Server(tmp_path / "notes", tools="memory")
    try:
        srv.store.set_project("alice:private", private=True, owner="alice")
        attempt = srv.store.start_attempt("alice:private", author="alice").id

        async def as_alice(s):
            return [
                await _memory(s, command="create", path="/memories/shared.md", file_text="for everyone\n"),
                await _memory(s, command="create", path="/memories/team/alice.md", file_text="alice's\n"),
                await _memory(s, command="view", path="/memories"),
            ]

        assert asyncio.run(_http_session(srv, "alice", as_alice))[0] == (
            "File created successfully at: /memories/shared.md",
            False,
        )
        # A private file of Alice's, written through the Python API on her private attempt.
        from notewell.agents.memory_files import MemoryFiles

        MemoryFiles(srv.store, author="alice", attempt=attempt).create("/memories/secret.md", "zebra\n")

        async def as_bob(s):
            return [
                await _memory(s, command="create", path="/memories/team/bob.md", file_text="bob's\n"),
                await _memory(s, command="delete", path="/memories/team"),  # Alice's file is there too
                await _memory(s, command="delete", path="/memories/team/bob.md"),
                await _memory(s, command="view", path="/memories"),
                await _memory(s, command="view", path="/memories/secret.md"),
                await _memory(s, command="str_replace", path="/memories/shared.md", old_str="everyone", new_str="bob"),
                await _memory(s, command="delete", path="/memories/shared.md"),
            ]

        created, team, own, listing, secret, replace, delete = asyncio.run(_http_session(srv, "bob", as_bob))
        assert created == ("File created successfully at: /memories/team/bob.md", False)
        assert team[1] and team[0].startswith("forbidden: only its author or the store's owner may change note")
        assert own == ("Successfully deleted /memories/team/bob.md", False)  # it was still there
        assert listing == (
            LISTING + "\n21B\t/memories\n13B\t/memories/shared.md\n8B\t/memories/team/\n8B\t/memories/team/alice.md",
            False,
        )
        assert secret == (
            "invalid_argument: The path /memories/secret.md does not exist. Please provide a valid path.",
            True,
        )
        assert replace[1] and replace[0].startswith("forbidden: only its author or the store's owner may change note")
        assert delete[1] and delete[0].startswith("forbidden:")

        async def as_reader(s):
            return await _memory(s, command="create", path="/memories/r.md", file_text="x")

        assert asyncio.run(_http_session(srv, "reader", as_reader)) == ("forbidden: token 'reader' is read-only", True)

        async def anonymous(s):
            return await _memory(s, command="view", path="/memories")

        assert asyncio.run(_http_session(srv, None, anonymous)) == listing
        assert [c.author for c in srv.store.list_notes(kind="memory")] == ["alice", "alice", "alice"]
        assert srv.store.get_note(srv.store.list_notes(kind="memory")[2].id).body == "for everyone\n"
    finally:
        srv.close()
