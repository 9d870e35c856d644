"""The runtimes' package files in the repository (the Claude Code plugin and its marketplace, the
Gemini CLI extension, Codex's hooks and config): each is what the installer's tables make now
(regenerate with ``python -m notewell.interfaces.runtimes.packages``), each holds to its
runtime's documented schema (written down below from each runtime's reference, as read in
December 2026), and the hook commands and the MCP server they hold run as each runtime runs
them: on a user's first session, in a folder with no store, every hook answers and nothing is
made there; the notes go to the user's own store."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

import notewell
from notewell.interfaces.runtimes.catalog import runtime_named
from notewell.interfaces.runtimes.packages import package_files, write_packages
from notewell.settings import SETTINGS
from notewell.version import __version__
from tests.interfaces.cli_harness import call

ROOT = Path(__file__).resolve().parents[2]
FILES = package_files()

KEBAB = "^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
SEMVER = r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
STRINGS = {"type": "array", "items": {"type": "string"}}
PATHS = {"anyOf": [{"type": "string"}, STRINGS, {"type": "object"}]}
AUTHOR = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "email": {"type": "string"}, "url": {"type": "string"}},
    "additionalProperties": False,
}


def _hooks(events: list[str], handler: dict) -> dict:
    """event -> [{matcher, hooks: [handler]}]: the three levels Claude Code, Codex and Gemini CLI share."""
    group = {
        "type": "object",
        "required": ["hooks"],
        "properties": {"matcher": {"type": "string"}, "hooks": {"type": "array", "minItems": 1, "items": handler}},
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "propertyNames": {"enum": events},
        "additionalProperties": {"type": "array", "items": group},
    }


def _command(timeout: dict, **more: dict) -> dict:
    return {
        "type": "object",
        "required": ["type", "command"],
        "properties": {
            "type": {"const": "command"},
            "command": {"type": "string", "minLength": 1},
            "timeout": timeout,
            **more,
        },  # fmt: skip
        "additionalProperties": False,
    }


STDIO_SERVER = {
    "type": "object",
    "required": ["command"],
    "properties": {
        "type": {"enum": ["stdio"]},
        "command": {"type": "string"},
        "args": STRINGS,
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "cwd": {"type": "string"},
    },  # fmt: skip
    "additionalProperties": False,
}
SCHEMAS = {
    # code.claude.com/docs/en/plugins/manifest-reference: only name is required, kebab-case; the
    # rest metadata, or component paths (or inline objects) for commands, agents, skills, hooks, mcpServers.
    "plugins/claude-code/.claude-plugin/plugin.json": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "pattern": KEBAB},
            "version": {"type": "string", "pattern": SEMVER},
            "description": {"type": "string"},
            "author": AUTHOR,
            "homepage": {"type": "string"},
            "repository": {"type": "string"},
            "license": {"type": "string"},
            "keywords": STRINGS,
            "commands": PATHS,
            "agents": PATHS,
            "skills": PATHS,
            "hooks": PATHS,
            "mcpServers": PATHS,
            "outputStyles": PATHS,
            "lspServers": PATHS,
            "userConfig": {"type": "object"},
        },  # fmt: skip
        "additionalProperties": False,
    },
    # code.claude.com/docs/en/plugin-marketplaces: name, owner (name) and plugins (name, source:
    # a path from the marketplace's root starting with ./, or a source object) required.
    ".claude-plugin/marketplace.json": {
        "type": "object",
        "required": ["name", "owner", "plugins"],
        "properties": {
            "name": {"type": "string", "pattern": KEBAB},
            "owner": AUTHOR,
            "metadata": {
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "version": {"type": "string"},
                    "pluginRoot": {"type": "string"},
                },
                "additionalProperties": False,
            },  # fmt: skip
            "plugins": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["name", "source"],
                    "properties": {
                        "name": {"type": "string", "pattern": KEBAB},
                        "source": {"anyOf": [{"type": "string", "pattern": "^\\./"}, {"type": "object"}]},
                        "description": {"type": "string"},
                        "version": {"type": "string", "pattern": SEMVER},
                        "author": AUTHOR,
                        "homepage": {"type": "string"},
                        "repository": {"type": "string"},
                        "license": {"type": "string"},
                        "keywords": STRINGS,
                        "category": {"type": "string"},
                        "tags": STRINGS,
                        "strict": {"type": "boolean"},
                    },
                },
            },
        },  # fmt: skip
        "additionalProperties": False,
    },
    # code.claude.com/docs/en/hooks (a plugin's hooks/hooks.json: an optional description, then
    # the settings' hooks object); timeout in seconds.
    "plugins/claude-code/hooks/hooks.json": {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "description": {"type": "string"},
            "hooks": _hooks(
                [
                    "PreToolUse",
                    "PostToolUse",
                    "PostToolUseFailure",
                    "PermissionRequest",
                    "Notification",
                    "UserPromptSubmit",
                    "SessionStart",
                    "SessionEnd",
                    "Stop",
                    "SubagentStart",
                    "SubagentStop",
                    "PreCompact",
                    "PostCompact",
                ],
                _command({"type": "number", "exclusiveMinimum": 0}),
            ),
        },  # fmt: skip
        "additionalProperties": False,
    },
    # code.claude.com/docs/en/mcp (project scope .mcp.json; a plugin's .mcp.json has the same form)
    "plugins/claude-code/.mcp.json": {
        "type": "object",
        "required": ["mcpServers"],
        "properties": {"mcpServers": {"type": "object", "additionalProperties": STDIO_SERVER}},
        "additionalProperties": False,
    },
    # github.com/google-gemini/gemini-cli docs/extensions/reference.md: name (lowercase, dashes, the
    # folder's name) and version required; mcpServers as in settings.json (all but trust).
    "gemini-extension.json": {
        "type": "object",
        "required": ["name", "version"],
        "properties": {
            "name": {"type": "string", "pattern": KEBAB},
            "version": {"type": "string", "pattern": SEMVER},
            "description": {"type": "string"},
            "mcpServers": {"type": "object", "additionalProperties": STDIO_SERVER},
            "contextFileName": {"anyOf": [{"type": "string"}, STRINGS]},
            "excludeTools": STRINGS,
            "settings": {"type": "array"},
            "themes": {"type": "array"},
        },  # fmt: skip
        "additionalProperties": False,
    },
    # gemini-cli docs/hooks/reference.md (an extension's hooks/hooks.json: the hooks object of
    # settings.json); timeout in milliseconds, each handler may be named.
    "hooks/hooks.json": {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "hooks": _hooks(
                [
                    "BeforeTool",
                    "AfterTool",
                    "BeforeAgent",
                    "AfterAgent",
                    "BeforeModel",
                    "AfterModel",
                    "BeforeToolSelection",
                    "Notification",
                    "SessionStart",
                    "SessionEnd",
                    "PreCompress",
                ],
                _command({"type": "integer", "minimum": 1000}, name={"type": "string"}, description={"type": "string"}),
            ),
        },  # fmt: skip
        "additionalProperties": False,
    },
    # developers.openai.com/codex/hooks: event -> matcher groups -> command handlers; timeout in
    # seconds, an optional statusMessage.
    "plugins/codex/hooks.json": {
        "type": "object",
        "required": ["hooks"],
        "properties": {
            "hooks": _hooks(
                [
                    "SessionStart",
                    "PreToolUse",
                    "PermissionRequest",
                    "PostToolUse",
                    "UserPromptSubmit",
                    "Stop",
                    "PreCompact",
                    "PostCompact",
                    "SubagentStop",
                ],
                _command({"type": "number", "exclusiveMinimum": 0}, statusMessage={"type": "string"}),
            ),
        },  # fmt: skip
        "additionalProperties": False,
    },
}


def test_the_committed_package_files_are_what_the_tables_make():
    stale = write_packages(ROOT, check=True)
    assert not stale, f"regenerate with python -m notewell.interfaces.runtimes.packages: {stale}"


@pytest.mark.parametrize("relative", sorted(SCHEMAS))
def test_each_file_holds_to_its_runtimes_documented_schema(relative):
    data = json.loads(FILES[relative])
    jsonschema.validate(data, SCHEMAS[relative])
    versions = [data.get("version")] + [p.get("version") for p in data.get("plugins", [])]
    assert all(v in (None, __version__) for v in versions) and relative in FILES


def test_the_schemas_are_not_empty_words():
    """Each schema refuses what its runtime would: a wrong name, a hook of another runtime's form."""
    bad = {
        "plugins/claude-code/.claude-plugin/plugin.json": {"name": "Note Well"},
        ".claude-plugin/marketplace.json": {"name": "notewell", "owner": {"name": "x"}, "plugins": [{"name": "n"}]},
        "plugins/claude-code/hooks/hooks.json": json.loads(FILES["hooks/hooks.json"]),  # Gemini's events
        "plugins/claude-code/.mcp.json": {"mcpServers": {"notewell": {"args": ["mcp"]}}},
        "gemini-extension.json": {"name": "notewell"},
        "hooks/hooks.json": json.loads(FILES["plugins/claude-code/hooks/hooks.json"]),  # seconds, a description
        "plugins/codex/hooks.json": json.loads(FILES["hooks/hooks.json"]),
    }
    for relative, data in bad.items():
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, SCHEMAS[relative])


def test_codex_config_names_the_server_and_can_be_appended_to_a_config_with_features():
    config = tomllib.loads(FILES["plugins/codex/config.toml"])
    assert config["mcp_servers"]["notewell"] == {
        "command": "notewell",
        "args": ["mcp", "--user-store"],
        "env_vars": [s.name for s in SETTINGS],  # Codex passes a server no other variable of yours
    }
    # Appended (as docs/agents.md says) to a config.toml with tables of its own, [features] among
    # them: still one TOML document (a second [features] table made Codex refuse the file).
    mine = '[features]\nweb_search_request = true\n\n[mcp_servers.other]\ncommand = "x"\n\n'
    both = tomllib.loads(mine + FILES["plugins/codex/config.toml"])
    assert both["features"] == {"web_search_request": True} and set(both["mcp_servers"]) == {"other", "notewell"}


def _commands(relative: str) -> list[tuple[str, str | None, str]]:
    hooks = json.loads(FILES[relative])["hooks"]
    return [(event, g.get("matcher"), h["command"]) for event, groups in hooks.items() for g in groups
            for h in g["hooks"]]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("relative", "runtime"),
    [("plugins/claude-code/hooks/hooks.json", "claude-code"), ("hooks/hooks.json", "gemini"),
     ("plugins/codex/hooks.json", "codex")],
)  # fmt: skip
def test_every_event_runs_its_notewell_hook_and_the_command_runs(relative, runtime, tmp_path):
    found = _commands(relative)
    expected = [(r.event, r.matcher, r.command) for r in runtime_named(runtime).registrations]
    assert sorted((e, m, shlex.split(c)[2]) for e, m, c in found) == sorted(expected)
    with notewell.Store(tmp_path / "notes", watch=False, embedder=None) as s:
        run = s.start_attempt("shop", author="tester").id
        nid = s.add_note("---\ntitle: Pool size\nkind: conclusion\n---\n\nA pool of 32 is enough.\n", attempt=run).id
    for event, _, command in found:
        argv = shlex.split(command)
        assert argv[:2] == ["notewell", "hook"] and argv[3:] == ["--runtime", runtime, "--user-store"]
        payload = {"session_id": "pkg", "hook_event_name": event, "source": "startup", "cwd": str(tmp_path)}
        done = call(argv[1:], input=json.dumps(payload), env={"NOTEWELL_STORE": str(tmp_path / "notes")},
                    cwd=tmp_path, text=True)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        if argv[2] == "session-start":
            assert nid in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


# How each runtime turns its files into a process, from its documentation (December 2026):
# - Claude Code: a plugin's hook is a shell command, run with CLAUDE_PLUGIN_ROOT set
#   (code.claude.com/docs/en/plugins-reference, "Environment variables"); .mcp.json expands
#   ${VAR} and ${VAR:-default} in command, args and env (code.claude.com/docs/en/mcp,
#   "Environment variable expansion in .mcp.json").
# - Gemini CLI: gemini-extension.json and the extension's hooks/hooks.json substitute
#   ${extensionPath}, ${workspacePath} and ${/} (or ${pathSeparator}); hooks are shell commands
#   (gemini-cli docs/extensions/reference.md, "Variables"; docs/hooks/reference.md).
# - Codex: config.toml's command and args are taken as written (no expansion,
#   developers.openai.com/codex/config-reference); a server's environment is only HOME, PATH and
#   a few more, plus the names in env_vars (create_env_for_mcp_server, DEFAULT_ENV_VARS in
#   codex-rs/rmcp-client/src/utils.rs); hooks.json's commands run in a shell.
_CODEX_SERVER_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM",
                     "TMPDIR", "TZ")  # fmt: skip
_CLAUDE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _claude_expanded(value: str, env: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if default is not None:
            return env.get(name) or default
        return env.get(name, m.group(0))  # unset, no default: left as written

    return _CLAUDE_VARIABLE.sub(one, value)


def _gemini_expanded(value: str, extension: Path, workspace: Path) -> str:
    for name, said in (("extensionPath", str(extension)), ("workspacePath", str(workspace)), ("/", os.sep),
                       ("pathSeparator", os.sep)):  # fmt: skip
        value = value.replace("${" + name + "}", said)
    return value


def _as_the_runtime_runs_them(runtime: str, work: Path, env: dict[str, str]) -> tuple[list, dict, dict]:
    """(each hook as (event, matcher, shell command), the MCP server as (command, args, the whole
    environment it starts with), the variables the runtime adds to a hook's environment), as
    *runtime* documents, for a runtime started in *env*."""
    if runtime == "claude-code":
        plugin = ROOT / "plugins" / "claude-code"
        server = json.loads(FILES["plugins/claude-code/.mcp.json"])["mcpServers"]["notewell"]
        server = {
            "command": _claude_expanded(server["command"], env),
            "args": [_claude_expanded(a, env) for a in server.get("args", [])],
            "env": {**env, **{k: _claude_expanded(v, env) for k, v in server.get("env", {}).items()}},
        }
        hooks = _commands("plugins/claude-code/hooks/hooks.json")
        return hooks, server, {"CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PROJECT_DIR": str(work)}
    if runtime == "gemini":
        server = json.loads(FILES["gemini-extension.json"])["mcpServers"]["notewell"]
        server = {
            "command": _gemini_expanded(server["command"], ROOT, work),
            "args": [_gemini_expanded(a, ROOT, work) for a in server.get("args", [])],
            "env": {**env, **{k: _gemini_expanded(v, ROOT, work) for k, v in server.get("env", {}).items()}},
        }
        hooks = [(e, m, _gemini_expanded(c, ROOT, work)) for e, m, c in _commands("hooks/hooks.json")]
        return hooks, server, {"GEMINI_PROJECT_DIR": str(work)}
    server = tomllib.loads(FILES["plugins/codex/config.toml"])["mcp_servers"]["notewell"]
    passed = {k: env[k] for k in (*_CODEX_SERVER_ENV, *server.get("env_vars", [])) if k in env}
    return _commands("plugins/codex/hooks.json"), {**server, "env": {**passed, **server.get("env", {})}}, {}


def _first_session(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A user's first session: a home of their own, a repository with no store, ``notewell`` on
    PATH, and none of notewell's variables set (no NOTEWELL_STORE)."""
    home, work, bin_dir = tmp_path / "home", tmp_path / "repo", tmp_path / "bin"
    for folder in (home, work, bin_dir):
        folder.mkdir()
    (work / "README.md").write_text("# someone's project\n")
    program = bin_dir / "notewell"
    src = shlex.quote(str(Path(notewell.__file__).resolve().parents[1]))  # this notewell, in any environment
    program.write_text(f'#!/bin/sh\nPYTHONPATH={src} exec {shlex.quote(sys.executable)} -m notewell "$@"\n')
    program.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTEWELL_", "XDG_")) and k != "AGENT_CONTEXT_ROOT"}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    env.update(NOTEWELL_EMBEDDER="hash", NOTEWELL_AUTOWATCH="off")  # no model to load, no watcher left behind
    return home, work, env


def _run_hook(command: str, event: str, matcher: str | None, session: str, work: Path, env: dict[str, str]):
    source = "compact" if matcher == "compact" else "startup"
    payload = {"session_id": session, "hook_event_name": event, "source": source, "cwd": str(work)}
    return subprocess.run(command, shell=True, input=json.dumps(payload).encode(), capture_output=True, cwd=work,
                          env=env, timeout=120)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["claude-code", "gemini", "codex"])
def test_a_first_session_in_any_folder_answers_and_the_notes_go_to_the_users_store(runtime, tmp_path):
    pytest.importorskip("mcp")
    home, work, env = _first_session(tmp_path)
    hooks, server, hook_env = _as_the_runtime_runs_them(runtime, work, env)
    before = sorted(p.name for p in work.iterdir())
    for event, matcher, command in hooks:
        done = _run_hook(command, event, matcher, "first", work, {**env, **hook_env})
        assert done.returncode == 0 and done.stderr == b"", (command, done.stderr)
        if shlex.split(command)[2] == "session-start":
            context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
            assert context.startswith("notewell: no notes yet") and "add_note" in context
    assert sorted(p.name for p in work.iterdir()) == before and not (home / "notes").exists()  # no hook made a store

    note_id = _add_through_the_server(server, work, "# Kestrel\n\nIt hovers over the verge at dawn.")
    assert (home / "notes" / f"{note_id}.md").is_file()  # the user's store, made by the server
    assert sorted(p.name for p in work.iterdir()) == before  # and nothing in the repository

    start, matcher = next((c, m) for e, m, c in hooks if shlex.split(c)[2] == "session-start")
    again = _run_hook(start, "SessionStart", matcher, "second", tmp_path, {**env, **hook_env})  # another folder
    assert again.returncode == 0 and note_id in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]


def _add_through_the_server(server: dict, work: Path, text: str) -> str:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=server["command"], args=server["args"], env=server["env"], cwd=str(work))

    async def scenario():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await s.call_tool("add_note", {"text": text})

    added = asyncio.run(scenario())
    assert not added.is_error, added.content
    return added.structured_content["id"]


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["claude-code", "gemini", "codex"])
def test_notewell_store_chooses_the_store_of_the_hooks_and_the_server_alike(runtime, tmp_path):
    pytest.importorskip("mcp")
    home, work, env = _first_session(tmp_path)
    chosen = tmp_path / "team-notes"
    env["NOTEWELL_STORE"] = str(chosen)  # in the environment the runtime starts from
    hooks, server, hook_env = _as_the_runtime_runs_them(runtime, work, env)
    nid = _add_through_the_server(server, work, "# Pool size\n\nA pool of 32 is enough.\n")
    start, matcher = next((c, m) for e, m, c in hooks if shlex.split(c)[2] == "session-start")
    done = _run_hook(start, "SessionStart", matcher, "s", work, {**env, **hook_env})
    assert done.returncode == 0 and nid in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (chosen / f"{nid}.md").is_file() and not (home / "notes").exists()
