"""Conversations from other tools (Claude Code, Codex CLI, Gemini CLI, ChatGPT, claude.ai), read into one shape."""

from __future__ import annotations

from .chatgpt import parse_chatgpt
from .claude_ai import parse_claude_ai
from .claude_code import merged_sessions, parse_claude_code
from .codex import parse_codex
from .conversation import Conversation, Part, Turn, as_imported, conversation_parts, import_digest
from .gemini import parse_gemini

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
    "parse_codex",
    "parse_gemini",
]
