"""Gemini CLI sessions: ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json``, one
JSON object per session, rewritten whole as the session goes on (and by a resume).

As google-gemini/gemini-cli's ``chatRecordingService`` writes it, a ``ConversationRecord``:
``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``, optionally ``summary``, and
``messages``, each with ``id``, ``timestamp``, ``type`` (``user``, ``gemini``, and ``info``,
``error``, ``warning`` notices) and ``content`` (a string, or in later versions the API's parts:
a part, or a list of strings and parts with ``text``; ``displayContent`` when what was shown
differs). A ``gemini`` message may carry ``toolCalls`` (``name``, ``args``, ``status``),
``thoughts``, ``tokens`` and ``model``. Kept: the person's requests and the model's words, its
tool calls condensed to one line (marked failed when their status says so); left out: notices,
thoughts, tool results. Consecutive ``gemini`` messages are one answer.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import InvalidArgumentError
from .conversation import TOOL_CHARS, TOOL_NAME_CHARS, Conversation, Turn, first_line, iso_time, mark_failed

__all__ = ["parse_gemini"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_ARG_KEYS = ("command", "file_path", "absolute_path", "path", "dir_path", "pattern", "query", "url", "prompt")
_FAILED = ("error", "cancelled")


def _text(content: Any) -> str:
    """The words of a message's content: a string, a part, or a list of strings and parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            out.append(part["text"])
    return "".join(out)


def _call(record: dict[str, Any]) -> str:
    name = first_line(str(record.get("name") or record.get("displayName") or "tool"), TOOL_NAME_CHARS) or "tool"
    args = _dict(record.get("args"))
    arg = next((str(args[k]) for k in _ARG_KEYS if isinstance(args.get(k), (str, int, float)) and str(args[k])), "")
    arg = first_line(arg, TOOL_CHARS) if arg else ""
    return f"{name}({arg})" if arg else name


def parse_gemini(data: bytes, stem: str) -> Conversation | None:
    """The session a Gemini CLI session file holds (None when it holds no request), keyed by its
    ``sessionId`` (else the file's name *stem*). InvalidArgumentError when it is not one JSON
    object (cut short, say: Gemini CLI rewrites it whole, so a half-written one is not read)."""
    try:
        record = json.loads(data)
    except ValueError as exc:
        raise InvalidArgumentError(f"not JSON (cut short?): {exc}") from None
    except RecursionError:
        raise InvalidArgumentError("nested too deep to read") from None
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        raise InvalidArgumentError("not a Gemini CLI session: no list of messages")
    turns: list[Turn] = []
    words: dict[int, list[str]] = {}
    model = None
    for message in record["messages"]:
        if not isinstance(message, dict):
            continue
        kind = message.get("type")
        at = iso_time(message.get("timestamp"))
        ident = message.get("id") if isinstance(message.get("id"), str) else None
        if kind == "user":
            shown = message.get("displayContent")
            text = (_text(shown) if shown is not None else "") or _text(message.get("content"))
            if text.strip():
                turns.append(Turn("user", text.strip(), at, ident=ident))
        elif kind == "gemini":
            if not turns or turns[-1].role != "assistant":
                turns.append(Turn("assistant", "", at, ident=ident))
            turn = turns[-1]
            text = _text(message.get("content")).strip()
            if text:
                words.setdefault(id(turn), []).append(text)
            calls = _list(message.get("toolCalls"))
            for call in calls:
                if isinstance(call, dict):
                    turn.tools.append(_call(call))
                    if call.get("status") in _FAILED:
                        mark_failed(turn.tools, -1)
            model = message["model"] if isinstance(message.get("model"), str) and message["model"] else model
    for turn in turns:
        if turn.role == "assistant":
            turn.text = "\n\n".join(words.get(id(turn), []))
    turns = [t for t in turns if t.text or t.tools]
    if not any(t.role == "user" for t in turns):
        return None
    sid = record.get("sessionId") if isinstance(record.get("sessionId"), str) and record.get("sessionId") else stem
    summary = record.get("summary") if isinstance(record.get("summary"), str) and record.get("summary") else None
    return Conversation("gemini", str(sid), turns, title=summary, model=model)
