"""The runtimes' package files in the repository (the Claude Code plugin and its marketplace, the
Gemini CLI extension, Codex's hooks and config): each is what the installer's tables make now
(regenerate with ``python -m notewell.interfaces.runtimes.packages``), each holds to its
runtime's documented schema (written down below from each runtime's reference, as read in
December 2026), and the hook commands they hold run."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import jsonschema
import pytest

import notewell
from notewell.interfaces.runtimes.catalog import runtime_named
from notewell.interfaces.runtimes.packages import package_files, write_packages
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
    assert config["mcp_servers"]["notewell"] == {"command": "notewell", "args": ["mcp"]}
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
        assert argv[:2] == ["notewell", "hook"] and argv[3:] == ["--runtime", runtime]
        payload = {"session_id": "pkg", "hook_event_name": event, "source": "startup", "cwd": str(tmp_path)}
        done = call(argv[1:], input=json.dumps(payload), env={"NOTEWELL_STORE": str(tmp_path / "notes")},
                    cwd=tmp_path, text=True)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        if argv[2] == "session-start":
            assert nid in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
