"""``notewell install|uninstall RUNTIME``: notewell's MCP server and hooks in a runtime's own files.

Which files, for the project (``--dir``, default the working folder) or the user (``--scope user``):

============  ===============================  ==================================
runtime       MCP server                       hooks
============  ===============================  ==================================
claude-code   .mcp.json / ~/.claude.json       .claude/settings.json / ~/.claude/settings.json
codex         .codex/config.toml (marked block) .codex/hooks.json (or ~/.codex/...)
gemini        .gemini/settings.json            the same file (or ~/.gemini/settings.json)
cursor        .cursor/mcp.json                 .cursor/hooks.json (or ~/.cursor/...)
============  ===============================  ==================================

Only notewell's own entries change: the ``notewell`` MCP server and hook handlers whose command
runs ``notewell hook``. Everything else in the files stays as it was, in its order; installing
again replaces notewell's entries (a new store path, say) rather than adding a second copy.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidArgumentError
from .catalog import Registration, runtime_named
from .config_files import (
    BLOCK_END,
    BLOCK_START,
    CommentedFile,
    FileChange,
    dump_json,
    load_json,
    load_toml,
    toml_without_block,
)

__all__ = [
    "INSTALLABLE",
    "codex_server_block",
    "hook_commands",
    "hooks_entries",
    "install_plan",
    "is_notewell_hook",
    "mcp_entries",
    "next_steps_after_install",
]

INSTALLABLE = ("claude-code", "codex", "gemini", "cursor")
SERVER_NAME = "notewell"
_HOOK_TIMEOUT = 30  # seconds; a briefing takes about one


def _notewell_argv() -> list[str]:
    """How a runtime starts notewell: this interpreter by absolute path, so it works from a
    desktop app whose PATH lacks the virtual environment."""
    return [sys.executable, "-m", "notewell"]


def is_notewell_hook(handler: Any) -> bool:
    """Whether a hook handler runs ``notewell hook`` (one of ours): its command is ``notewell
    hook ...`` or ``PYTHON -m notewell hook ...``, in shell form or exec form (``args``)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    if isinstance(handler.get("args"), list):
        words += [str(a) for a in handler["args"]]
    if not words:
        return False
    program = os.path.basename(words[0])
    if program == "notewell":
        return words[1:2] == ["hook"]
    return program.startswith("python") and words[1:4] == ["-m", "notewell", "hook"]


def _files(runtime: str, scope: str, folder: Path, home: Path) -> tuple[Path, Path]:
    """(the MCP file, the hooks file) of *runtime* in *scope*."""
    base = folder if scope == "project" else home
    if runtime == "claude-code":
        if scope == "project":
            return folder / ".mcp.json", folder / ".claude" / "settings.json"
        return home / ".claude.json", home / ".claude" / "settings.json"
    if runtime == "codex":
        return base / ".codex" / "config.toml", base / ".codex" / "hooks.json"
    if runtime == "gemini":
        return base / ".gemini" / "settings.json", base / ".gemini" / "settings.json"
    return base / ".cursor" / "mcp.json", base / ".cursor" / "hooks.json"


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{path}: {key!r} is a {type(value).__name__}, not an object: nothing changed")
    return value


Edit = Callable[[dict[str, Any], Path], tuple[str, bool]]  # (what it did, whether it found notewell's)


def _mcp_json(runtime: str, server: list[str] | None) -> Edit:
    def edit(data: dict[str, Any], path: Path) -> tuple[str, bool]:
        had = isinstance(data.get("mcpServers"), dict) and SERVER_NAME in data["mcpServers"]
        if server is None:
            if had:
                del data["mcpServers"][SERVER_NAME]
                if not data["mcpServers"]:
                    del data["mcpServers"]  # emptied by this removal: it goes too
            return f"MCP server {SERVER_NAME!r} removed", had
        servers = _object(data, "mcpServers", path)
        servers.pop(SERVER_NAME, None)
        entry: dict[str, Any] = {"command": server[0], "args": server[1:]}
        if runtime == "claude-code":
            entry = {"type": "stdio", **entry}
        servers[SERVER_NAME] = entry
        return f"MCP server {SERVER_NAME!r}", had

    return edit


def _hook_handler(runtime: str, reg: Registration, command: str) -> dict[str, Any]:
    if runtime == "gemini":  # Gemini names its hooks and counts in milliseconds
        return {
            "name": f"notewell-{reg.command}",
            "type": "command",
            "command": command,
            "timeout": _HOOK_TIMEOUT * 1000,
        }
    if runtime == "cursor":
        handler: dict[str, Any] = {"command": command, "timeout": _HOOK_TIMEOUT}
        if reg.command == "stop":
            handler["loop_limit"] = 1  # the reminder once, never a loop of follow-ups
        return handler
    return {"type": "command", "command": command, "timeout": _HOOK_TIMEOUT}


def _hooks_json(runtime: str, commands: dict[Registration, str] | None) -> Edit:
    flat = runtime == "cursor"  # Cursor: event -> [handler]; the others: event -> [{matcher, hooks: [handler]}]

    def edit(data: dict[str, Any], path: Path) -> tuple[str, bool]:
        found = False
        hooks = data.get("hooks")
        if hooks is None and commands is None:
            return "hooks removed", False
        hooks = _object(data, "hooks", path)
        for event, entries in list(hooks.items()):
            if not isinstance(entries, list):
                if commands is not None and any(r.event == event for r in commands):
                    raise InvalidArgumentError(f"{path}: hooks.{event} is not a list: nothing changed")
                continue
            kept, removed = [], False
            for entry in entries:
                if flat:
                    if is_notewell_hook(entry):
                        removed = True
                    else:
                        kept.append(entry)
                    continue
                inner = entry.get("hooks") if isinstance(entry, dict) else None
                if isinstance(inner, list):
                    rest = [h for h in inner if not is_notewell_hook(h)]
                    if len(rest) != len(inner):
                        removed = True
                        if not rest:
                            continue  # a group that held only ours goes with them
                        entry = {**entry, "hooks": rest}
                kept.append(entry)
            if removed:
                found = True
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]  # emptied by this removal
        if commands is None:
            if found and not hooks:
                del data["hooks"]
                if flat and set(data) == {"version"}:
                    del data["version"]
            return "hooks removed", found
        if flat:
            data.setdefault("version", 1)
        for reg, command in commands.items():
            handler = _hook_handler(runtime, reg, command)
            if flat:
                added: dict[str, Any] = handler
            else:
                added = {"matcher": reg.matcher, "hooks": [handler]} if reg.matcher else {"hooks": [handler]}
            hooks.setdefault(reg.event, []).append(added)
        said = ", ".join(
            f"{r.event}{f' ({r.matcher})' if r.matcher and r.matcher != '*' else ''} -> {r.command}" for r in commands
        )
        return "hooks: " + said, found

    return edit


def hook_commands(runtime: str, argv: list[str], options: Sequence[str] = ()) -> dict[Registration, str]:
    """Each of *runtime*'s events and the ``notewell hook`` command it runs, notewell started as *argv*."""
    return {
        reg: shlex.join([*argv, "hook", reg.command, "--runtime", runtime, *options])
        for reg in runtime_named(runtime).registrations
    }


def hooks_entries(runtime: str, argv: list[str], options: Sequence[str] = ()) -> dict[str, Any]:
    """The hooks document notewell's hooks make in *runtime*'s own form (``{"hooks": ...}``),
    as ``install`` writes them, notewell started as *argv*, each command given *options* (how
    it names the store)."""
    data: dict[str, Any] = {}
    _hooks_json(runtime, hook_commands(runtime, argv, options))(data, Path("hooks.json"))
    return data


def mcp_entries(runtime: str, argv: list[str], options: Sequence[str] = ()) -> dict[str, Any]:
    """``{"mcpServers": {"notewell": ...}}`` as ``install`` writes it for *runtime*, notewell
    started as *argv* and ``notewell mcp`` given *options*."""
    data: dict[str, Any] = {}
    _mcp_json(runtime, [*argv, "mcp", *options])(data, Path("mcp.json"))
    return data


def codex_server_block(server: list[str]) -> str:
    """Codex's ``[mcp_servers.notewell]`` table running *server* (``notewell mcp ...``), as
    ``install codex`` writes it between its marker lines."""
    return (
        f"[mcp_servers.{SERVER_NAME}]\ncommand = {_toml_string(server[0])}\n"
        f"args = [{', '.join(_toml_string(a) for a in server[1:])}]\n"
    )


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string (same escapes)


def _without_ours(doc: dict[str, Any]) -> dict[str, Any]:
    servers = doc.get("mcp_servers")
    if isinstance(servers, dict):
        servers = {k: v for k, v in servers.items() if k != SERVER_NAME}
        doc = {k: v for k, v in doc.items() if k != "mcp_servers"} | ({"mcp_servers": servers} if servers else {})
    return doc


def _codex_toml(path: Path, server: list[str] | None) -> FileChange:
    import tomllib

    parsed, text = load_toml(path)
    base = toml_without_block(text or "", path)
    try:
        same = parsed is None or _without_ours(tomllib.loads(base)) == _without_ours(parsed)
    except (tomllib.TOMLDecodeError, RecursionError):
        same = False
    if not same:  # notewell's marker lines inside a string of theirs, say: taking them out would change it
        raise InvalidArgumentError(
            f"{path}: taking notewell's block out would change more than notewell's table (are its marker lines"
            " inside a string?): edit it by hand; nothing changed"
        )

    had_ours = base != (text or "")
    if server is None:
        new = base if base.strip() or path.is_symlink() else None
        return FileChange(
            path, text, new if text is not None else None, f"MCP server {SERVER_NAME!r} removed", had_ours=had_ours
        )
    existing = tomllib.loads(base).get("mcp_servers", {})
    if isinstance(existing, dict) and SERVER_NAME in existing:
        raise InvalidArgumentError(
            f"{path} already has [mcp_servers.{SERVER_NAME}], not written by notewell install:"
            " remove it, then install again; nothing changed"
        )
    block = f"{BLOCK_START}\n{codex_server_block(server)}{BLOCK_END}\n"
    new = (base.rstrip("\n") + "\n\n" if base.strip() else "") + block
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:  # mcp_servers written as an inline table, say
        raise InvalidArgumentError(f"{path}: notewell's table would not fit in it ({exc}); nothing changed") from None
    return FileChange(path, text, new, f"MCP server {SERVER_NAME!r}", had_ours=had_ours)


def install_plan(
    runtime: str,
    *,
    scope: str = "project",
    folder: str | os.PathLike[str] = ".",
    home: str | os.PathLike[str] | None = None,
    store_args: list[str],
    hook_args: list[str] = (),  # type: ignore[assignment]
    server_args: list[str] = (),  # type: ignore[assignment]
    mcp: bool = True,
    hooks: bool = True,
    remove: bool = False,
    by_hand: bool = False,
) -> list[FileChange]:
    """The file changes that install (or, with *remove*, uninstall) notewell in *runtime*.
    *store_args*: how the commands name the store (``--store /abs/notes``); *hook_args*: more
    options for every hook command (``--project``, ``--budget``); *server_args*: more for the MCP
    server's (``--tools=default,attempts``). With *by_hand* (a dry run), a
    JSON file with comments gives the entries to add by hand instead of a refusal. Nothing is
    written here."""
    if runtime not in INSTALLABLE:
        raise InvalidArgumentError(f"no runtime {runtime!r}: one of {', '.join(INSTALLABLE)}")
    if scope not in ("project", "user"):
        raise InvalidArgumentError(f"scope is project or user, got {scope!r}")
    root = Path(folder).resolve()
    home_dir = Path(home) if home is not None else Path.home()
    mcp_file, hooks_file = _files(runtime, scope, root, home_dir)
    argv = _notewell_argv()
    server = None if remove else [argv[0], *argv[1:], "mcp", *store_args, *server_args]
    reg_commands = None if remove else hook_commands(runtime, argv, [*store_args, *hook_args])
    edits: dict[Path, list[Edit]] = {}
    changes: list[FileChange] = []
    if mcp:
        if runtime == "codex":
            changes.append(_codex_toml(mcp_file, server))
        else:
            edits.setdefault(mcp_file, []).append(_mcp_json(runtime, server))
    if hooks:
        edits.setdefault(hooks_file, []).append(_hooks_json(runtime, reg_commands))
    for path, steps in edits.items():
        try:
            data, text = load_json(path)
        except CommentedFile:
            if not by_hand:
                raise
            entries: dict[str, Any] = {}
            said = "; ".join(what for what, _ in (step(entries, path) for step in steps))
            changes.append(
                FileChange(path, None, None, f"has comments: add by hand ({said})", by_hand=dump_json(entries))
            )
            continue
        if data is None and remove:
            continue  # nothing installed there
        data = data or {}
        done = [step(data, path) for step in steps]
        said = "; ".join(what for what, _ in done)
        if remove and not any(found for _, found in done):
            changes.append(FileChange(path, text, text, said))  # nothing of notewell's: the bytes stay
            continue
        new = dump_json(data, like=text) if data or not remove or path.is_symlink() else None
        if text is not None and new is not None and (json.loads(text) if text.strip() else {}) == data:
            new = text  # what is there already: leave the bytes alone
        changes.append(FileChange(path, text, new, said, had_ours=any(found for _, found in done)))
    return changes


def next_steps_after_install(runtime: str, scope: str, *, mcp: bool = True) -> str:
    """What the person still has to do: each runtime holds new hooks or servers back until trusted."""
    if runtime == "claude-code":
        if scope == "project" and not mcp:
            return "next: start Claude Code in this folder and accept the workspace trust dialog"
        if scope == "project":
            return (
                "next: start Claude Code in this folder, accept the workspace trust dialog and approve the"
                " project MCP server 'notewell' (`claude mcp list` shows it)"
            )
        return "next: restart Claude Code (quit it first: it rewrites ~/.claude.json while it runs)"
    if runtime == "codex":
        where = "; a project's .codex/ loads only in a trusted project" if scope == "project" else ""
        return (
            "next: in Codex, run /hooks and trust notewell's hooks (new or changed hooks are skipped until"
            f" trusted){where}"
        )
    if runtime == "gemini":
        if scope == "project":
            return "next: start Gemini CLI here and trust the folder (it asks before running new project hooks)"
        return "next: restart Gemini CLI"
    return (
        "next: Cursor reloads hooks.json by itself; turn the 'notewell' server on under Settings > MCP."
        " Cursor has no hook that can give the notebook back after a compaction"
    )
