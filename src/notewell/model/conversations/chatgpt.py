"""ChatGPT's data export: ``conversations.json`` (or ``conversations-000.json``, ... in newer
exports), an array of conversations, each a tree of messages in ``mapping``.

The conversation as last shown is the path from ``current_node`` up through ``parent``
(regenerated answers and edited requests hang off it and are left out). Kept: user and
assistant messages shown to the person (``text`` and ``multimodal_text`` parts, voice
transcriptions); an assistant message addressed to a tool (``recipient`` other than ``all``)
becomes a condensed tool call on the answer; tool output, reasoning, hidden system and
custom-instruction messages are not turns.
"""

from __future__ import annotations

import re
from typing import Any

from .conversation import TOOL_CHARS, TOOL_NAME_CHARS, Conversation, Turn, first_line, iso_time, mark_failed

__all__ = ["parse_chatgpt"]

# private-use citation markers (bounded: an unclosed one must not make every later one scan to the end)
_CITATION = re.compile("\ue200[^\ue201]{0,400}\ue201|【[^】]{0,80}】")


def _text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    if not isinstance(parts, list):
        text = content.get("text")
        return text if isinstance(text, str) else ""
    out, images = [], 0
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if part.get("content_type") == "audio_transcription" and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif part.get("content_type") == "image_asset_pointer":
                images += 1
    text = _CITATION.sub("", "\n".join(p for p in out if p)).strip()
    if images:  # after the words, so that a request's first line is what it asks
        text += ("\n" if text else "") + f"[{images} image{'s' * (images != 1)}]"
    return text


def _path(conv: dict[str, Any]) -> list[dict[str, Any]]:
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        return []
    node_id = conv.get("current_node")
    if not isinstance(node_id, str) or node_id not in mapping:  # no pointer to the shown leaf: the newest leaf
        leaves = [n for n in mapping.values() if isinstance(n, dict) and not n.get("children")]
        node_id = max(leaves, key=lambda n: _created(n), default={}).get("id")
    path, seen = [], set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _created(node: dict[str, Any]) -> float:
    message = node.get("message") if isinstance(node.get("message"), dict) else {}
    value = message.get("create_time")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def parse_chatgpt(conv: dict[str, Any]) -> Conversation | None:
    """One exported conversation; None when it has no request (an empty chat) or no id."""
    ident = conv.get("conversation_id") or conv.get("id")
    if not isinstance(ident, str) or not ident:
        return None
    turns: list[Turn] = []
    words: dict[int, list[str]] = {}  # an answer's texts, by turn
    for node in _path(conv):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        role = author.get("role")
        content = message.get("content") if isinstance(message.get("content"), dict) else {}
        kind = content.get("content_type")
        meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if meta.get("is_visually_hidden_from_conversation") or meta.get("is_user_system_message"):
            continue
        at = iso_time(message.get("create_time"))
        ident_m = message.get("id") if isinstance(message.get("id"), str) else node.get("id")
        recipient = message.get("recipient")
        if role == "assistant" and recipient not in (None, "all"):
            call = first_line(str(recipient), TOOL_NAME_CHARS) or "tool"
            code = content.get("text") if isinstance(content.get("text"), str) else _text(content)
            if code:
                call += f"({first_line(code, TOOL_CHARS)})"
            _answer(turns, at, ident_m).tools.append(call)
            continue
        if role == "tool":
            if kind == "system_error" and turns and turns[-1].role == "assistant" and turns[-1].tools:
                mark_failed(turns[-1].tools, -1)
            continue
        if role not in ("user", "assistant") or kind not in ("text", "multimodal_text"):
            continue  # system prompts, reasoning, custom instructions, memory snapshots
        text = _text(content)
        if not text:
            continue
        if role == "user":
            turns.append(Turn("user", text, at, ident=ident_m))
        else:
            words.setdefault(id(_answer(turns, at, ident_m)), []).append(text)  # joined once, at the end
    for turn in turns:
        if turn.role == "assistant":
            turn.text = "\n\n".join(words.get(id(turn), []))
    if not any(t.role == "user" for t in turns):
        return None
    title = conv.get("title") if isinstance(conv.get("title"), str) and conv.get("title") != "New chat" else None
    model = conv.get("default_model_slug") if isinstance(conv.get("default_model_slug"), str) else None
    return Conversation("chatgpt", ident, turns, title=title, model=model)


def _answer(turns: list[Turn], at: str | None, ident: str | None) -> Turn:
    """The assistant turn now being written (a new one after a request)."""
    if not turns or turns[-1].role != "assistant":
        turns.append(Turn("assistant", "", at, ident=ident))
    return turns[-1]
