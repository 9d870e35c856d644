"""The tools conversations are imported from, defined once: each source's name, what its files
are, where they are by default and how one conversation of its export is read. The importer, the
CLI and the reference read this table; a new source is one row (and its parser in
``model/conversations``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InvalidArgumentError
from ..model.conversations import Conversation, parse_chatgpt, parse_claude_ai, parse_codex, parse_gemini

__all__ = ["SOURCE_TABLE", "SOURCES", "Source", "source_named"]


def _claude_code_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"


def _codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"


def _gemini_home() -> Path:
    return Path.home() / ".gemini" / "tmp"


class Source(NamedTuple):
    """One tool conversations come from."""

    name: str
    files: str  # what to give the import, as the reference says it
    # The key every conversation of its export has (None: session files, read whole).
    shape: str | None
    parse: Callable[[dict[str, Any]], Conversation | None] | None  # one conversation of its export
    default_path: Callable[[], Path] | None = None  # where its files are when no path is given
    # Sessions one file each (Codex, Gemini CLI): the file's bytes and name -> its session
    session_file: Callable[[bytes, str], Conversation | None] | None = None
    pattern: str = ""  # the names of its session files in a folder (searched at any depth)


SOURCE_TABLE: tuple[Source, ...] = (
    Source(
        "claude-code",
        "a projects folder (default `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`) or one `.jsonl`",
        None,
        None,
        _claude_code_home,
    ),
    Source("chatgpt", "the export's `.zip`, its folder or `conversations.json`", "mapping", parse_chatgpt),
    Source(
        "claude", "claude.ai's export: its `.zip`, its folder or `conversations.json`", "chat_messages", parse_claude_ai
    ),
    Source(
        "codex",
        "a sessions folder (default `$CODEX_HOME/sessions`, else `~/.codex/sessions`) or one `rollout-*.jsonl`",
        None,
        None,
        _codex_home,
        parse_codex,
        "rollout-*.jsonl",
    ),
    Source(
        "gemini",
        "a folder of sessions (default `~/.gemini/tmp`, each project's `chats/`) or one `session-*.json`",
        None,
        None,
        _gemini_home,
        parse_gemini,
        "session-*.json",
    ),
)
SOURCES = tuple(s.name for s in SOURCE_TABLE)


def source_named(name: str) -> Source:
    """The source called *name*; InvalidArgumentError naming the others."""
    for source in SOURCE_TABLE:
        if source.name == name:
            return source
    raise InvalidArgumentError(f"source must be one of {', '.join(SOURCES)}, got {name!r}")
