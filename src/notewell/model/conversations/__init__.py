"""Conversations from other tools (Claude Code, ChatGPT, claude.ai), read into one shape."""

from __future__ import annotations

from .chatgpt import parse_chatgpt
from .claude_ai import parse_claude_ai
from .claude_code import merged_sessions, parse_claude_code
from .conversation import Conversation, Part, Turn, as_imported, conversation_parts, import_digest

__all__ = [
    "Conversation",
    "Part",
    "Turn",
    "as_imported",
    "conversation_parts",
    "import_digest",
    "merged_sessions",
    "parse_chatgpt",
    "parse_claude_ai",
    "parse_claude_code",
]
