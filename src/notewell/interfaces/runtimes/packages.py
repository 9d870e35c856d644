"""notewell as the runtimes' own packages: a Claude Code plugin (with the marketplace that lists
it), a Gemini CLI extension and Codex's hooks file, made from the same tables ``notewell install``
writes from (the catalog's events, the installer's hook handlers and MCP entries) and the
package's version.

``python -m notewell.interfaces.runtimes.packages [ROOT]`` writes them into the repository at
ROOT (default: here); ``--check`` says which differ instead (exit 1), as the test does. Every
command runs ``notewell`` from PATH (the runtimes start it from anywhere) with ``--user-store``:
a package is installed once for every folder, so its store is the user's own, the one
``NOTEWELL_STORE`` names, else ``~/notes``, never ``./notes`` of whatever folder the runtime runs
in. An option rather than each runtime's variable expansion: Codex's config.toml and hooks have
none, Gemini CLI's extension files expand only its own ``${extensionPath}``-style variables, and
Claude Code's ``${VAR:-default}`` expands no variable inside the default (``$HOME``).

=======================================  ===========================================================
file                                     for
=======================================  ===========================================================
.claude-plugin/marketplace.json          ``claude plugin marketplace add <repo>`` (lists the plugin)
plugins/claude-code/.claude-plugin/...   the plugin: plugin.json, hooks/hooks.json, .mcp.json
gemini-extension.json, hooks/hooks.json  ``gemini extensions install <repo>`` (its root is the extension)
plugins/codex/hooks.json, config.toml    Codex: copy to ``~/.codex/`` (or a project's ``.codex/``)
=======================================  ===========================================================

The Claude Code plugin lives in its own folder because a Gemini CLI extension reads
``hooks/hooks.json`` at the repository's root, in Gemini's form.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ...settings import SETTINGS
from ...version import __version__
from .installer import codex_server_block, hooks_entries, mcp_entries

__all__ = ["NAME", "package_files", "write_packages"]

NAME = "notewell"
ARGV = [NAME]  # notewell on PATH: the package cannot know where a virtual environment is
STORE = ["--user-store"]  # NOTEWELL_STORE, else ~/notes: the same store from every folder
_DESCRIPTION = (
    "External memory for agents: notes in a Markdown folder with a search index; the session hooks brief"
    " each session and the MCP tools search, read and write notes."
)
CLAUDE_PLUGIN = "plugins/claude-code"


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _claude_code() -> dict[str, str]:
    hooks = hooks_entries("claude-code", ARGV, STORE)
    return {
        ".claude-plugin/marketplace.json": _json(
            {
                "name": NAME,
                "owner": {"name": NAME},
                "metadata": {"description": "notewell's plugin for Claude Code", "version": __version__},
                "plugins": [
                    {
                        "name": NAME,
                        "source": f"./{CLAUDE_PLUGIN}",
                        "description": _DESCRIPTION,
                        "version": __version__,
                        "license": "MIT",
                    }
                ],
            }
        ),
        f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json": _json(
            {
                "name": NAME,
                "version": __version__,
                "description": _DESCRIPTION,
                "license": "MIT",
                "keywords": ["memory", "notes", "mcp", "hooks"],
            }
        ),
        f"{CLAUDE_PLUGIN}/hooks/hooks.json": _json({"description": "notewell's session hooks", **hooks}),
        f"{CLAUDE_PLUGIN}/.mcp.json": _json(mcp_entries("claude-code", ARGV, STORE)),
    }


def _gemini() -> dict[str, str]:
    extension = {
        "name": NAME,
        "version": __version__,
        "description": _DESCRIPTION,
        **mcp_entries("gemini", ARGV, STORE),
    }
    return {
        "gemini-extension.json": _json(extension),
        "hooks/hooks.json": _json(hooks_entries("gemini", ARGV, STORE)),
    }


def _codex() -> dict[str, str]:
    # No [features] table: appended to a config.toml that has one, a second makes the file
    # unreadable to Codex; hooks are on by default (codex_hooks is a deprecated name of the flag).
    toml = (
        "# notewell for Codex: append this table to ~/.codex/config.toml (or a trusted project's\n"
        "# .codex/config.toml), and add hooks.json's entries to the hooks.json beside it; or let\n"
        "# `notewell install codex` merge both. Hooks run once trusted in /hooks.\n"
        + codex_server_block([*ARGV, "mcp", *STORE])
        # Codex gives a server only HOME, PATH and a few more of its environment: without these
        # names, NOTEWELL_STORE would choose the hooks' store and not the server's.
        + f"env_vars = [{', '.join(json.dumps(s.name) for s in SETTINGS)}]\n"
    )
    return {"plugins/codex/hooks.json": _json(hooks_entries("codex", ARGV, STORE)), "plugins/codex/config.toml": toml}


def package_files() -> dict[str, str]:
    """Every package file: its path in the repository and its text."""
    return {**_claude_code(), **_gemini(), **_codex()}


def write_packages(root: Path, *, check: bool = False) -> list[str]:
    """Write the package files under *root* (with *check*, write nothing); the paths that
    differed from what the tables make."""
    stale = []
    for relative, text in package_files().items():
        path = root / relative
        try:
            held = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            held = None
        if held == text:
            continue
        stale.append(relative)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return stale


def main(argv: list[str]) -> int:
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    stale = write_packages(Path(rest[0]) if rest else Path.cwd(), check=check)
    for relative in stale:
        print(f"{'stale' if check else 'written'}: {relative}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
