"""claude.ai's data export: ``conversations.json``, an array of conversations with ``uuid``,
``name``, ``created_at``, ``updated_at`` and ``chat_messages``.

A message's words are its ``content`` blocks of type ``text`` (the flattened ``text`` field
may carry thinking and tool chatter, or be empty; it is read only when there are no blocks);
``tool_use`` blocks become condensed tool calls, a ``tool_result`` with ``is_error`` marks its
call failed, thinking is left out; a pasted document (``attachments``) is named, not copied.
Newer exports link messages by ``parent_message_uuid``: when the messages branch (an edited
request, a regenerated answer), the path to the newest leaf is the conversation.
"""

from __future__ import annotations

from typing import Any

from .conversation import TOOL_CHARS, TOOL_NAME_CHARS, Conversation, Turn, first_line, iso_time, mark_failed

__all__ = ["parse_claude_ai"]

_ROOT = "00000000-0000-4000-8000-000000000000"
_ARG_KEYS = ("query", "url", "title", "command", "path", "code")


def _tool_call(block: dict[str, Any]) -> str:
    name = first_line(str(block.get("name") or "tool"), TOOL_NAME_CHARS) or "tool"
    args = block.get("input") if isinstance(block.get("input"), dict) else {}
    arg = next((str(args[k]) for k in _ARG_KEYS if isinstance(args.get(k), str) and args[k].strip()), "")
    return f"{name}({first_line(arg, TOOL_CHARS)})" if arg else name


def _branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages on the shown path: array order, or the path to the newest leaf when they branch."""
    by_id = {m.get("uuid"): m for m in messages if isinstance(m.get("uuid"), str)}
    parents = [m.get("parent_message_uuid") for m in messages]
    if not any(isinstance(p, str) and p != _ROOT for p in parents):
        return messages
    children: set[str] = {p for p in parents if isinstance(p, str)}
    # A uuid that is no string (a damaged export) is no message's parent: a leaf.
    leaves = [(i, m) for i, m in enumerate(messages) if not isinstance(m.get("uuid"), str) or m["uuid"] not in children]
    if not leaves:
        return messages
    _, leaf = max(leaves, key=lambda im: (str(im[1].get("created_at") or ""), im[0]))
    path, seen = [], set()
    node: dict[str, Any] | None = leaf
    while node is not None and (key := str(node.get("uuid"))) not in seen:
        seen.add(key)
        path.append(node)
        parent = node.get("parent_message_uuid")
        node = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def parse_claude_ai(conv: dict[str, Any]) -> Conversation | None:
    """One exported conversation; None when it has no request (an empty chat) or no id."""
    ident = conv.get("uuid")
    raw = conv.get("chat_messages")
    if not isinstance(ident, str) or not ident or not isinstance(raw, list):
        return None
    messages = [m for m in raw if isinstance(m, dict)]
    turns: list[Turn] = []
    for message in _branch(messages):
        sender = message.get("sender")
        role = "user" if sender in ("human", "user") else "assistant" if sender == "assistant" else None
        if role is None:
            continue
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        words = [str(b.get("text", "")).strip() for b in blocks if b.get("type") == "text"]
        text = "\n\n".join(w for w in words if w)
        if not blocks and isinstance(message.get("text"), str):
            text = message["text"].strip()
        tools: list[str] = []
        calls: dict[str, int] = {}
        for b in blocks:
            if b.get("type") == "tool_use":
                calls[str(b.get("id"))] = len(tools)
                tools.append(_tool_call(b))
            elif b.get("type") == "tool_result" and b.get("is_error") is True:
                index = calls.get(str(b.get("tool_use_id")), len(tools) - 1)
                if 0 <= index < len(tools):
                    mark_failed(tools, index)
        files = [a.get("file_name") for a in message.get("attachments") or [] if isinstance(a, dict)]
        files += [f.get("file_name") for f in message.get("files") or [] if isinstance(f, dict)]
        named = [str(f) for f in files if isinstance(f, str) and f]
        if named:
            text = (text + "\n\n" if text else "") + "attached: " + ", ".join(named)
        if not text and not tools:
            continue
        ident_m = message.get("uuid") if isinstance(message.get("uuid"), str) else None
        turns.append(Turn(role, text, iso_time(message.get("created_at")), tools, ident_m))
    if not any(t.role == "user" for t in turns):
        return None
    name = conv.get("name") if isinstance(conv.get("name"), str) and conv.get("name") else None
    return Conversation("claude", ident, turns, title=name)
