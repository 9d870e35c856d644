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
from notewell.interfaces.mcp.tool import REQUIRED
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
        hints = tool.annotations
        assert hints.read_only_hint == (spec.access == "read"), spec.name
        assert hints.destructive_hint == (spec.access == "change"), spec.name
        assert tool.output_schema is None  # every answer is an object: a schema saying so tells nothing


def test_every_tool_is_documented():
    reference = reference_markdown()
    agents = (ROOT / "docs" / "agents.md").read_text()
    for tool in TOOLS:
        assert f"### `{tool.name}`" in reference, tool.name
        assert f"`{tool.name}`" in agents, tool.name
        for arg in tool.args:
            assert f"| `{arg.name}` |" in reference, (tool.name, arg.name)


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
