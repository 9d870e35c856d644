"""Codex CLI sessions: rollout files, one JSON object per line,
``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl``.

As openai/codex writes them (codex-rs/protocol ``RolloutLine``: ``timestamp`` and a
``RolloutItem`` tagged by ``type`` with its ``payload``): ``session_meta`` (the session's ``id``,
``cwd``, ``git.branch``), ``turn_context`` (the ``model``), ``response_item`` (a ``message`` of
role user or assistant with ``input_text``/``output_text`` parts, a ``function_call`` and its
``function_call_output``, ``local_shell_call``, ``custom_tool_call``, ``web_search_call``,
``reasoning``), ``event_msg`` and ``compacted``. Versions before the envelope wrote the session
object bare on the first line and response items bare after it (and ``record_type`` lines): read
too. Kept: what the person typed and the assistant's words, its tool calls condensed to one line
(marked failed when their output says so). Left out: the context Codex injects as user messages
(environment, AGENTS.md, instructions), developer and system messages, reasoning, event echoes
of the same messages, compaction summaries. A resumed session appends to its file; a partly
written last line waits for the next import; another line that is not JSON makes the file
unreadable. A turn's id is the number of the line it starts on (a rollout only grows at its end).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .conversation import TOOL_CHARS, TOOL_NAME_CHARS, Conversation, Turn, first_line, iso_time, mark_failed
from .json_items import json_lines

__all__ = ["parse_codex"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_ITEM_KINDS = frozenset(
    "message function_call function_call_output local_shell_call custom_tool_call custom_tool_call_output"
    " web_search_call reasoning".split()
)
# What Codex puts into the conversation as a user message but the person did not type.
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>",
             "<user_shell_command>", "<permissions instructions>")  # fmt: skip
_ARG_KEYS = ("command", "cmd", "path", "file_path", "pattern", "query", "url", "plan", "input")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _words(value: Any) -> str:
    if isinstance(value, list) and len(value) >= 3 and value[1] in ("-lc", "-c"):
        value = value[2:]  # ["bash", "-lc", "rg -n pool"]: the command itself
    if isinstance(value, list):
        return " ".join(str(v) for v in value if isinstance(v, (str, int, float)))
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""


def _call(name: Any, args: Any) -> str:
    """A tool call as one line: its name and its most telling argument."""
    shown = first_line(str(name or "tool"), TOOL_NAME_CHARS) or "tool"
    if isinstance(args, str):
        try:
            args = json.loads(args) if len(args) <= 1 << 20 else args
        except (ValueError, RecursionError):
            pass
    if isinstance(args, dict):
        arg = next((_words(args[k]) for k in _ARG_KEYS if _words(args.get(k))), "")
    else:
        arg = _words(args)
    arg = first_line(arg, TOOL_CHARS) if arg else ""
    return f"{shown}({arg})" if arg else shown


def _failed(output: Any) -> bool:
    """Whether a call's output says it failed (``success: false``, or a non-zero exit code)."""
    if isinstance(output, dict):
        if output.get("success") is False:
            return True
        output = output.get("content")
    if isinstance(output, str) and output.startswith("{") and len(output) <= 1 << 20:
        try:
            meta = json.loads(output).get("metadata")
        except (ValueError, RecursionError, AttributeError):
            return False
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return isinstance(code, int) and not isinstance(code, bool) and code != 0
    return False


class _Rollout:
    """A rollout's lines read into turns."""

    def __init__(self) -> None:
        self.sid: str | None = None
        self.where: str | None = None
        self.branch: str | None = None
        self.model: str | None = None
        self.at: str | None = None  # the session's start: the time of lines that carry none (old files)
        self.turns: list[Turn] = []
        self.words: dict[int, list[str]] = {}  # an answer's texts, by turn
        self.calls: dict[str, tuple[Turn, int]] = {}  # call_id -> (the turn, its index in the tools)

    def meta(self, meta: dict[str, Any]) -> None:
        if self.sid is None and isinstance(meta.get("id"), str):  # a fork copies its parent's meta after its own
            self.sid = meta["id"]
            self.where = meta["cwd"] if isinstance(meta.get("cwd"), str) else None
            git = _dict(meta.get("git"))
            self.branch = git["branch"] if isinstance(git.get("branch"), str) and git["branch"] else None
            self.at = iso_time(meta.get("timestamp"))

    def answer(self, at: str | None, ident: str) -> Turn:
        if not self.turns or self.turns[-1].role != "assistant":
            self.turns.append(Turn("assistant", "", at, ident=ident))
        return self.turns[-1]

    def item(self, item: dict[str, Any], at: str | None, ident: str) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(item, at, ident)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            if kind == "local_shell_call":
                action = _dict(item.get("action"))
                call = _call("shell", action.get("command"))
            elif kind == "web_search_call":
                action = _dict(item.get("action"))
                call = _call("web_search", action.get("query"))
            else:
                call = _call(item.get("name"), item.get("arguments", item.get("input")))
            turn = self.answer(at, ident)
            turn.tools.append(call)
            if isinstance(item.get("call_id"), str):
                self.calls[item["call_id"]] = (turn, len(turn.tools) - 1)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            hit = self.calls.get(str(item.get("call_id")))
            if hit is not None and _failed(item.get("output")):
                mark_failed(hit[0].tools, hit[1])

    def message(self, item: dict[str, Any], at: str | None, ident: str) -> None:
        role = item.get("role")
        parts = _list(item.get("content"))
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if role == "assistant":
            words = "\n\n".join(t.strip() for t in texts if t.strip())
            if words:
                self.words.setdefault(id(self.answer(at, ident)), []).append(words)
            return
        if role != "user":
            return  # developer and system messages: Codex's own instructions
        text = "\n\n".join(t for t in texts if not t.lstrip().startswith(_INJECTED)).strip()
        images = sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "input_image")
        if images:
            text += ("\n" if text else "") + f"[{images} image{'s' * (images != 1)}]"
        if text:
            self.turns.append(Turn("user", text, at, ident=ident))

    def conversation(self, stem: str) -> Conversation | None:
        for turn in self.turns:
            if turn.role == "assistant":
                turn.text = "\n\n".join(self.words.get(id(turn), []))
        turns = [t for t in self.turns if t.text or t.tools]
        if not any(t.role == "user" for t in turns):
            return None
        found = _UUID.search(stem)
        sid = self.sid or (found.group(0) if found else stem)
        return Conversation("codex", sid, turns, model=self.model, where=self.where, branch=self.branch)


def parse_codex(data: bytes, stem: str) -> Conversation | None:
    """The session a rollout's bytes hold (None when it holds no request), keyed by its
    ``session_meta`` id (else the session id in the file's name *stem*). InvalidArgumentError
    when a line other than a partly written last one is not JSON."""
    rollout = _Rollout()
    for number, line in json_lines(data):
        kind, payload = line.get("type"), line.get("payload")
        at = iso_time(line.get("timestamp")) or rollout.at
        if isinstance(payload, dict):
            if kind == "session_meta":
                rollout.meta(payload)
            elif kind == "turn_context" and isinstance(payload.get("model"), str):
                rollout.model = payload["model"]
            elif kind == "response_item":
                rollout.item(payload, at, f"line-{number}")
        elif isinstance(kind, str) and kind in _ITEM_KINDS:  # before the envelope: response items bare
            rollout.item(line, at, f"line-{number}")
        elif kind is None and "record_type" not in line and "id" in line and rollout.sid is None:
            rollout.meta(line)  # before the envelope: the session object bare on the first line
    return rollout.conversation(stem)
