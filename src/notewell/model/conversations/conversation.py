"""A conversation brought in from another tool, and the notes it becomes.

Every importer turns its source's format into a :class:`Conversation`: the source's own id,
the turns in the order they were shown (a user's request, the assistant's answer with its tool
calls condensed to one line each). :func:`conversation_parts` lays it out as notes: one note
per conversation, or several parts when it is long (each under ``part_bytes``), the later ones
building on the earlier. A part's header says where it came from (``source``,
``conversation``, ``part``, ``messages``, ``last_message``), so that importing again adds only
the turns after the last one kept, and ends with ``import_digest``, a digest of the part as it
was written, so that importing again can tell a part nobody touched (which it may rewrite) from
one a person changed (which it never does).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..header import LIMITS, compose_note, quote_value

__all__ = [
    "DIGEST_KEY",
    "Conversation",
    "Part",
    "Turn",
    "as_imported",
    "clean",
    "conversation_parts",
    "first_line",
    "import_digest",
    "iso_time",
    "last_turn_minute",
    "mark_failed",
    "one_line_id",
]

TEXT_CHARS = 4000  # a message longer than this is kept to its first TEXT_CHARS characters
TOOL_CHARS = 100  # a condensed tool call's argument
TOOL_NAME_CHARS = 60  # its name (a name is a short word; a 2 MB one must not fill a part)
PART_BYTES = 96_000  # a part stays well under the store's note limit and reads in one go
TITLE_CHARS = 90


@dataclass
class Turn:
    """One message as shown: who, what, when, and the tool calls it made (condensed)."""

    role: str  # "user" or "assistant"
    text: str
    at: str | None = None  # ISO 8601, UTC
    tools: list[str] = field(default_factory=list)  # "Read(src/config.py)", "Bash(pytest -q) failed"
    ident: str | None = None  # the source's id of the message


@dataclass
class Conversation:
    """A conversation or session from *source*, keyed by the source's own *source_id*."""

    source: str  # claude-code, codex, gemini, chatgpt, claude
    source_id: str
    turns: list[Turn]
    title: str | None = None  # the source's own title, when it has one
    model: str | None = None
    where: str | None = None  # the working folder (Claude Code, Codex)
    branch: str | None = None  # the git branch (Claude Code, Codex)
    # Claude Code: False for a session's lines read from another session's file (copied by a
    # resume, or written there by a /resume inside it)
    own_file: bool = True

    @property
    def first_request(self) -> str | None:
        return next((t.text for t in self.turns if t.role == "user" and t.text.strip()), None)


@dataclass
class Part:
    """One note of a conversation: its *text*, its number, and the turns it holds."""

    number: int
    text: str
    first: int  # 1-based index of its first turn
    last: int


def iso_time(value: object) -> str | None:
    """An ISO 8601 UTC time from an ISO string or epoch seconds (milliseconds when huge); None if unreadable."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 1e12 else value
            return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        if isinstance(value, str) and value:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (ValueError, OverflowError, OSError):
        return None
    return None


def first_line(text: str, limit: int = TITLE_CHARS) -> str:
    """The first non-empty line of *text*, whitespace folded, cut at a word within *limit*."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split()).lstrip("#>*- ").strip()
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0]
    return (cut if len(cut) > limit // 2 else line[: limit - 1]).rstrip(",.;: ") + "…"


_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")  # controls, lone surrogates
TOOLS_SHOWN = 40  # an answer's tool calls past this are counted, not listed


def clean(text: str) -> str:
    """*text* as a note may hold it: control characters dropped, a lone surrogate (half an
    emoji, cut by the writer) replaced."""
    return _UNWRITABLE.sub(lambda m: "\ufffd" if m.group(0) >= "\ud800" else "", text)


def one_line_id(ident: str | None) -> str:
    """*ident* when it can go into a header line and read back (short, printable), else ""."""
    return ident if isinstance(ident, str) and 0 < len(ident) <= 200 and ident.isprintable() else ""


_FAILED = " failed"


def mark_failed(tools: list[str], index: int) -> None:
    """Mark the call at *index* as failed, once: a call that failed a thousand times is one
    line, and marking it again costs nothing (appending each time copied the line each time)."""
    if not tools[index].endswith(_FAILED):
        tools[index] += _FAILED


def _clip(text: str, limit: int = TEXT_CHARS) -> str:
    text = clean(text).strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[… {len(text) - limit:,} more characters not imported]"


def _stamp(at: str | None) -> str:
    return f" · {at[:16].replace('T', ' ')} UTC" if at else ""


_TURN_STAMP = re.compile(r"^\*\*(\d+)\. (?:user|assistant)\*\* · (\d{4}-\d\d-\d\d \d\d:\d\d) UTC$", re.MULTILINE)


def last_turn_minute(text: str, number: int | None = None) -> str | None:
    """The minute turn *number* of a part was written in (``YYYY-MM-DDTHH:MM``, UTC), read from
    its line as :func:`conversation_parts` writes it (the first such line: the turn's own text,
    after it, may quote one); without *number*, or when that turn's line shows none, the latest
    of them all. None when the part shows no time."""
    stamps = [(int(m.group(1)), m.group(2)) for m in _TURN_STAMP.finditer(text)]
    exact = [at for n, at in stamps if n == number]
    found = exact[0] if exact else max((at for _, at in stamps), default=None)
    return found.replace(" ", "T") if found else None


def _turn_block(turn: Turn, number: int) -> str:
    lines = [f"**{number}. {turn.role}**{_stamp(turn.at)}"]
    if turn.text.strip():
        lines.append(_clip(turn.text))
    if turn.tools:
        shown = [clean(t) for t in turn.tools[:TOOLS_SHOWN]]
        more = len(turn.tools) - len(shown)
        lines.append("tools: " + " · ".join(shown) + (f" · and {more:,} more" if more > 0 else ""))
    return "\n".join(lines)


def _title(conv: Conversation) -> str:
    request = conv.first_request
    title = first_line(clean(request)) if request else first_line(clean(conv.title or ""))
    return title or f"{conv.source} conversation {conv.source_id[:12]}"


def _opening(conv: Conversation, turns: list[Turn]) -> str:
    times = [t.at for t in turns if t.at]
    span = ""
    if times:
        start, end = min(times)[:16].replace("T", " "), max(times)[:16].replace("T", " ")
        span = f" of {start}" + ("" if end == start else f" to {end[11:] if end[:10] == start[:10] else end}") + " UTC"
    requests = sum(1 for t in turns if t.role == "user")
    label = {
        "claude-code": "Claude Code session", "chatgpt": "ChatGPT conversation", "claude": "Claude conversation",
        "codex": "Codex CLI session", "gemini": "Gemini CLI session",
    }  # fmt: skip
    line = f"{label.get(conv.source, conv.source + ' conversation')}{span}: {requests} request{'s' * (requests != 1)}"
    if conv.where:
        line += f", in {first_line(clean(conv.where), 300)}"
        line += f" (branch {first_line(clean(conv.branch), 100)})" if conv.branch else ""
    if conv.model:
        line += f", model {first_line(clean(conv.model), LIMITS['model'])}"
    return line + "."


def conversation_parts(
    conv: Conversation, *, start: int = 0, first_part: int = 1, builds_on: str | None = None,
    part_bytes: int = PART_BYTES, part_id: object = None,
) -> list[Part]:  # fmt: skip
    """The notes for ``conv.turns[start:]``, numbered from *first_part*; part *n* > 1 builds on
    the one before (*builds_on* for the first of them; *part_id(n)* names the rest)."""
    turns = conv.turns[start:]
    blocks = [_turn_block(t, start + i + 1) for i, t in enumerate(turns)]
    groups: list[tuple[int, int]] = []  # [first, end) indexes into turns
    size, begin = 0, 0
    for i, block in enumerate(blocks):
        cost = len(block.encode("utf-8")) + 2
        if i > begin and size + cost > part_bytes:
            groups.append((begin, i))
            begin, size = i, 0
        size += cost
    if turns:
        groups.append((begin, len(turns)))
    title = _title(conv)
    parts = []
    previous = builds_on
    for offset, (lo, hi) in enumerate(groups):
        number = first_part + offset
        chunk = turns[lo:hi]
        head_title = title if number == 1 else f"{first_line(title, TITLE_CHARS - 10)} (part {number})"
        summary = first_line(clean(conv.title), 200) if conv.title and number == 1 else None
        model = first_line(clean(conv.model), LIMITS["model"]) if conv.model else None
        body = _opening(conv, chunk) + "\n\n" + "\n\n".join(blocks[lo:hi]) + "\n"
        text = compose_note(
            body,
            title=head_title[: LIMITS["title"]],
            kind="conversation",
            tags=["imported", conv.source],
            builds_on=[previous] if previous else [],
            model=model,
            summary=summary,
        )
        extras = {
            "source": conv.source,
            "conversation": conv.source_id,
            "part": str(number),
            "messages": f"{start + lo + 1}-{start + hi}",
            "last_message": one_line_id(chunk[-1].ident),
            "started": next((t.at for t in chunk if t.at), None) or "",
        }
        text = _with_extras(text, extras)
        text = _with_extras(text, {DIGEST_KEY: _digest(text)})
        parts.append(Part(number, text, start + lo + 1, start + hi))
        previous = part_id(number) if callable(part_id) else None
    return parts


DIGEST_KEY = "import_digest"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _split_digest(text: str) -> tuple[str, str | None]:
    """*text* without its digest line, and the digest (None when it has no such last header line)."""
    head, sep, body = text.partition("\n---\n")
    before, mark, digest = head.rpartition(f"\n{DIGEST_KEY}: ")
    if not mark or not sep or not re.fullmatch('"[0-9a-f]{24}"', digest):
        return text, None
    return before + sep + body, digest[1:-1]


def import_digest(text: str) -> str | None:
    """The digest :func:`conversation_parts` wrote into a part's header (None when there is none)."""
    return _split_digest(text)[1]


def as_imported(text: str) -> bool:
    """True when *text* is a part exactly as :func:`conversation_parts` wrote it: its digest
    line is there and matches the rest (a tag, a summary or an edit by anyone makes it False)."""
    rest, digest = _split_digest(text)
    return digest is not None and _digest(rest) == digest


def _with_extras(text: str, extras: dict[str, str]) -> str:
    """*text* (a composed note) with *extras* as more header lines, before its closing line."""
    head, sep, body = text.partition("\n---\n")
    lines = "".join(f"\n{key}: {quote_value(value)}" for key, value in extras.items() if value)
    return head + lines + sep + body
