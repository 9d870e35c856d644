"""Which MCP tools a server offers (`--tools`), what their definitions cost an agent's session,
and the argument a tool was renamed from, still taken."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import notewell
from notewell.errors import InvalidArgumentError
from notewell.interfaces.mcp.groups import GROUPS, group_names
from notewell.interfaces.mcp.schema import lean_schema
from notewell.interfaces.mcp.tools import TOOLS, served
from tests.conftest import load_script
from tests.interfaces.cli_harness import call

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_mcp_tokens.py"
CORE = ["search_notes", "get_note", "add_note", "edit_note", "delete_note", "list_notes", "brief", "links"]
BUDGET = 10_000  # characters of definitions every session pays for (issue 40)


def test_the_choice_names_groups_of_the_table():
    assert group_names() == group_names("default") == ("core",)
    assert group_names("all") == tuple(group.name for group in GROUPS)
    assert group_names("all", local=False) == ("core", "catalog", "attempts", "memory")  # the notebook: stdio only
    assert group_names(" attempts , core") == ("core", "attempts")  # the table's order, whatever the choice's
    assert group_names("default,attempts,core") == ("core", "attempts")
    assert {tool.group for tool in TOOLS} == {group.name for group in GROUPS}
    for tool in TOOLS:  # a group is stdio only when its tools are
        assert tool.stdio_only == next(g for g in GROUPS if g.name == tool.group).stdio_only, tool.name
    assert [tool.name for tool in served(True)] == CORE
    assert [tool.name for tool in served(False, "all")] == [t.name for t in TOOLS if not t.stdio_only]


@pytest.mark.parametrize(
    ("choice", "local", "said"),
    [
        ("notebok", True, "--tools: no group 'notebok': did you mean notebook?"),
        ("core,atempts", True, "did you mean attempts?"),
        ("zzz", True, "give default, all, core, catalog, attempts, notebook, memory, or groups with commas"),
        ("core,", True, "names an empty group"),
        ("", True, "names an empty group"),
        ("notebook", False, "the notebook tools are served over stdio only (notewell mcp)"),
        ("core,notebook", False, "served over stdio only"),
    ],
)
def test_a_choice_that_names_no_group_is_one_line(choice, local, said):
    with pytest.raises(InvalidArgumentError) as refused:
        group_names(choice, local=local)
    assert said in refused.value.message and "\n" not in refused.value.message


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "--tools", "notebok"],
        ["serve", "--tools", "notebook", "--port", "0"],
        ["serve", "--tools", "nope", "--port", "0"],
    ],
)
def test_the_commands_refuse_an_unknown_group_in_one_line_before_starting(tmp_path, argv):
    done = call(["--store", str(tmp_path / "notes"), *argv], text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("notewell: invalid_argument: --tools: ") and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "notes").exists()  # refused before the store was opened (or made)


def test_the_schema_sent_leaves_out_what_says_nothing():
    sent = lean_schema(
        {
            "title": "search_notesArguments",
            "type": "object",
            "properties": {
                "title": {"title": "Title", "type": "string"},  # an argument named title stays
                "kind": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}},
                                   {"type": "null"}], "default": None, "title": "Kind", "description": "kinds"},
                "mode": {"anyOf": [{"enum": ["any", "all"], "type": "string"}, {"type": "null"}], "default": None},
                "limit": {"default": 10, "type": "integer", "title": "Limit"},
                "full": {"default": False, "type": "boolean"},
            },
            "required": ["title"],
        }
    )  # fmt: skip
    assert sent == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "kind": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                "description": "kinds",
            },
            "mode": {"enum": ["any", "all"], "type": "string"},
            "limit": {"default": 10, "type": "integer"},
            "full": {"default": False, "type": "boolean"},
        },
        "required": ["title"],
    }


def _listed(tmp_path, choice, *, local=True):
    pytest.importorskip("mcp")
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        return asyncio.run(make_mcp(ServerAPI(store), None, local=local, tools=choice).list_tools())


@pytest.mark.slow
def test_the_default_tools_cost_at_most_ten_thousand_characters(tmp_path):
    bench = load_script("bench_mcp_tokens", BENCH)
    default = _listed(tmp_path, None)
    assert [tool.name for tool in default] == CORE
    held, sent = (sum(bench.definition_chars(tool)[i] for tool in default) for i in (0, 1))
    assert held <= BUDGET and sent <= BUDGET, (held, sent)
    every = _listed(tmp_path, "all")
    assert [tool.name for tool in every] == [tool.name for tool in TOOLS]
    assert sum(bench.definition_chars(tool)[0] for tool in every) > held


def test_an_optional_argument_still_takes_null(tmp_path):
    pytest.importorskip("mcp")
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        nid = store.add_note("# Heron\n\nheron nest by the weir").id
        mcp = make_mcp(ServerAPI(store), None, local=True)
        schema = next(t for t in asyncio.run(mcp.list_tools()) if t.name == "search_notes").input_schema
        assert schema["properties"]["project"] == {"type": "string", "description": "only notes on its attempts"}
        found = asyncio.run(mcp.call_tool("search_notes", {"query": "heron", "project": None, "kind": None}))
    assert not found.is_error and [c["id"] for c in found.structured_content["cards"]] == [nid]


def _stdio(store: Path, *tools: str):
    from mcp import StdioServerParameters

    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(Path(notewell.__file__).parents[1]),
        "NOTEWELL_EMBEDDER": "hash",
        "NOTEWELL_AUTOWATCH": "off",
    }
    args = ["-m", "notewell", "--store", str(store), "mcp", *tools]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def _ok(result):
    assert not result.is_error, result.content[0].text
    return result.structured_content


@pytest.mark.slow
def test_notewell_mcp_offers_the_core_tools_unless_asked_and_end_attempt_takes_id_or_its_old_name(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession, stdio_client

    async def names(*tools: str) -> list[str]:
        async with stdio_client(_stdio(tmp_path / "notes", *tools)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return [tool.name for tool in (await s.list_tools()).tools]

    async def attempts() -> None:
        async with stdio_client(_stdio(tmp_path / "notes", "--tools", "default,attempts")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                listed = {t.name: t.input_schema for t in (await s.list_tools()).tools}
                assert list(listed) == [*CORE, "start_attempt", "end_attempt", "report"]
                schema = listed["end_attempt"]
                assert schema["required"] == ["id", "outcome"] and "attempt_id" not in schema["properties"]
                first, second, third = [
                    _ok(await s.call_tool("start_attempt", {"project": "p", "author": "a"}))["id"] for _ in range(3)
                ]
                ended = _ok(await s.call_tool("end_attempt", {"id": first, "outcome": "succeeded"}))
                assert (ended["id"], ended["outcome"]) == (first, "succeeded")
                # A client set up before the rename: the old name is still taken.
                old = _ok(await s.call_tool("end_attempt", {"attempt_id": second, "outcome": "failed"}))
                assert (old["id"], old["outcome"]) == (second, "failed")
                both = await s.call_tool("end_attempt", {"id": third, "attempt_id": third, "outcome": "x"})
                assert both.is_error and both.content[0].text == (
                    "invalid_argument: end_attempt: give id (attempt_id is its old name), not both"
                )
                missing = await s.call_tool("end_attempt", {"outcome": "x"})
                assert missing.content[0].text == "invalid_argument: end_attempt: id: field required"
                unknown = await s.call_tool("notebook_show", {})
                assert unknown.is_error  # not offered: not served either

    assert asyncio.run(names()) == CORE  # (--tools all: test_mcp.py's sessions)
    assert asyncio.run(names("--tools", "notebook")) == [t.name for t in TOOLS if t.group == "notebook"]
    asyncio.run(attempts())


@pytest.mark.slow
def test_the_http_endpoint_offers_the_core_tools_unless_asked(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from tests.interfaces.server_fixture import Server

    async def names(url: str, token: str) -> list[str]:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(f"{url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    return [tool.name for tool in (await s.list_tools()).tools]

    for choice, wanted in (
        (None, CORE),
        (
            "catalog,attempts",
            ["notes_summary", "add_tag", "list_tags", "start_attempt", "end_attempt", "report", "stale"],
        ),
        ("all", [tool.name for tool in TOOLS if not tool.stdio_only]),
    ):
        server = Server(tmp_path / str(choice), tools=choice)
        try:
            assert asyncio.run(names(server.url, server.tokens["alice"])) == wanted, choice
        finally:
            server.close()


@pytest.mark.slow
def test_the_benchmark_reports_the_definitions_beside_the_session():
    pytest.importorskip("mcp")
    env = {**os.environ, "PYTHONPATH": str(Path(notewell.__file__).parents[1]), "NOTEWELL_AUTOWATCH": "off"}
    done = subprocess.run([sys.executable, str(BENCH)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    default = next(line for line in done.stdout.splitlines() if line.strip().startswith("default"))
    chars = int(default.split("tools")[1].split("chars")[0].replace(",", ""))
    assert "8 tools" in default and chars <= BUDGET
    assert "15 calls" in done.stdout and "+ definitions" in done.stdout


def _said(result) -> str:
    assert result.is_error and result.structured_content["error"]["code"] == "invalid_argument"
    return result.content[0].text


async def _unknown_arguments_refused(s) -> None:
    """The session *s* (stdio or /mcp): an argument no tool declares is refused, not dropped."""
    listed = {t.name: t.input_schema for t in (await s.list_tools()).tools}
    assert "author" not in listed["add_note"]["properties"] and "kind" in listed["search_notes"]["properties"]
    said = _said(await s.call_tool("add_note", {"text": "# Heron\n\nheron nest", "author": "x"}))
    assert said == "invalid_argument: add_note: unknown argument 'author'"
    assert _ok(await s.call_tool("list_notes", {})).get("cards") == []  # nothing written
    said = _said(await s.call_tool("search_notes", {"query": "heron", "kinds": "x"}))
    assert said == "invalid_argument: search_notes: unknown argument 'kinds'; did you mean 'kind'?"
    said = _said(await s.call_tool("add_note", {"txt": "# a\n\nb", "attemptid": "att_1", "zzz": 1}))
    assert said == (
        "invalid_argument: add_note: unknown arguments 'txt', 'attemptid', 'zzz';"
        " did you mean 'text' for 'txt', 'attempt_id' for 'attemptid'?"
    )
    assert _ok(await s.call_tool("list_notes", {})).get("cards") == []
    # What the tool declares is still taken, and end_attempt's old name for id too.
    added = _ok(await s.call_tool("add_note", {"text": "---\nkind: finding\n---\n# Heron\n\nheron nest"}))
    found = _ok(await s.call_tool("search_notes", {"query": "heron", "mode": "keyword", "kind": "finding"}))
    assert [card["id"] for card in found["cards"]] == [added["id"]]
    aid = _ok(await s.call_tool("start_attempt", {"project": "p"}))["id"]
    ended = _ok(await s.call_tool("end_attempt", {"attempt_id": aid, "outcome": "failed"}))
    assert (ended["id"], ended["outcome"]) == (aid, "failed")


@pytest.mark.slow
def test_an_argument_the_tool_does_not_declare_is_refused_over_stdio(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession, stdio_client

    async def session() -> None:
        async with stdio_client(_stdio(tmp_path / "notes", "--tools", "all")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await _unknown_arguments_refused(s)

    asyncio.run(session())


@pytest.mark.slow
def test_an_argument_the_tool_does_not_declare_is_refused_at_mcp(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from tests.interfaces.server_fixture import Server

    async def session(url: str, token: str) -> None:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(f"{url}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    await _unknown_arguments_refused(s)

    server = Server(tmp_path / "notes", tools="all")
    try:
        asyncio.run(session(server.url, server.tokens["alice"]))
    finally:
        server.close()
