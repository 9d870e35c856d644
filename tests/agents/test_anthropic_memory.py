"""notewell's memory tool under Anthropic's own SDK: its tool runner, run against a Messages API
on 127.0.0.1 that plays the model (each reply one memory command), dispatches every command to
NotewellMemoryTool and sends back what it answers; the files are notes another process finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

anthropic = pytest.importorskip("anthropic")

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError  # noqa: E402
from anthropic.types.beta import (  # noqa: E402
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

import notewell  # noqa: E402
from notewell.agents.anthropic_memory import NotewellAsyncMemoryTool, NotewellMemoryTool  # noqa: E402

SCRIPT = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/customer/preferences.md", "file_text": "Prefers zeppelin deliveries.\n"},
    {"command": "view", "path": "/memories/customer/preferences.md"},
    {
        "command": "str_replace",
        "path": "/memories/customer/preferences.md",
        "old_str": "zeppelin",
        "new_str": "zeppelin and hovercraft",
    },
    {"command": "insert", "path": "/memories/customer/preferences.md", "insert_line": 0, "insert_text": "# Acme"},
    {"command": "rename", "old_path": "/memories/customer", "new_path": "/memories/acme"},
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/acme/preferences.md", "file_text": "again"},
    {"command": "view", "path": "/memories/../../etc/passwd"},
    {"command": "str_replace", "path": "/memories/acme/preferences.md", "old_str": "tea", "new_str": "x"},
    {"command": "create", "path": "/memories/scratch.md", "file_text": "temporary"},
    {"command": "delete", "path": "/memories/scratch.md"},
    {"command": "view"},
]
LISTING = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"
EXPECTED = [
    (LISTING + "\n0B\t/memories", False),
    ("File created successfully at: /memories/customer/preferences.md", False),
    (
        "Here's the content of /memories/customer/preferences.md with line numbers:\n"
        "     1\tPrefers zeppelin deliveries.\n     2\t",
        False,
    ),
    (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tPrefers zeppelin and hovercraft deliveries.\n     2\t",
        False,
    ),
    ("The file /memories/customer/preferences.md has been edited.", False),
    ("Successfully renamed /memories/customer to /memories/acme", False),
    (LISTING + "\n51B\t/memories\n51B\t/memories/acme/\n51B\t/memories/acme/preferences.md", False),
    ("Error: File /memories/acme/preferences.md already exists", True),
    ("Path /memories/../../etc/passwd would escape /memories directory", True),
    ("No replacement was performed, old_str `tea` did not appear verbatim in /memories/acme/preferences.md.", True),
    ("File created successfully at: /memories/scratch.md", False),
    ("Successfully deleted /memories/scratch.md", False),
    ("Error: the view command needs path", True),
]


class _Model(BaseHTTPRequestHandler):
    """The Messages API: the n-th request is answered with the n-th command of SCRIPT as a
    tool_use block (then a last text reply); the tool results each request brings are kept."""

    script: list[dict] = []
    results: list[tuple[str, bool]] = []
    tools: list[list[dict]] = []

    def do_POST(self):  # noqa: N802 - the handler's name is the standard library's
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.tools.append(body.get("tools", []))
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            for block in last["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else "".join(part["text"] for part in content)
                    self.results.append((text, bool(block.get("is_error"))))
        turn = len(self.tools) - 1
        if turn < len(self.script):
            step = self.script[turn]  # one command, or several the model asks for at once
            commands = step if isinstance(step, list) else [step]
            content = [
                {"type": "tool_use", "id": f"toolu_{turn:02}_{i}", "name": "memory", "input": command}
                for i, command in enumerate(commands)
            ]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Noted."}], "end_turn"
        reply = {
            "id": f"msg_{turn:02}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def model():
    _Model.script, _Model.results, _Model.tools = SCRIPT, [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_the_sdks_tool_runner_drives_it_and_another_process_finds_what_it_wrote(model, tmp_path):
    store = notewell.open(tmp_path / "notes")
    memory = NotewellMemoryTool(store, author="support-agent")
    assert isinstance(memory, BetaAbstractMemoryTool)
    client = anthropic.Anthropic(base_url=model, api_key="test", max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=1024,
        tools=[memory],
        messages=[{"role": "user", "content": "Remember how Acme likes its deliveries."}],
    )
    final = runner.until_done()
    assert final.content[0].text == "Noted."
    assert _Model.tools[0] == [{"type": "memory_20250818", "name": "memory"}]  # the SDK's own definition
    assert _Model.results == EXPECTED
    store.close()

    # Another process, as any other agent or person would: the file is a note search finds.
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    env = {**os.environ, "PYTHONPATH": src, "NOTEWELL_AUTOWATCH": "off"}
    found = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(tmp_path / "notes"), "search", "hovercraft", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    cards = json.loads(found.stdout)["cards"]
    assert [(c["title"], c["kind"], c["author"]) for c in cards] == [
        ("/memories/acme/preferences.md", "memory", "support-agent")
    ]


@pytest.mark.slow
def test_the_async_runner_drives_the_async_tool(model, tmp_path):
    import asyncio

    _Model.script = [
        [
            {"command": "create", "path": "/memories/a.md", "file_text": "alpha\n"},
            {"command": "create", "path": "/memories/b/c.md", "file_text": "gamma\n"},
        ],
        {"command": "view", "path": "/memories"},
        {"command": "delete", "path": "/memories/zzz"},
    ]
    store = notewell.open(tmp_path / "notes")

    async def run():
        client = anthropic.AsyncAnthropic(base_url=model, api_key="test", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=1024,
            tools=[NotewellAsyncMemoryTool(store, author="async-agent")],
            messages=[{"role": "user", "content": "Remember a and c."}],
        )
        return await runner.until_done()

    assert asyncio.run(run()).content[0].text == "Noted."
    assert _Model.results == [
        ("File created successfully at: /memories/a.md", False),
        ("File created successfully at: /memories/b/c.md", False),
        (LISTING + "\n12B\t/memories\n6B\t/memories/a.md\n6B\t/memories/b/\n6B\t/memories/b/c.md", False),
        ("Error: The path /memories/zzz does not exist", True),
    ]
    assert {c.author for c in store.list_notes(kind="memory")} == {"async-agent"}
    store.close()


def test_the_sdks_command_models_reach_the_store(store):
    memory = NotewellMemoryTool(store)
    created = memory.execute(
        BetaMemoryTool20250818CreateCommand(command="create", path="/memories/a.md", file_text="x\n")
    )
    assert created == "File created successfully at: /memories/a.md"
    replaced = memory.execute(
        BetaMemoryTool20250818StrReplaceCommand(command="str_replace", path="/memories/a.md", old_str="x", new_str="y")
    )
    assert replaced.endswith("     1\ty\n     2\t")
    viewed = memory.execute(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/a.md", view_range=[1, 1]))
    assert viewed == "Here's the content of /memories/a.md with line numbers:\n     1\ty"
    with pytest.raises(ToolError) as refused:
        memory.execute(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/b.md"))
    assert refused.value.content == "The path /memories/b.md does not exist. Please provide a valid path."
    assert store.get_note(store.list_notes(kind="memory")[0].id).revisions == 2


def test_a_notewell_error_reaches_the_model_as_a_tool_error(store):
    memory = NotewellMemoryTool(store)
    with pytest.raises(ToolError) as refused:  # over the store's size limit
        memory.call({"command": "create", "path": "/memories/big.md", "file_text": "x" * (store.max_bytes + 1)})
    assert "the limit is" in refused.value.content
    with pytest.raises(ToolError) as refused:
        memory.call({"command": "insert", "path": "/memories/big.md"})
    assert refused.value.content == "Error: the insert command needs insert_line and insert_text"
    assert store.list_notes() == []


@pytest.mark.slow
def test_notewell_imports_without_the_sdk():
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "import notewell, notewell.agents.memory_files, notewell.interfaces.mcp.tools\n"
        "assert 'notewell.agents.anthropic_memory' not in sys.modules\n"
        "try:\n    import notewell.agents.anthropic_memory\nexcept notewell.errors.UnavailableError as e:\n"
        "    print(e.message)\n"
    )
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": src}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the Anthropic memory tool needs the 'anthropic' extra: pip install '.[anthropic]'"
