"""The one list of MCP tools: what the server serves, what each call takes, and what the
reference and the agents page document are that list, so a tool defined in one place is in all."""

from __future__ import annotations

import asyncio
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

import notewell
from notewell.interfaces.cli.reference import reference_markdown
from notewell.interfaces.mcp.tool import REQUIRED, hints
from notewell.interfaces.mcp.tools import TOOLS, served

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_tool_has_one_name_and_its_call_takes_its_arguments():
    names = [tool.name for tool in TOOLS]
    assert len(names) == len(set(names))
    for tool in TOOLS:
        params = list(inspect.signature(tool.call).parameters.values())[2:]  # after the API and the caller
        named = [p.name for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
        rest = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        own = [arg.name for arg in tool.args if not arg.filter]
        assert named == own, tool.name
        # The filters reach the call as keyword arguments, all or none.
        assert bool(rest) == any(arg.filter for arg in tool.args), tool.name
        assert len({arg.name for arg in tool.args}) == len(tool.args), tool.name


@pytest.mark.parametrize("local", [True, False])
@pytest.mark.parametrize("choice", [None, "all"])
def test_the_server_serves_the_table_and_nothing_else(tmp_path, local, choice):
    pytest.importorskip("mcp")
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        declared = asyncio.run(make_mcp(ServerAPI(store), None, local=local, tools=choice).list_tools())
    table = served(local, choice)
    assert [t.name for t in declared] == [t.name for t in table]
    assert local or not any(t.stdio_only for t in table)
    for tool, spec in zip(declared, table, strict=True):
        assert tool.description == spec.description, spec.name
        assert list(tool.input_schema["properties"]) == [arg.name for arg in spec.args], spec.name
        required = [arg.name for arg in spec.args if arg.default is REQUIRED]
        assert tool.input_schema.get("required", []) == required, spec.name
        for arg in spec.args:
            assert tool.input_schema["properties"][arg.name].get("description") == arg.help, (spec.name, arg.name)
        assert tool.annotations.model_dump(by_alias=True, exclude_none=True) == hints(spec), spec.name
        assert tool.annotations.read_only_hint == (spec.access == "read"), spec.name
        assert tool.annotations.destructive_hint == (spec.access == "change"), spec.name
        assert tool.output_schema is None  # every answer is an object: a schema saying so tells nothing


def test_every_tool_has_its_annotations_in_the_table():
    # title and idempotent have defaults only so that a table row without them still loads:
    # this is where a tool that does not say them fails.
    titles = [tool.title for tool in TOOLS]
    assert all(titles) and len(set(titles)) == len(titles), titles
    for tool in TOOLS:
        assert tool.idempotent is not None, tool.name
        assert tool.access != "read" or tool.idempotent, tool.name  # a read changes nothing, however often
        assert set(hints(tool)) == {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
    assert not any(tool.open_world for tool in TOOLS)  # every tool works on the store alone


@pytest.mark.slow
@pytest.mark.parametrize("local", [True, False])
def test_every_input_schema_is_json_schema_2020_12_and_checks_arguments(tmp_path, local):
    # 2026-07-28 (and 2025-11-25) read a schema without $schema as JSON Schema 2020-12.
    pytest.importorskip("mcp")
    from jsonschema import Draft202012Validator

    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        declared = asyncio.run(make_mcp(ServerAPI(store), None, local=local, tools="all").list_tools())
    schemas = {tool.name: tool.input_schema for tool in declared}
    for name, schema in schemas.items():
        assert schema["type"] == "object" and "$schema" not in schema, name
        Draft202012Validator.check_schema(schema)
    search = Draft202012Validator(schemas["search_notes"])
    assert search.is_valid({"query": "x", "kind": ["finding", "idea"], "limit": 5, "tag_mode": "all"})
    assert not search.is_valid({"query": "x", "limit": 500})
    assert not search.is_valid({"query": "x", "mode": "psychic"})
    assert not Draft202012Validator(schemas["get_note"]).is_valid({})  # id is required


def test_every_tool_is_documented():
    reference = reference_markdown()
    agents = (ROOT / "docs" / "agents.md").read_text()
    for tool in TOOLS:
        assert f"### `{tool.name}`" in reference, tool.name
        assert f"`{tool.name}`" in agents, tool.name
        for arg in tool.args:
            assert f"| `{arg.name}` |" in reference, (tool.name, arg.name)


@pytest.mark.slow
def test_the_table_and_the_reference_need_no_sdk():
    code = (
        "import sys\n"
        "from notewell.interfaces.cli.reference import reference_markdown\n"
        "reference_markdown()\n"
        "print(sorted(m for m in ('mcp', 'pydantic', 'starlette') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(notewell.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_a_write_tool_annotated_idempotent_changes_nothing_more_when_called_again(tmp_path):
    pytest.importorskip("mcp")
    from notewell.interfaces.mcp.server import make_mcp
    from notewell.services.server_api import ServerAPI

    with notewell.open(tmp_path / "notes", embedder=None) as store:
        nid = store.add_note("# a\n\nbody").id
        mcp = make_mcp(ServerAPI(store), None, local=True, tools="default,catalog")

        def state():
            try:
                note = store.get_note(nid)
            except notewell.errors.NotFoundError:
                return None
            return note.revision, note.text

        calls = {
            "edit_note": {"id": nid, "text": "# a\n\nnew body"},
            "add_tag": {"id": nid, "tags": ["x", "y"]},
            "delete_note": {"id": nid},
        }
        writes = [tool.name for tool in TOOLS if tool.idempotent and tool.access != "read" and tool.group != "notebook"]
        assert sorted(writes) == sorted(calls)  # a tool newly annotated so is checked here too
        for name, arguments in calls.items():
            asyncio.run(mcp.call_tool(name, arguments))
            once = state()
            asyncio.run(mcp.call_tool(name, arguments))
            assert state() == once, name
