"""The MCP server driven by the SDK's own client: over stdio (`notewell mcp`) and at /mcp over HTTP."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

import notewell  # noqa: E402
from notewell.search.embedders import HashEmbedder  # noqa: E402
from tests.conftest import CARD_KEYS  # noqa: E402
from tests.interfaces.server_fixture import SLOW_MODEL_TEMPLATE, Server  # noqa: E402

TOOLS = {
    "search_notes",
    "get_note",
    "add_note",
    "edit_note",
    "delete_note",
    "list_notes",
    "notes_summary",
    "brief",
    "links",
    "add_tag",
    "list_tags",
    "start_attempt",
    "end_attempt",
    "report",
    "stale",
}


NOTEBOOK_TOOLS = {
    "notebook_init",
    "notebook_show",
    "notebook_status",
    "notebook_log",
    "notebook_recall",
    "notebook_accept",
    "notebook_promote",
}


def _stdio_params(store, cwd=None, tools="all") -> StdioServerParameters:
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": src,
        "PYTHONDONTWRITEBYTECODE": "1",
        "NOTEWELL_EMBEDDER": "hash",
        "NOTEWELL_AUTOWATCH": "off",
    }
    args = ["-m", "notewell", "--store", str(store), "mcp", *(["--tools", tools] if tools else [])]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(cwd) if cwd else None)


async def _call(session: ClientSession, tool: str, **arguments):
    return await session.call_tool(tool, arguments)


def _ok(result):
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _error_code(result) -> str:
    assert result.is_error
    return result.content[0].text.split(":", 1)[0]


@pytest.mark.slow
def test_every_tool_over_stdio(tmp_path):
    async def scenario():
        async with stdio_client(_stdio_params(tmp_path / "notes")) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                assert init.server_info.name == "notewell" and "one finding per note" in init.instructions
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert set(tools) == TOOLS | NOTEBOOK_TOOLS | {"memory"}  # the notebook: stdio only
                assert tools["search_notes"].annotations.read_only_hint is True
                assert tools["get_note"].annotations.read_only_hint is True
                assert tools["edit_note"].annotations.destructive_hint is True
                assert tools["delete_note"].annotations.destructive_hint is True
                assert tools["add_note"].annotations.read_only_hint is False
                assert "blocker" in tools["add_note"].description

                attempt = _ok(await _call(s, "start_attempt", project="demo", author="agent-1", model="m"))
                aid = attempt["id"]
                assert attempt["author"] == "agent-1"
                first = _ok(
                    await _call(s, "add_note", text="---\ntitle: Plan\nkind: plan\n---\ncache first", attempt_id=aid)
                )
                second = _ok(
                    await _call(
                        s,
                        "add_note",
                        text=f"---\ntitle: Finding\nkind: finding\nbuilds_on: [{first['id']}]\n---\ncache stampede",
                        attempt_id=aid,
                    )
                )
                found = _ok(await _call(s, "search_notes", query="cache stampede"))
                # Compact: no null or empty fields (every key one of a card's).
                assert found["cards"][0]["id"] == second["id"] and set(found["cards"][0]) <= CARD_KEYS
                assert None not in found["cards"][0].values() and "attempt_ended_at" not in found["cards"][0]
                both = _ok(await _call(s, "search_notes", query="cache stampede", mode="both", wait=True))
                assert {c["mode"] for c in both["cards"]} == {"keyword", "semantic"}
                note = _ok(await _call(s, "get_note", id=first["id"], working_attempt_id=aid))
                assert note["kind"] == "plan" and note["backlinks"][0]["id"] == second["id"]
                assert "header" not in note and "body" not in note and note["text"].startswith("---")
                by_file = _ok(await _call(s, "get_note", id=note["path"]))  # a file name works as well
                assert by_file["id"] == first["id"]
                assert _ok(await _call(s, "list_notes", limit=5))["cards"][0]["id"] in {first["id"], second["id"]}
                assert _ok(await _call(s, "notes_summary"))
                assert _ok(await _call(s, "brief", project="demo"))
                assert second["id"] in str(_ok(await _call(s, "links", id=first["id"])))
                tagged = _ok(await _call(s, "add_tag", id=first["id"], tags=["cache"]))
                assert tagged["tags"] == ["cache"] and "text" not in tagged  # a receipt, not the note
                assert "text" in _ok(await _call(s, "add_tag", id=first["id"], tags=["more"], full=True))
                assert _ok(await _call(s, "list_tags"))["tags"][0]["tag"] == "cache"
                edited = _ok(await _call(s, "edit_note", id=first["id"], text="# Plan\n\ncache later"))
                assert edited["revision"] == 4 and set(edited) <= {
                    "id",
                    "title",
                    "revision",
                    "path",
                    "kind",
                    "tags",
                    "attempt_id",
                }
                ended = _ok(await _call(s, "end_attempt", id=aid, outcome="succeeded", summary="done"))
                assert ended["outcome"] == "succeeded"

                # Errors: a tool error with the code, never a crash.
                assert _error_code(await _call(s, "edit_note", id=first["id"], text="late")) == "frozen"
                assert _error_code(await _call(s, "get_note", id="nte_0000000000")) == "not_found"
                bad = await _call(s, "get_note", id="not an id")
                assert _error_code(bad) == "invalid_id" and bad.structured_content["error"]["code"] == "invalid_id"
                # The schema's refusals in the project's form: code, one line, structured.
                big = await _call(s, "search_notes", query="x", limit=500)
                assert (
                    _error_code(big) == "invalid_argument"
                    and big.structured_content["error"]["code"] == "invalid_argument"
                )
                assert (
                    big.content[0].text
                    == "invalid_argument: search_notes: limit: input should be less than or equal to 100"
                )
                assert "\n" not in big.content[0].text and "pydantic" not in big.content[0].text
                word = await _call(s, "search_notes", query="x", limit="x")
                assert _error_code(word) == "invalid_argument" and "limit:" in word.content[0].text
                missing = await _call(s, "get_note")
                assert missing.content[0].text == "invalid_argument: get_note: id: field required"
                assert (await _call(s, "no_such_tool")).is_error
                other = _ok(await _call(s, "add_note", text="# loose\n\nnote"))
                assert _ok(await _call(s, "delete_note", id=other["id"]))
                assert _ok(await _call(s, "search_notes", query="cache"))["cards"]  # still serving

    asyncio.run(scenario())


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "notes", tools="all")
    yield server
    server.close()


async def _http_session(srv, token, work):
    headers = {"Authorization": f"Bearer {srv.tokens[token]}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(f"{srv.url}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                return await work(s)


@pytest.mark.slow
def test_mcp_over_http_with_tokens_and_visibility(srv):
    srv.store.set_project("alice:secret", private=True, owner="alice")

    async def as_alice(s):
        aid = _ok(await _call(s, "start_attempt", project="alice:secret", author="someone-else"))["id"]
        hidden = _ok(await _call(s, "add_note", text="# launch codes\n\nzebra quartz", attempt_id=aid, full=True))
        assert hidden["author"] == "alice"  # the token's name, whatever the arguments say
        public = _ok(await _call(s, "add_note", text="# public zebra\n\nzebra quartz outside"))
        return hidden, public

    hidden, public = asyncio.run(_http_session(srv, "alice", as_alice))

    async def as_bob(s):
        cards = _ok(await _call(s, "search_notes", query="zebra quartz"))["cards"]
        assert [c["id"] for c in cards] == [public["id"]]
        assert _error_code(await _call(s, "get_note", id=hidden["id"])) == "not_found"
        assert _error_code(await _call(s, "edit_note", id=public["id"], text="x")) == "forbidden"
        return cards

    mcp_cards = asyncio.run(_http_session(srv, "bob", as_bob))
    http_cards = srv.call("GET", "/api/notes/search?q=zebra+quartz", token="bob").body["cards"]
    from notewell.interfaces.mcp.results import compact

    assert mcp_cards == compact(http_cards)  # the same cards from MCP and HTTP (MCP's without empty fields)

    async def anonymous(s):
        assert _error_code(await _call(s, "add_note", text="# x\n\ny")) == "unauthorized"
        return _ok(await _call(s, "search_notes", query="zebra"))["cards"]

    assert [c["id"] for c in asyncio.run(_http_session(srv, None, anonymous))] == [public["id"]]

    async def as_reader(s):
        return _error_code(await _call(s, "add_note", text="# x\n\ny"))

    assert asyncio.run(_http_session(srv, "reader", as_reader)) == "forbidden"


@pytest.mark.slow
def test_every_tool_at_mcp_over_http(srv):
    async def as_alice(s):
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS | {"memory"}
        aid = _ok(await _call(s, "start_attempt", project="web", model="m"))["id"]
        a = _ok(await _call(s, "add_note", text="# a\n\nheron sighting", attempt_id=aid))
        b = _ok(
            await _call(s, "add_note", text=f"---\ntitle: b\nbuilds_on: [{a['id']}]\n---\nheron nest", attempt_id=aid)
        )
        assert _ok(await _call(s, "search_notes", query="heron", project="web"))["cards"]
        assert _ok(await _call(s, "get_note", id=a["id"], working_attempt_id=aid))["backlinks"][0]["id"] == b["id"]
        assert _ok(await _call(s, "list_notes", project="web"))["cards"]
        assert _ok(await _call(s, "notes_summary"))
        assert _ok(await _call(s, "brief", project="web"))
        assert b["id"] in str(_ok(await _call(s, "links", id=a["id"])))
        assert _ok(await _call(s, "add_tag", id=a["id"], tags=["birds"]))["tags"] == ["birds"]
        assert _ok(await _call(s, "list_tags"))["tags"]
        assert _ok(await _call(s, "edit_note", id=b["id"], text="# b\n\nheron nest, two eggs"))["revision"] == 2
        # A correction: the note it supersedes says so, ranks after it, and is no longer left hanging.
        blocker = _ok(
            await _call(s, "add_note", text="---\ntitle: heron gone\nkind: blocker\n---\nheron", attempt_id=aid)
        )
        assert [c["id"] for c in _ok(await _call(s, "stale", older_than="now"))["cards"]] == [blocker["id"]]
        fix = f"---\ntitle: heron back\nsupersedes: [{blocker['id']}]\n---\nheron heron heron"
        c = _ok(await _call(s, "add_note", text=fix, attempt_id=aid))
        assert _ok(await _call(s, "get_note", id=blocker["id"]))["superseded_by"] == [c["id"]]
        assert _ok(await _call(s, "get_note", id=c["id"]))["supersedes"] == [blocker["id"]]
        ranked = [x["id"] for x in _ok(await _call(s, "search_notes", query="heron"))["cards"]]
        assert ranked.index(blocker["id"]) == ranked.index(c["id"]) + 1
        assert c["id"] in str(_ok(await _call(s, "links", id=blocker["id"]))["superseded_by"])
        assert _ok(await _call(s, "stale", older_than="now"))["cards"] == []
        assert _error_code(await _call(s, "stale", older_than="fortnight")) == "invalid_argument"
        assert _ok(await _call(s, "delete_note", id=b["id"]))
        assert _ok(await _call(s, "end_attempt", id=aid, outcome="succeeded"))["outcome"] == "succeeded"
        assert _error_code(await _call(s, "add_note", text="# late\n\nx", attempt_id=aid)) == "frozen"
        return aid

    aid = asyncio.run(_http_session(srv, "alice", as_alice))
    assert srv.store.get_attempt(aid).author == "alice"


@pytest.mark.slow
def test_the_notebook_tools_over_stdio(tmp_path):
    async def scenario():
        async with stdio_client(_stdio_params(tmp_path / "notes", cwd=tmp_path)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                made = _ok(await _call(s, "notebook_init", task="fix", goal="the deploy stops timing out"))
                assert made["path"].endswith("fix/notebook.md")
                # No --help over MCP: the format comes with the path, sources with `user` among them.
                assert "## Tracker" in made["format"] and "or user (said in the conversation)" in made["format"]
                logged = _ok(await _call(s, "notebook_log", label="deploy log", text="ERROR timeout after 30 s\n"))
                assert logged["id"] == "E0001" and logged["pointer"].startswith("[E0001]")
                assert _ok(await _call(s, "notebook_recall", event="E0001", grep="timeout"))["text"].startswith("1:")
                path = tmp_path / ".agent-context" / "fix" / "notebook.md"
                path.write_text(
                    path.read_text().replace(
                        "## Facts\n", "## Facts\n- [F001] timeout = 30 s | source: E0001 | verified\n"
                    )
                )
                assert _ok(await _call(s, "notebook_status"))["unaccepted_edits"] is True
                accepted = _ok(await _call(s, "notebook_accept"))
                assert accepted["accepted"] and accepted["revision"] == 2
                assert "F001" in _ok(await _call(s, "notebook_show"))["text"]
                path.write_text(path.read_text().replace("E0001 | verified", "E0009 | verified"))
                refused = _ok(await _call(s, "notebook_accept"))
                assert not refused["accepted"] and "E0009 is not in the raw log" in refused["errors"][0]
                promoted = _ok(await _call(s, "notebook_promote", ids=["F001"]))["promoted"]
                assert promoted[0]["note_id"].startswith("nte_")
                assert _error_code(await _call(s, "notebook_recall", event="E0042")) == "not_found"

    asyncio.run(scenario())


SLOW_MODEL_SERVER = SLOW_MODEL_TEMPLATE.format(serve="serve_stdio", extra="")


@pytest.mark.slow
def test_initialize_tools_and_keyword_search_answer_while_the_model_loads(tmp_path):
    root, release, called = tmp_path / "notes", tmp_path / "release", tmp_path / "called"
    with notewell.open(root, embedder=HashEmbedder()) as s:
        nid = s.add_note("# Cache stampede\n\nEvery worker refills the cache at once.\n").id
        s.embed_pending()
    params = _stdio_params(root)
    params.args = ["-c", SLOW_MODEL_SERVER, str(root), str(release), str(called)]

    async def scenario():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                # Bounded only so that a server that waits for its model fails the test instead of hanging it.
                init = await asyncio.wait_for(s.initialize(), 120)
                assert init.server_info.name == "notewell"
                assert "search_notes" in {t.name for t in (await asyncio.wait_for(s.list_tools(), 120)).tools}
                # The model began loading once the server was up, and is still loading now.
                deadline = asyncio.get_running_loop().time() + 60
                while not called.exists() and asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.02)
                assert called.exists() and not release.exists()
                semantic = asyncio.create_task(_call(s, "search_notes", query="workers refill", mode="semantic"))
                # Sent after the semantic search, answered while that one waits for the model.
                keyword = _ok(await asyncio.wait_for(_call(s, "search_notes", query="stampede"), 120))
                assert [c["id"] for c in keyword["cards"]] == [nid]
                assert not semantic.done()
                release.touch()
                found = _ok(await asyncio.wait_for(semantic, 120))  # waited for the model, did not fail
                assert [c["id"] for c in found["cards"]] == [nid] and found["cards"][0]["mode"] == "semantic"

    asyncio.run(scenario())


def test_the_search_and_list_tools_take_every_filter_of_the_one_list(tmp_path):
    # The tools' filter arguments are made from the table; this holds the schema the SDK reads to it.
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.search.filters import FILTER_NAMES
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        tools = {t.name: t for t in asyncio.run(make_mcp(ServerAPI(store), None, local=True).list_tools())}
    for name in ("search_notes", "list_notes"):
        assert set(FILTER_NAMES) <= set(tools[name].input_schema["properties"]), name
    # Each filter's description and shape come from the table: kinds and tags take one or many.
    from notewell.search.filters import FILTERS

    properties = tools["search_notes"].input_schema["properties"]
    for spec in FILTERS:
        assert properties[spec.name].get("description") == spec.short, spec.name
        shapes = {option.get("type") for option in properties[spec.name].get("anyOf", [properties[spec.name]])}
        assert ("array" in shapes) == (spec.shape == "texts"), spec.name
    assert tuple(properties["tag_mode"]["enum"]) == ("any", "all")


def test_the_filters_the_tools_are_given_reach_the_store(tmp_path):
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        a = store.add_note("---\ntitle: A\nkind: finding\ntags: [x]\n---\nhello world").id
        b = store.add_note("---\ntitle: B\nkind: idea\ntags: [y]\n---\nhello there").id
        mcp = make_mcp(ServerAPI(store), None, local=True)

        def ids(tool, **arguments):
            return sorted(c["id"] for c in _ok(asyncio.run(mcp.call_tool(tool, arguments)))["cards"])

        assert ids("search_notes", query="hello") == sorted([a, b])
        assert ids("search_notes", query="hello", tags="x") == [a]
        assert ids("search_notes", query="hello", kind=["idea"]) == [b]
        assert ids("list_notes", tags=["y"]) == [b]
        assert ids("list_notes", tags=["x", "y"], tag_mode="all") == []
        assert ids("list_notes", created_after="2999-01-01") == []
