"""`notewell install|uninstall RUNTIME` on sample configuration files shaped as each runtime
documents them, including files that already hold other servers, hooks and settings: nothing of
theirs is lost, installing twice changes nothing, uninstalling gives their configuration back,
and what it writes really runs (the hook commands, and the MCP server through a real client)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import notewell
from notewell.interfaces.runtimes.installer import INSTALLABLE, is_notewell_hook
from tests.interfaces.cli_harness import call

CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["WebFetch"]},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "if": "Bash(rm *)",
                        "command": "${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh",
                    }
                ],
            }
        ],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat .claude/context.md"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Evaluate if Claude should stop: $ARGUMENTS"}]}],
    },
}
CLAUDE_MCP = {
    "mcpServers": {
        "shared-server": {"type": "http", "url": "https://example.com/mcp"},
        "database-tools": {
            "command": "${CLAUDE_PROJECT_DIR:-.}/servers/db-server",
            "args": ["--config", "config.json"],
            "env": {"DB_URL": "${DB_URL}"},
        },
    }
}
CLAUDE_USER_STATE = {  # ~/.claude.json: Claude Code's own state, with a local-scope server
    "numStartups": 12,
    "projects": {
        "/path/to/project": {
            "hasTrustDialogAccepted": True,
            "mcpServers": {"stripe": {"type": "http", "url": "https://mcp.stripe.com"}},
        }
    },
}
CODEX_TOML = """\
# my personal settings
model = "gpt-5.4"
approval_policy = "on-request"

[features]
hooks = true

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
MY_ENV_VAR = "MY_ENV_VALUE"  # keep me

[[hooks.PreToolUse]]
matcher = "^Bash$"
[[hooks.PreToolUse.hooks]]
type = "command"
command = '/usr/bin/python3 "$(git rev-parse --show-toplevel)/.codex/hooks/pre_tool_use_policy.py"'
timeout = 30
"""
CODEX_HOOKS = {
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup|resume",
                "hooks": [{"type": "command", "command": "python3 ~/.codex/hooks/session_start.py"}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "python3 stop_continue.py", "timeout": 30}]}],
    }
}
GEMINI_SETTINGS = {
    "general": {"vimMode": True},
    "hooksConfig": {"enabled": True, "disabled": []},
    "mcpServers": {"context7": {"httpUrl": "https://mcp.context7.com/mcp"}},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "write_file|replace",
                "hooks": [
                    {"name": "secret-scanner", "type": "command", "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/s.sh"}
                ],
            }
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"name": "init", "type": "command", "command": "node init.js"}]}
        ],
    },
}
CURSOR_MCP = {
    "mcpServers": {
        "magic-mcp": {"command": "npx", "args": ["-y", "@smithery/cli@latest"]},
        "sse": {"url": "http://localhost:3001/sse"},
    }
}
CURSOR_HOOKS = {
    "version": 1,
    "hooks": {
        "sessionStart": [{"command": ".cursor/hooks/session-init.sh"}],
        "beforeShellExecution": [
            {"command": ".cursor/hooks/approve-network.sh", "timeout": 30, "matcher": "curl|wget"}
        ],
        "stop": [{"command": ".cursor/hooks/audit.sh", "loop_limit": 10}],
    },
}

# runtime -> scope -> {relative path (under the project, or ~ for the user's): sample content}
SAMPLES = {
    "claude-code": {
        "project": {".claude/settings.json": CLAUDE_SETTINGS, ".mcp.json": CLAUDE_MCP},
        "user": {"~/.claude/settings.json": CLAUDE_SETTINGS, "~/.claude.json": CLAUDE_USER_STATE},
    },
    "codex": {
        "project": {".codex/config.toml": CODEX_TOML, ".codex/hooks.json": CODEX_HOOKS},
        "user": {"~/.codex/config.toml": CODEX_TOML, "~/.codex/hooks.json": CODEX_HOOKS},
    },
    "gemini": {
        "project": {".gemini/settings.json": GEMINI_SETTINGS},
        "user": {"~/.gemini/settings.json": GEMINI_SETTINGS},
    },
    "cursor": {
        "project": {".cursor/mcp.json": CURSOR_MCP, ".cursor/hooks.json": CURSOR_HOOKS},
        "user": {"~/.cursor/mcp.json": CURSOR_MCP, "~/.cursor/hooks.json": CURSOR_HOOKS},
    },
}


@pytest.fixture
def place(tmp_path):
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


def where(project, home, rel):
    return home / rel[2:] if rel.startswith("~/") else project / rel


def write_samples(project, home, samples):
    for rel, content in samples.items():
        path = where(project, home, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=4) + "\n")


def notewell_cli(project, home, *args, store=None):
    store = store or project.parent / "notes"
    env = {"HOME": str(home), "NOTEWELL_STATE_DIR": str(project.parent / "state")}
    return call(["--store", str(store), *args, "--dir", str(project)], env=env, unset=("NOTEWELL_STORE",), text=True)


def refused_untouched(project, home, path, text, runtime, said):
    """*path* holding *text*: installing *runtime* is refused in one line saying *said*, and the file stays."""
    path.write_text(text)
    refused = notewell_cli(project, home, "install", runtime)
    assert refused.returncode != 0 and said in refused.stderr, refused.stderr
    assert len(refused.stderr.splitlines()) == 1 and path.read_text() == text


def without_notewell(data):
    """*data* with every notewell entry taken out, as the runtime's own files would be without it."""
    data = copy.deepcopy(data)
    for key in ("mcpServers",):
        if isinstance(data.get(key), dict):
            data[key].pop("notewell", None)
            if not data[key]:
                del data[key]
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            kept = []
            for entry in hooks[event]:
                if is_notewell_hook(entry):
                    continue
                inner = [h for h in entry.get("hooks", []) if not is_notewell_hook(h)]
                if "hooks" in entry and not inner:
                    continue
                kept.append({**entry, "hooks": inner} if "hooks" in entry else entry)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    return data


def ours(data, flat=False):
    """The notewell hook commands per event."""
    found = {}
    for event, entries in data.get("hooks", {}).items():
        for entry in entries:
            handlers = [entry] if flat else entry.get("hooks", [])
            for h in handlers:
                if is_notewell_hook(h):
                    found.setdefault(event, []).append((entry.get("matcher"), h))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("runtime", list(SAMPLES))
def test_install_keeps_everything_of_theirs_and_uninstall_gives_it_back(place, runtime, scope):
    project, home = place
    samples = SAMPLES[runtime][scope]
    write_samples(project, home, samples)
    before = {rel: where(project, home, rel).read_bytes() for rel in samples}
    scope_args = ["--scope", scope]

    dry = notewell_cli(project, home, "install", runtime, *scope_args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+++" in dry.stdout and "nothing written" in dry.stdout
    assert {rel: where(project, home, rel).read_bytes() for rel in samples} == before  # a dry run writes nothing

    done = notewell_cli(project, home, "install", runtime, *scope_args, "--project", "shop")
    assert done.returncode == 0, done.stderr
    assert "next:" in done.stdout
    for rel, content in samples.items():
        path = where(project, home, rel)
        backups = list(path.parent.glob(path.name + ".notewell-backup*"))
        assert backups == [path.with_name(path.name + ".notewell-backup")]  # one, beside it
        assert backups[0].read_bytes() == before[rel]  # the old bytes
        if isinstance(content, str):  # TOML: every line of theirs, byte for byte, then notewell's block
            text = path.read_text()
            assert text.startswith(content.rstrip("\n"))
            assert tomllib.loads(text)["mcp_servers"]["context7"] == tomllib.loads(content)["mcp_servers"]["context7"]
        else:
            assert without_notewell(json.loads(path.read_text())) == content

    again = notewell_cli(project, home, "install", runtime, *scope_args, "--project", "shop")
    assert again.returncode == 0 and again.stdout.count("unchanged") >= len(samples)  # idempotent
    moved = notewell_cli(project, home, "install", runtime, *scope_args, "--project", "other")
    assert moved.returncode == 0 and "the old file is" not in moved.stdout  # notewell's own entries: no backup

    gone = notewell_cli(project, home, "uninstall", runtime, *scope_args)
    assert gone.returncode == 0, gone.stderr
    for rel in samples:
        path = where(project, home, rel)
        assert path.read_bytes() == before[rel]  # the very bytes, from the backup, which then goes (issue 40)
        assert not list(path.parent.glob("*notewell-backup*"))


def _installed(project, home, runtime):
    done = notewell_cli(project, home, "install", runtime, "--project", "shop", "--budget", "900")
    assert done.returncode == 0, done.stderr


def test_claude_code_entries_have_the_documented_shape(place):
    project, home = place
    _installed(project, home, "claude-code")
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notewell"]
    assert server["type"] == "stdio" and os.path.isabs(server["command"])
    assert server["args"][:3] == ["-m", "notewell", "mcp"]
    hooks = ours(json.loads((project / ".claude" / "settings.json").read_text()))
    assert {e: [m for m, _ in v] for e, v in hooks.items()} == {
        "SessionStart": ["startup|resume|clear", "compact"],
        "Stop": [None],
    }
    for _event, entries in hooks.items():
        for _m, handler in entries:
            assert handler["type"] == "command" and handler["timeout"] == 30
            words = shlex.split(handler["command"])
            assert "--runtime" in words and words[words.index("--runtime") + 1] == "claude-code"
            assert "--project=shop" in words and "--budget=900" in words  # one word each: "-x" stays a value
            store = next(w for w in words if w.startswith("--store="))
            assert os.path.isabs(store.removeprefix("--store="))


@pytest.mark.slow
def test_codex_gemini_and_cursor_entries_have_their_documented_shapes(place):
    project, home = place
    for runtime in ("codex", "gemini", "cursor"):
        _installed(project, home, runtime)
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["notewell"]
    assert codex["args"][:3] == ["-m", "notewell", "mcp"]
    codex_hooks = ours(json.loads((project / ".codex" / "hooks.json").read_text()))
    assert set(codex_hooks) == {"SessionStart", "Stop"}
    gemini = json.loads((project / ".gemini" / "settings.json").read_text())
    assert "type" not in gemini["mcpServers"]["notewell"]  # Gemini picks the transport from the keys
    gemini_hooks = ours(gemini)
    assert set(gemini_hooks) == {"SessionStart", "PreCompress", "BeforeAgent", "AfterAgent"}
    for entries in gemini_hooks.values():
        for matcher, handler in entries:
            assert matcher == "*" and handler["timeout"] == 30000 and handler["name"].startswith("notewell-")
    cursor = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert cursor["version"] == 1
    cursor_hooks = ours(cursor, flat=True)
    assert set(cursor_hooks) == {"sessionStart", "stop"}
    assert cursor_hooks["stop"][0][1]["loop_limit"] == 1
    assert json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["notewell"]["args"][2] == "mcp"


def test_a_changed_store_replaces_notewells_entries_instead_of_adding_more(place, tmp_path):
    project, home = place
    _installed(project, home, "claude-code")
    moved = notewell_cli(project, home, "install", "claude-code", store=tmp_path / "elsewhere")
    assert moved.returncode == 0, moved.stderr
    hooks = ours(json.loads((project / ".claude" / "settings.json").read_text()))
    assert sum(len(v) for v in hooks.values()) == 3
    assert all(str(tmp_path / "elsewhere") in h["command"] for v in hooks.values() for _m, h in v)


@pytest.mark.slow
def test_files_it_cannot_rewrite_safely_are_refused_and_left_alone(place):
    project, home = place
    gemini = project / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    jsonc = '{\n  // my servers\n  "mcpServers": {"a": {"command": "x"}} /* keep */\n}\n'
    gemini.write_text(jsonc)
    refused = notewell_cli(project, home, "install", "gemini")
    assert refused.returncode != 0 and "has comments" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert gemini.read_text() == jsonc and not list(gemini.parent.glob("*backup*"))
    broken = project / ".mcp.json"
    broken.write_text('{"mcpServers": {"a": ')
    refused = notewell_cli(project, home, "install", "claude-code")
    assert refused.returncode != 0 and "not valid JSON" in refused.stderr
    assert broken.read_text() == '{"mcpServers": {"a": ' and not (project / ".claude").exists()  # nothing half-done
    broken.write_text('{"mcpServers": ["not", "an", "object"]}')
    assert "not an object" in notewell_cli(project, home, "install", "claude-code").stderr
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir()
    for text, said in (
        ('[mcp_servers.notewell]\ncommand = "my-own"\n', "not written by notewell install"),
        ('mcp_servers = { other = { command = "x" } }\n', "would not fit"),
        ("[broken\n", "not valid TOML"),
    ):
        refused_untouched(project, home, toml, text, "codex", said)


def test_uninstall_where_nothing_was_installed_changes_nothing(place):
    project, home = place
    write_samples(project, home, SAMPLES["cursor"]["project"])
    before = (project / ".cursor" / "hooks.json").read_bytes()
    done = notewell_cli(project, home, "uninstall", "cursor")
    assert done.returncode == 0, done.stderr
    assert (project / ".cursor" / "hooks.json").read_bytes() == before
    assert not list((project / ".cursor").glob("*backup*"))
    empty = notewell_cli(project, home, "uninstall", "claude-code")
    assert empty.returncode == 0 and not (project / ".mcp.json").exists()


def _env(project):
    src = os.path.abspath(os.path.join(os.path.dirname(notewell.__file__), ".."))
    return {
        **os.environ,
        "PYTHONPATH": src,
        "NOTEWELL_STATE_DIR": str(project.parent / "state"),
        "NOTEWELL_AUTOWATCH": "off",
        "NOTEWELL_EMBEDDER": "hash",
    }


@pytest.mark.slow
def test_the_installed_hook_commands_run_and_answer_as_documented(place):
    project, home = place
    _installed(project, home, "claude-code")
    _installed(project, home, "cursor")
    store = project.parent / "notes"
    with notewell.Store(store, watch=False, embedder=None) as s:
        run = s.start_attempt("shop", author="tester").id
        nid = s.add_note("---\ntitle: Pool size\nkind: conclusion\n---\n\nA pool of 32 is enough.\n", attempt=run).id
    claude = ours(json.loads((project / ".claude" / "settings.json").read_text()))
    start = next(h for m, h in claude["SessionStart"] if m == "startup|resume|clear")
    payload = {"session_id": "e2e", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    done = subprocess.run(
        start["command"], shell=True, input=json.dumps(payload).encode(), capture_output=True,
        cwd=project, env=_env(project), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert nid in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    cursor = ours(json.loads((project / ".cursor" / "hooks.json").read_text()), flat=True)
    done = subprocess.run(
        cursor["sessionStart"][0][1]["command"], shell=True, input=b'{"conversation_id": "c1"}',
        capture_output=True, cwd=project, env=_env(project), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and nid in json.loads(done.stdout)["additional_context"]


@pytest.mark.slow
def test_the_installed_mcp_server_answers_a_real_client(place):
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    project, home = place
    _installed(project, home, "claude-code")
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notewell"]
    params = StdioServerParameters(command=server["command"], args=server["args"], env=_env(project))

    async def scenario():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                added = await s.call_tool("add_note", {"text": "# kestrel\n\nhovering over the verge"})
                assert not added.is_error
                return await s.call_tool("search_notes", {"query": "kestrel"})

    found = asyncio.run(scenario())
    assert not found.is_error and "kestrel" in json.dumps(found.structured_content)
    assert Path(server["args"][-1].removeprefix("--store=")) == project.parent / "notes"


@pytest.mark.slow
def test_install_writes_the_tool_set_chosen_into_the_runtimes_mcp_server(place):
    project, home = place
    done = notewell_cli(project, home, "install", "claude-code", "--tools", "default,attempts")
    assert done.returncode == 0, done.stderr
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notewell"]
    assert server["args"][2:] == ["mcp", f"--store={project.parent / 'notes'}", "--tools=default,attempts"]
    assert notewell_cli(project, home, "install", "codex", "--tools", "all").returncode == 0
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["notewell"]
    assert codex["args"][-1] == "--tools=all"
    assert notewell_cli(project, home, "install", "cursor").returncode == 0  # no choice: the server's default
    assert not any(a.startswith("--tools") for a in json.loads((project / ".cursor" / "mcp.json").read_text())[
        "mcpServers"]["notewell"]["args"])  # fmt: skip
    for argv, said in (
        (["gemini", "--tools", "notebok"], "--tools: no group 'notebok': did you mean notebook?"),
        (["gemini", "--tools", "all", "--no-mcp"], "with --no-mcp there is none to install"),
    ):
        refused = notewell_cli(project, home, "install", *argv)
        assert refused.returncode == 2 and said in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert not (project / ".gemini").exists()


@pytest.mark.slow
def test_the_installed_tool_set_is_what_a_real_client_is_offered(place):
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    project, home = place
    assert notewell_cli(project, home, "install", "claude-code", "--tools", "default,attempts").returncode == 0
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notewell"]
    params = StdioServerParameters(command=server["command"], args=server["args"], env=_env(project))

    async def scenario():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return [tool.name for tool in (await s.list_tools()).tools]

    names = asyncio.run(scenario())
    assert (
        "search_notes" in names and names[-3:] == ["start_attempt", "end_attempt", "report"] and "add_tag" not in names
    )


@pytest.mark.slow
def test_notewells_codex_block_is_taken_out_only_when_it_is_whole_and_notewells(place):
    project, home = place
    _installed(project, home, "codex")
    toml = project / ".codex" / "config.toml"
    whole = toml.read_text()
    theirs = '\n[mcp_servers.github]\ncommand = "gh-mcp"\n'
    for broken in (
        whole.replace("# <<< notewell <<<\n", "") + theirs,  # the end line lost: their table would be "inside"
        whole.replace("# <<< notewell <<<\n", ""),
        whole.replace("args = ", 'env = { A = "1" }\nargs = ') + theirs,
    ):
        toml.write_text(broken)
        for verb in ("uninstall", "install"):
            refused = notewell_cli(project, home, verb, "codex", "--no-hooks")
            assert refused.returncode != 0, refused.stdout
            assert "is not notewell's" in refused.stderr or "has no end line" in refused.stderr, refused.stderr
            assert toml.read_text() == broken  # their table is still there


def test_a_symlinked_file_is_changed_where_it_lives(place, tmp_path):
    project, home = place
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text(json.dumps(CLAUDE_SETTINGS))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(real)
    _installed(project, home, "claude-code")
    assert (project / ".claude" / "settings.json").is_symlink()
    assert ours(json.loads(real.read_text()))  # the target holds notewell's hooks
    notewell_cli(project, home, "uninstall", "claude-code")
    assert (project / ".claude" / "settings.json").is_symlink() and json.loads(real.read_text()) == CLAUDE_SETTINGS


def test_only_a_command_that_runs_notewell_hook_is_notewells():
    for handler in (
        {"command": "notewell hook stop"},
        {"command": "/usr/bin/python3 -m notewell hook stop --runtime claude-code"},
        {"command": "notewell", "args": ["hook", "session-start"]},
        {"command": "/venv/bin/python3.11", "args": ["-m", "notewell", "hook", "stop"]},
    ):
        assert is_notewell_hook(handler), handler
    for handler in (
        {"command": "echo notewell hook finished >> log"},
        {"command": "notewell search hook"},
        {"command": "python3 -m other notewell hook"},
        {"command": "'unbalanced"},
        {"prompt": "notewell hook"},
        "notewell hook stop",
    ):
        assert not is_notewell_hook(handler), handler


def test_unusual_json_is_refused_or_kept_exactly(place):
    project, home = place
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    for text, said in (
        ('{"hooks": {"Stop": {"not": "a list"}}}', "not a list"),
        ('{"a": 1, "a": 2}', "twice"),
        ('{"big": 1e999}', "too large"),
    ):
        refused_untouched(project, home, settings, text, "claude-code", said)
        assert not (project / ".mcp.json").exists()  # nothing half-done
    settings.write_text('{"name": "\\ud800 lone"}')
    assert notewell_cli(project, home, "install", "claude-code").returncode == 0
    assert json.loads(settings.read_text())["name"] == "\ud800 lone"
    assert not list(settings.parent.glob(".*.tmp"))


def test_uninstall_leaves_files_with_nothing_of_notewells_byte_for_byte(place):
    project, home = place
    (project / ".cursor").mkdir()
    for rel, text in (
        (".mcp.json", '{"mcpServers": {}, "x": 1}'),
        (".cursor/hooks.json", '{"version": 1, "hooks": {}}'),
    ):
        (project / rel).write_text(text)
    for runtime in ("claude-code", "cursor"):
        assert notewell_cli(project, home, "uninstall", runtime).returncode == 0
    assert (project / ".mcp.json").read_text() == '{"mcpServers": {}, "x": 1}'
    assert (project / ".cursor" / "hooks.json").read_text() == '{"version": 1, "hooks": {}}'


def test_the_dry_run_diff_marks_a_missing_final_newline(place):
    project, home = place
    (project / ".mcp.json").write_text('{"mcpServers": {}}')
    dry = notewell_cli(project, home, "install", "claude-code", "--dry-run").stdout
    assert "\\ No newline at end of file\n" in dry
    assert all(line.startswith(("#", "---", "+++", "@@", "+", "-", " ", "\\", "(")) for line in dry.splitlines())


@pytest.mark.slow
def test_removing_many_hooks_takes_linear_time(place):
    import time

    project, home = place
    handlers = [{"type": "command", "command": f"echo {i}"} for i in range(20_000)]
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": handlers}]}}))
    began = time.perf_counter()
    assert notewell_cli(project, home, "install", "claude-code", "--no-mcp").returncode == 0
    assert time.perf_counter() - began < 5  # was 5-7 s at 8,000 handlers when it compared each pair
    assert len(json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"]) == 20_000


def test_a_dry_run_gives_the_entries_for_a_commented_file_by_hand(place):
    project, home = place
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // mine\n  "general": {"vimMode": true}\n}\n')
    dry = notewell_cli(project, home, "install", "gemini", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "has comments: add by hand" in dry.stdout and '"mcpServers"' in dry.stdout and '"SessionStart"' in dry.stdout
    assert settings.read_text() == '{\n  // mine\n  "general": {"vimMode": true}\n}\n'


@pytest.mark.slow
def test_indentation_is_kept_and_the_store_is_named(place):
    project, home = place
    (project / ".mcp.json").write_text('{\n    "mcpServers": {\n        "a": {"command": "x"}\n    }\n}\n')
    done = notewell_cli(project, home, "install", "claude-code", store=project / "mine")
    assert f"store {project / 'mine'} (made now)" in done.stdout
    text = (project / ".mcp.json").read_text()
    assert '\n    "mcpServers": {\n        "a": {\n            "command": "x"' in text  # four spaces, as it was
    again = notewell_cli(project, home, "uninstall", "claude-code")
    assert again.returncode == 0 and not list(project.glob(".claude/*backup*"))  # removed: held only notewell's
    assert "nothing of notewell's" in notewell_cli(project, home, "uninstall", "claude-code").stdout


def test_user_scope_defaults_to_the_home_folders_notes(place):
    project, home = place
    env = {"HOME": str(home), "NOTEWELL_STATE_DIR": str(project.parent / "state")}
    done = call(["install", "cursor", "--scope", "user"], env=env, unset=("NOTEWELL_STORE",), text=True)
    assert done.returncode == 0, done.stderr
    hooks = ours(json.loads((home / ".cursor" / "hooks.json").read_text()), flat=True)
    assert f"--store={home / 'notes'}" in hooks["sessionStart"][0][1]["command"]


def test_a_config_nested_past_any_reader_is_refused_in_one_line(place):
    project, home = place
    refused_untouched(
        project, home, project / ".mcp.json", "[" * 100_000 + "]" * 100_000, "claude-code", "nested too deeply"
    )
    (project / ".codex").mkdir()
    refused_untouched(
        project, home, project / ".codex" / "config.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n", "codex",
        "nested too deeply",
    )  # fmt: skip


@pytest.mark.slow
def test_a_database_password_is_never_written_into_a_runtimes_files(place):
    project, home = place
    env = {"HOME": str(home), "NOTEWELL_STATE_DIR": str(project.parent / "state")}
    for url in ("postgresql://notes:s3cret-pw@db/notes", "postgresql://notes@db/notes?password=s3cret-pw"):
        for dry in ((), ("--dry-run",)):
            refused = call(
                ["install", "claude-code", "--dir", str(project), *dry],
                env={**env, "NOTEWELL_DATABASE": url},
                unset=("NOTEWELL_STORE",),
                text=True,
            )
            assert refused.returncode != 0 and "holds a password" in refused.stderr
            assert "s3cret-pw" not in refused.stdout + refused.stderr
            assert len(refused.stderr.splitlines()) == 1
    assert not any("s3cret-pw" in p.read_text() for p in project.rglob("*") if p.is_file())
    assert not (project / ".mcp.json").exists()


def test_devices_fifos_and_dangling_links_are_refused_and_left_alone(place, tmp_path):
    project, home = place
    mcp = project / ".mcp.json"
    for target, said in (("/dev/zero", "not a regular file"), (str(tmp_path / "nowhere.json"), "a link to nothing")):
        mcp.symlink_to(target)
        refused = notewell_cli(project, home, "install", "claude-code")
        assert refused.returncode != 0 and said in refused.stderr and len(refused.stderr.splitlines()) == 1
        assert mcp.is_symlink() and os.readlink(mcp) == target and not (tmp_path / "nowhere.json").exists()
        mcp.unlink()
    os.mkfifo(mcp)
    refused = notewell_cli(project, home, "install", "claude-code")
    assert refused.returncode != 0 and "not a regular file" in refused.stderr
    assert stat.S_ISFIFO(os.lstat(mcp).st_mode)


def test_a_private_file_is_never_copied_where_others_can_read_it_and_stale_copies_go(place):
    project, home = place
    private = home / ".claude.json"
    private.write_text(json.dumps({"mcpServers": {"gh": {"command": "gh", "env": {"GITHUB_TOKEN": "ghp_x"}}}}))
    private.chmod(0o600)
    stale = home / f"..claude.json.notewell-{2**22 + 12345}.tmp"  # a killed install's, its pid long gone
    stale.write_text("ghp_x")
    seen: list[int] = []
    real_replace = os.replace

    def watching(src, dst, *a, **k):  # the moment the private file's temp copy is complete: its mode
        if os.path.realpath(dst) == os.path.realpath(private):
            seen.append(stat.S_IMODE(os.stat(src).st_mode))
        return real_replace(src, dst, *a, **k)

    os.replace = watching
    try:
        done = notewell_cli(project, home, "install", "claude-code", "--scope", "user")
    finally:
        os.replace = real_replace
    assert done.returncode == 0, done.stderr
    assert seen == [0o600] and stat.S_IMODE(private.stat().st_mode) == 0o600
    backups = list(home.glob(".claude.json.notewell-backup*"))
    assert backups and all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in backups)
    assert not stale.exists()


@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": {}}',  # notewell's entries taken out leave nothing: the file still comes back
        '{\r\n  "mcpServers": {\r\n    "a": {"command": "caf\\u00e9", "timeout": 1e3}\r\n  }\r\n}\r\n',
        '{"mcpServers":{"a":{"command":"x"}},"n":1.50}',
    ],
)
def test_install_then_uninstall_gives_back_the_very_bytes(place, text):
    project, home = place
    mcp = project / ".mcp.json"
    mcp.write_bytes(text.encode())
    assert notewell_cli(project, home, "install", "claude-code").returncode == 0
    assert '"notewell"' in mcp.read_text()
    gone = notewell_cli(project, home, "uninstall", "claude-code")
    assert gone.returncode == 0, gone.stderr
    assert mcp.read_bytes() == text.encode()
    assert not (project / ".claude" / "settings.json").exists()  # made by install: removed again


def test_markers_inside_a_toml_string_are_never_taken_out(place):
    project, home = place
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir()
    from notewell.interfaces.runtimes.config_files import BLOCK_END, BLOCK_START

    text = f'note = """\n{BLOCK_START}\ncommand = "x"\n{BLOCK_END}\n"""\n'
    toml.write_text(text)
    refused = notewell_cli(project, home, "install", "codex")
    assert refused.returncode != 0 and "inside a string" in refused.stderr and toml.read_text() == text
    plain = 'model = "o4"\r\n'  # a Windows file, installed into and taken out of: its bytes again
    toml.write_bytes(plain.encode())
    assert notewell_cli(project, home, "install", "codex").returncode == 0
    assert notewell_cli(project, home, "uninstall", "codex").returncode == 0
    assert toml.read_bytes() == plain.encode()


def test_installing_again_over_a_changed_file_never_makes_uninstall_put_notewell_back(place):
    project, home = place
    assert notewell_cli(project, home, "install", "claude-code").returncode == 0
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["permissions"] = {"allow": ["Bash(ls)"]}  # a person's change between two installs
    settings.write_text(json.dumps(data, indent=2))
    assert notewell_cli(project, home, "install", "claude-code", "--project", "other").returncode == 0
    assert notewell_cli(project, home, "uninstall", "claude-code").returncode == 0
    assert "notewell" not in settings.read_text() and json.loads(settings.read_text())["permissions"]
    assert not (project / ".mcp.json").exists() or "notewell" not in (project / ".mcp.json").read_text()


@pytest.mark.slow
def test_a_full_disk_leaves_the_file_and_no_empty_backup_and_says_so_in_one_line(place, tmp_path):
    project, home = place
    mcp = project / ".mcp.json"
    original = json.dumps({"mcpServers": {"a": {"command": "x" * (5 << 20)}}}, indent=2)  # 5 MB: past the limit
    mcp.write_text(original)
    limited = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))  # room for the index, not the copy\n"
        "from notewell.interfaces.cli.app import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**os.environ, "HOME": str(home), "NOTEWELL_STATE_DIR": str(tmp_path / "state")}
    env.pop("NOTEWELL_STORE", None)
    notewell.open(tmp_path / "notes").close()  # the store exists: only the install's own writes are limited
    done = subprocess.run(
        [sys.executable, "-c", limited, "--store", str(tmp_path / "notes"), "install", "claude-code", "--dir",
         str(project)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 6, done.stderr  # storage, not a crash (70)
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot write" in done.stderr
    assert mcp.read_text() == original
    assert not list(project.rglob("*notewell-backup*")) and not list(project.rglob("*.tmp"))


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["project", "user"])
def test_uninstall_leaves_no_folder_it_made_and_at_most_one_backup(place, scope):
    project, home = place
    base = project if scope == "project" else home
    (base / ".gemini").mkdir()  # the person's own folder and file: they stay
    (base / ".gemini" / "settings.json").write_text('{"theme": "dark"}\n')
    (base / ".claude").mkdir()  # theirs too, empty: it stays, as install found it
    for _ in range(2):  # installed twice over, as people do (a new --project)
        for runtime in INSTALLABLE:
            done = notewell_cli(project, home, "install", runtime, "--scope", scope)
            assert done.returncode == 0, done.stderr
    backups = sorted(p.name for p in base.rglob("*notewell-backup*"))
    assert backups == ["settings.json.notewell-backup"]  # one: of the file as the person had it
    for runtime in INSTALLABLE:
        done = notewell_cli(project, home, "uninstall", runtime, "--scope", scope)
        assert done.returncode == 0, done.stderr
    # Before issue 40: empty .cursor/ and .codex/ (and .claude/ install made), and three backups.
    assert sorted(p.name for p in base.iterdir() if p.name.startswith(".")) == [".claude", ".gemini"]
    assert [p.name for p in (base / ".gemini").iterdir()] == ["settings.json"]
    assert (base / ".gemini" / "settings.json").read_text() == '{"theme": "dark"}\n'
    assert not list((base / ".claude").iterdir())


@pytest.mark.slow
def test_a_file_changed_since_install_keeps_its_one_backup_and_uninstall_says_where(place):
    project, home = place
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark"}\n')
    assert notewell_cli(project, home, "install", "gemini").returncode == 0
    settings.write_text(settings.read_text().replace('"dark"', '"light"'))  # their own edit since
    done = notewell_cli(project, home, "uninstall", "gemini")
    backup = settings.with_name("settings.json.notewell-backup")
    assert f"the file as it was before install is kept in {backup}" in done.stdout
    assert json.loads(settings.read_text()) == {"theme": "light"} and backup.read_text() == '{"theme": "dark"}\n'
    # Installed again: the backup is of the file as it is now; put back, it goes.
    assert notewell_cli(project, home, "install", "gemini").returncode == 0
    assert json.loads(backup.read_text()) == {"theme": "light"}
    assert notewell_cli(project, home, "uninstall", "gemini").returncode == 0
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]
