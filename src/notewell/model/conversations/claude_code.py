"""Claude Code session transcripts: one JSON object per line, ``~/.claude/projects/<folder>/<session>.jsonl``.

The format is Claude Code's own and changes between releases, so this reads what it can and
passes over the rest: ``user`` and ``assistant`` lines (message content as a string or a list
of ``text``/``tool_use``/``tool_result``/``thinking`` blocks), titles from ``custom-title``,
``ai-title`` and ``summary`` lines; every other line type is skipped. Everything the assistant
writes up to the next request (one response is several lines sharing ``message.id``) is one
turn. Lines Claude Code injected (``isMeta``, a compaction summary, command markup, API
errors) are not requests. Lines a resumed session's file copied from the session it resumes
(their ``sessionId`` names that session) are that session's, not this one's: left out, titles
and summaries too, so a session's note holds its own turns whatever else the store holds. A
partly written last line (a session still running) is left for the next import; a line that
is not JSON anywhere else makes the file unreadable.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import InvalidArgumentError
from .conversation import (
    TOOL_CHARS,
    TOOL_NAME_CHARS,
    Conversation,
    Turn,
    first_line,
    iso_time,
    mark_failed,
)

__all__ = ["parse_claude_code"]

_MARKUP_TAGS = frozenset(
    "command-name command-message command-args command-contents local-command-stdout local-command-stderr"
    " local-command-caveat bash-input bash-stdout bash-stderr system-reminder user-memory-input"
    " ide_opened_file ide_selection".split()
)
_INJECTED_TAGS = ("system-reminder", "ide_opened_file", "ide_selection")
_OPENING = re.compile(r"<([a-z_-]+)>")
_INTERRUPTED = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
_ARG_KEYS = ("file_path", "path", "command", "pattern", "url", "query", "description", "prompt", "notebook_path")


def _tool_call(block: dict[str, Any]) -> str:
    name = first_line(str(block.get("name") or "tool"), TOOL_NAME_CHARS) or "tool"
    args = block.get("input") if isinstance(block.get("input"), dict) else {}
    arg = next((str(args[k]) for k in _ARG_KEYS if isinstance(args.get(k), (str, int, float)) and str(args[k])), "")
    arg = first_line(arg, TOOL_CHARS) if arg else ""
    return f"{name}({arg})" if arg else name


def _only_markup(text: str) -> bool:
    """Whether *text* is nothing but harness tags (a slash command, its output, a caveat)."""
    i, n = 0, len(text)
    while i < n:
        m = _OPENING.match(text, i)
        if m is None or m.group(1) not in _MARKUP_TAGS:
            return False
        close = text.find(f"</{m.group(1)}>", m.end())
        if close < 0:
            return False
        i = close + len(m.group(1)) + 3
        while i < n and text[i].isspace():
            i += 1
    return True


def _without_injected(text: str) -> str:
    """*text* without the context Claude Code wraps into a request (reminders, the open file)."""
    for tag in _INJECTED_TAGS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        out, i = [], 0
        while True:
            start = text.find(opening, i)
            end = text.find(closing, start) if start >= 0 else -1
            if start < 0 or end < 0:
                out.append(text[i:])
                break
            out.append(text[i:start])
            i = end + len(closing)
        text = "".join(out)
    return text


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _is_request(line: dict[str, Any], text: str, blocks: list[dict[str, Any]]) -> bool:
    if line.get("isMeta") or line.get("isCompactSummary") or line.get("isVisibleInTranscriptOnly"):
        return False
    if blocks and all(b.get("type") == "tool_result" for b in blocks):
        return False
    stripped = text.strip()
    return bool(stripped) and not _only_markup(stripped) and stripped not in _INTERRUPTED


def parse_claude_code(data: bytes, session_id: str) -> Conversation | None:
    """The session in *data* (a transcript's bytes), keyed by *session_id* (the file's stem)
    when its lines carry that id, else by the id they carry (see :func:`_own_session`);
    None when it holds no request (an empty or warm-up session). InvalidArgumentError when a
    line other than a partly written last one is not JSON."""
    lines = data.rstrip(b"\n").split(b"\n")
    if lines and lines[-1].strip():
        try:
            json.loads(lines[-1])
        except ValueError:
            lines = lines[:-1]  # still being written: the next import reads it whole
        except RecursionError:
            pass  # whole, but nested too deep: refused below
    own = _own_session(data, lines, session_id)
    others: list[str] = []  # when each of another session's requests and answers was written
    turns: list[Turn] = []
    tool_turn: dict[str, tuple[Turn, int]] = {}  # tool_use id -> (the turn, index in its tools)
    titles: dict[str, str] = {}
    summaries: dict[str, str] = {}  # leafUuid -> summary
    seen: set[str] = set()
    uuids: set[str] = set()
    where = branch = model = None
    words: dict[int, list[str]] = {}  # an answer's text blocks, by turn
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            raise InvalidArgumentError(f"line {number} is not JSON") from None
        except RecursionError:
            raise InvalidArgumentError(f"line {number} is nested too deep to read") from None
        if not isinstance(line, dict):
            continue
        kind = line.get("type")
        if _other_session(line, own):
            if kind in ("user", "assistant"):
                others.append(iso_time(line.get("timestamp")) or "")
            continue  # copied from the session this one resumes: that session's, not this one's
        if kind == "custom-title" and isinstance(line.get("customTitle"), str):
            titles["custom"] = line["customTitle"]
        elif kind == "ai-title" and isinstance(line.get("aiTitle"), str):
            titles["ai"] = line["aiTitle"]
        elif kind == "summary" and isinstance(line.get("summary"), str):
            summaries[str(line.get("leafUuid"))] = line["summary"]
        if kind not in ("user", "assistant") or line.get("isSidechain") or line.get("isApiErrorMessage"):
            continue
        uuid = line.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue  # a resumed session repeats lines it copied
            seen.add(uuid)
            uuids.add(uuid)
        message = line.get("message") if isinstance(line.get("message"), dict) else {}
        blocks = _blocks(message.get("content"))
        at = iso_time(line.get("timestamp"))
        where = line.get("cwd") if isinstance(line.get("cwd"), str) else where
        branch = line.get("gitBranch") if isinstance(line.get("gitBranch"), str) and line.get("gitBranch") else branch
        if kind == "user":
            for b in blocks:
                if b.get("type") == "tool_result" and b.get("is_error") is True:
                    hit = tool_turn.get(str(b.get("tool_use_id")))
                    if hit is not None:
                        turn, index = hit
                        mark_failed(turn.tools, index)
            text = "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            text = _without_injected(text).strip()
            if _is_request(line, text, blocks):
                turns.append(Turn("user", text, at, ident=uuid if isinstance(uuid, str) else None))
            continue
        if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
            model = message["model"]
        if not turns or turns[-1].role != "assistant":  # everything up to the next request is one answer
            turns.append(Turn("assistant", "", at, ident=uuid if isinstance(uuid, str) else None))
        turn = turns[-1]  # its ident stays its first line's: the same however far the answer has got
        for b in blocks:
            if b.get("type") == "text" and str(b.get("text", "")).strip():
                words.setdefault(id(turn), []).append(str(b["text"]).strip())  # joined once, at the end
            elif b.get("type") == "tool_use":
                turn.tools.append(_tool_call(b))
                tool_turn[str(b.get("id"))] = (turn, len(turn.tools) - 1)
    for turn in turns:
        if turn.role == "assistant":
            turn.text = "\n\n".join(words.get(id(turn), []))
    turns = [t for t in turns if t.text or t.tools]
    if not any(t.role == "user" for t in turns) or _warm_up(turns):
        return None
    leaf_summary = next((s for leaf, s in summaries.items() if leaf in uuids), None)
    title = titles.get("custom") or titles.get("ai") or leaf_summary
    # Keyed by the session its lines carry: a renamed file, or a continuation file whose lines
    # keep the session they continue, is that session's conversation, found again as such.
    conv = Conversation("claude-code", own, turns, title=title, model=model, where=where, branch=branch)
    last_own = max((t.at for t in turns if t.at), default="")
    conv.strays = sum(1 for at in others if at > last_own)  # copied lines come before its own
    return conv


def _own_session(data: bytes, lines: list[bytes], stem: str) -> str:
    """The session id this file's own lines carry: its name's, when any line names it; else
    (a file renamed, or a continuation file whose lines keep the session they continue) the
    id of its last request or answer, the session it was written in last."""
    named = json.dumps(stem).encode("utf-8", "surrogatepass")
    if b'"sessionId":' + named in data or b'"sessionId": ' + named in data:
        return stem
    for raw in reversed(lines):
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(line, dict) and line.get("type") in ("user", "assistant"):
            sid = line.get("sessionId")
            return sid if isinstance(sid, str) else stem
    return stem


def _other_session(line: dict[str, Any], own: str) -> bool:
    """True for a line a resumed session's file copied from the session it resumes: its
    ``sessionId`` names another session (a line with none is the file's own)."""
    sid = line.get("sessionId")
    return isinstance(sid, str) and sid != own


def _warm_up(turns: list[Turn]) -> bool:
    requests = [t.text.strip() for t in turns if t.role == "user"]
    return requests == ["Warmup"]
