"""Claude Code session transcripts: one JSON object per line, ``~/.claude/projects/<folder>/<session>.jsonl``.

The format is Claude Code's own and changes between releases, so this reads what it can and
passes over the rest: ``user`` and ``assistant`` lines (message content as a string or a list
of ``text``/``tool_use``/``tool_result``/``thinking`` blocks), titles from ``custom-title``,
``ai-title`` and ``summary`` lines; every other line type is skipped. Everything the assistant
writes up to the next request (one response is several lines sharing ``message.id``) is one
turn. Lines Claude Code injected (``isMeta``, a compaction summary, command markup, API
errors) are not requests. Each line belongs to the session its ``sessionId`` names: a file
holds its own session's lines and may hold others' (a resumed session's file copies the lines
of the session it resumes; a ``/resume`` inside a session writes the resumed one's lines into
its file), so a file is read into one piece per session, and :func:`merged_sessions` puts a
session's pieces from every file together, each message once. A partly written last line (a
session still running) is left for the next import; a line that is not JSON anywhere else
makes the file unreadable.
"""

from __future__ import annotations

import re
from typing import Any

from .conversation import (
    TOOL_CHARS,
    TOOL_NAME_CHARS,
    Conversation,
    Turn,
    first_line,
    iso_time,
    mark_failed,
)
from .json_items import json_lines

__all__ = ["merged_sessions", "parse_claude_code"]

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


class _Session:
    """One session's lines as a file holds them, read into turns."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.tool_turn: dict[str, tuple[Turn, int]] = {}  # tool_use id -> (the turn, index in its tools)
        self.titles: dict[str, str] = {}
        self.seen: set[str] = set()
        self.words: dict[int, list[str]] = {}  # an answer's text blocks, by turn
        self.where: str | None = None
        self.branch: str | None = None
        self.model: str | None = None

    def title_line(self, kind: Any, line: dict[str, Any]) -> None:
        if kind == "custom-title" and isinstance(line.get("customTitle"), str):
            self.titles["custom"] = line["customTitle"]
        elif kind == "ai-title" and isinstance(line.get("aiTitle"), str):
            self.titles["ai"] = line["aiTitle"]

    def message(self, kind: str, line: dict[str, Any]) -> None:
        uuid = line.get("uuid") if isinstance(line.get("uuid"), str) else None
        if uuid is not None:
            if uuid in self.seen:
                return  # a resumed session repeats lines it copied
            self.seen.add(uuid)
        message = line.get("message") if isinstance(line.get("message"), dict) else {}
        blocks = _blocks(message.get("content"))
        at = iso_time(line.get("timestamp"))
        self.where = line["cwd"] if isinstance(line.get("cwd"), str) else self.where
        self.branch = line["gitBranch"] if isinstance(line.get("gitBranch"), str) and line["gitBranch"] else self.branch
        if kind == "user":
            for b in blocks:
                if b.get("type") == "tool_result" and b.get("is_error") is True:
                    hit = self.tool_turn.get(str(b.get("tool_use_id")))
                    if hit is not None:
                        mark_failed(hit[0].tools, hit[1])
            text = "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            text = _without_injected(text).strip()
            if _is_request(line, text, blocks):
                self.turns.append(Turn("user", text, at, ident=uuid))
            return
        if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
            self.model = message["model"]
        if not self.turns or self.turns[-1].role != "assistant":  # everything up to the next request is one answer
            self.turns.append(Turn("assistant", "", at, ident=uuid))
        turn = self.turns[-1]  # its ident stays its first line's: the same however far the answer has got
        for b in blocks:
            if b.get("type") == "text" and str(b.get("text", "")).strip():
                self.words.setdefault(id(turn), []).append(str(b["text"]).strip())  # joined once, at the end
            elif b.get("type") == "tool_use":
                turn.tools.append(_tool_call(b))
                self.tool_turn[str(b.get("id"))] = (turn, len(turn.tools) - 1)

    def conversation(self, session: str, own: bool, summaries: dict[str, tuple[int, str]]) -> Conversation | None:
        for turn in self.turns:
            if turn.role == "assistant":
                turn.text = "\n\n".join(self.words.get(id(turn), []))
        turns = [t for t in self.turns if t.text or t.tools]
        if not turns:
            return None
        # The first summary line whose leaf is this session's (a lookup per message: linear).
        leaf_summary = min((summaries[u] for u in self.seen if u in summaries), default=(0, None))[1]
        title = self.titles.get("custom") or self.titles.get("ai") or leaf_summary
        return Conversation(
            "claude-code", session, turns, title=title, model=self.model, where=self.where, branch=self.branch,
            own_file=own,
        )  # fmt: skip


def parse_claude_code(data: bytes, stem: str) -> list[Conversation]:
    """The sessions whose lines *data* (a transcript's bytes) holds, each keyed by the
    ``sessionId`` its lines carry, the file's own first (see :func:`_own_session`); a session
    may hold no request here, or no turn at all (only its compaction's lines, say: the file
    still names it). :func:`merged_sessions` puts each session's pieces together.
    InvalidArgumentError when a line other than a partly written last one is not JSON."""
    sessions: dict[str | None, _Session] = {}  # by sessionId; None: lines before any that carries one
    summaries: dict[str, tuple[int, str]] = {}  # leafUuid -> (the line's place among them, summary)
    last: str | None = None  # the session of the file's last request or answer
    named: dict[str, None] = {}  # every session a line names, in order (a compaction's lines: no turns)
    for _number, line in json_lines(data):
        kind = line.get("type")
        sid = line.get("sessionId") if isinstance(line.get("sessionId"), str) else None
        if sid is not None and sid not in named:
            named[sid] = None
        if kind == "summary" and isinstance(line.get("summary"), str):
            leaf = str(line.get("leafUuid"))
            summaries[leaf] = (summaries[leaf][0] if leaf in summaries else len(summaries), line["summary"])
        elif kind in ("custom-title", "ai-title"):
            sessions.setdefault(sid, _Session()).title_line(kind, line)
        if kind not in ("user", "assistant") or line.get("isSidechain") or line.get("isApiErrorMessage"):
            continue
        last = sid if sid is not None else last  # a line without one goes on with the session before it
        sessions.setdefault(last, _Session()).message(kind, line)
    own = _own_session(sessions, last, stem)
    out: list[Conversation] = []
    for sid, session in sessions.items():
        conv = session.conversation(own if sid is None else sid, sid is None or sid == own, summaries)
        if conv is not None:
            out.append(conv)
    found = {c.source_id for c in out}
    out += [Conversation("claude-code", sid, [], own_file=sid == own) for sid in named if sid not in found]
    out.sort(key=lambda c: not c.own_file)
    return out


def _own_session(sessions: dict[str | None, _Session], last: str | None, stem: str) -> str:
    """The session this file is the transcript of: its name's, when lines carry it; else (a
    file renamed, or a continuation file whose lines keep the session they continue) the
    session of its last request or answer, the one it was written in last."""
    if stem in sessions or last is None:
        return stem
    return last


def merged_sessions(pieces: list[Conversation]) -> Conversation | None:
    """One session from its *pieces* (the same session id, read from several files: a backup,
    a resumed copy, lines written into another session's file), each message once, in the
    order they were written; the title of its own file first. None when it holds no request
    (or only Claude Code's warm-up)."""
    if not pieces:
        return None
    first = max(pieces, key=lambda c: (c.own_file, len(c.turns)))
    best: dict[str, tuple[int, Turn]] = {}  # a message read twice: the fuller reading
    rows: list[tuple[str, int, int, Turn]] = []
    for rank, piece in enumerate(sorted(pieces, key=lambda c: c is not first)):
        at = ""
        for index, turn in enumerate(piece.turns):
            at = max(at, turn.at or "")  # never before a line its file wrote earlier (a clock set back)
            size = len(turn.text) + sum(map(len, turn.tools))
            if turn.ident is not None:
                held = best.get(turn.ident)
                if held is not None:
                    if size > held[0]:
                        best[turn.ident] = (size, turn)
                    continue
                best[turn.ident] = (size, turn)
            rows.append((at, rank, index, turn))
    rows.sort(key=lambda r: r[:3])
    turns = [best[t.ident][1] if t.ident is not None else t for *_, t in rows]
    if not any(t.role == "user" for t in turns) or _warm_up(turns):
        return None
    latest = max(pieces, key=lambda c: max((t.at or "" for t in c.turns), default=""))
    title = first.title or next((c.title for c in pieces if c.title), None)
    return Conversation(
        "claude-code", first.source_id, turns, title=title, model=latest.model or first.model,
        where=latest.where or first.where, branch=latest.branch or first.branch, own_file=first.own_file,
    )  # fmt: skip


def _warm_up(turns: list[Turn]) -> bool:
    requests = [t.text.strip() for t in turns if t.role == "user"]
    return requests == ["Warmup"]
