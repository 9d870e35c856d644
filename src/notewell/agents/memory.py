"""A chat agent's conversation memory: a sliding window of recent rounds plus a running summary.

``ConversationMemory`` holds OpenAI-style messages. Once they grow past a trigger (characters,
or tokens when ``trigger_tokens`` is set), ``maybe_compress()`` folds every round but the last
``keep_rounds`` into one system message right after the system prompt::

    [0]  system prompt                          kept forever
    [1]  "[Conversation summary]\\n..."         the older rounds, summarized
    [2:] the last keep_rounds rounds, whole

A round starts at a user message. The cut is made only at a round start, and never at a user
message that sits between an assistant's tool call and that call's result, so the model never
sees a tool result without the call it answers.

Summaries come from a pluggable ``Summarizer``: ``ExtractiveSummarizer`` (offline, deterministic)
or ``LLMSummarizer`` (asks a ``ChatModel``). When the model is unavailable the memory falls back
to the extractive summary and says so on the returned ``CompressionEvent``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidArgumentError, UnavailableError
from ..model.ids import NOTE_ID_RE
from ..model.token_count import TokenCounter, default_counter
from .chat import ChatModel

__all__ = [
    "SUMMARY_PREFIX",
    "CompressionEvent",
    "ConversationMemory",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "Summarizer",
]

SUMMARY_PREFIX = "[Conversation summary]"
_ROLES = ("system", "user", "assistant", "tool")
_NOTES_LABEL = "Notes involved:"
_OMITTED = "- (earlier exchanges omitted)"
# Bounded on both sides so that a longer token of [0-9a-z] is not read as an id.
_NOTE_ID = re.compile(rf"(?<![0-9a-z_]){NOTE_ID_RE.pattern}(?![0-9a-z])")
# ASCII names, so that a file name written inside Chinese text ("为go-tips.md添加") is still found...
_FILE = re.compile(r"(?<![\w./-])\w[\w./-]*\.md\b", re.ASCII)
# ...and names in other scripts when they are quoted or bracketed.
_QUOTED_FILE = re.compile(r"[`\"'“「《]([^`\"'”」》\n]{1,80}?\.md)[`\"'”」》]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")


@runtime_checkable
class Summarizer(Protocol):
    """Turns the messages being folded (and the summary they extend) into summary text."""

    name: str

    def summarize(self, messages: list[dict[str, Any]], previous: str | None) -> str:
        """The new summary: *previous* (the last summary's text, if any) plus *messages*."""
        ...


@dataclass(frozen=True)
class CompressionEvent:
    """What one compression did: sizes before and after, and the summary that replaced the old rounds."""

    before_messages: int
    before_chars: int
    before_tokens: int
    after_messages: int
    after_chars: int
    after_tokens: int
    rounds_folded: int
    messages_folded: int
    summary: str
    summary_preview: str
    summarizer: str
    fallback_reason: str | None = None


_ASKED, _TOOLS, _ANSWER, _EARLIER = "User asked: ", "tools: ", "answer: ", "- Earlier, asked: "
_FOLDED_MIN = 10  # characters of each question in a folded line, at the least
_ROUNDS_BEFORE = re.compile(r"\((\d+) rounds before\)")
_RECENT_DETAIL = 3  # the newest rounds, told briefly only when folding the older ones is not enough


def _brief(line: str, level: int) -> str:
    """A round line told more briefly at each *level*: 1 the answer's sentence and the tools'
    arguments shorter, 2 the tools by name and no answer, 3 the question alone, clipped."""
    if line.startswith(_EARLIER):
        return line  # folded already: the folding step shares its room out again
    if level == 0 or not line.startswith("- " + _ASKED):
        return line if level < 3 else _clip(line, 60)
    parts = line[2:].split(" | ")
    question = parts[0].removeprefix(_ASKED)
    tools = next((p.removeprefix(_TOOLS) for p in parts[1:] if p.startswith(_TOOLS)), "")
    answer = next((p.removeprefix(_ANSWER) for p in parts[1:] if p.startswith(_ANSWER)), "")
    if level >= 3:
        return "- " + _ASKED + _clip(question, 48)
    names = "; ".join(dict.fromkeys(c.split("(", 1)[0] for c in tools.split("; ") if c)) if level == 2 else tools
    out = [_ASKED + _clip(question, 80 if level == 1 else 60)]
    if names:
        out.append(_TOOLS + _clip(names, 80 if level == 1 else 48))
    if answer and level == 1:
        out.append(_ANSWER + _clip(answer, 80))
    return "- " + " | ".join(out)


def _question_of(line: str) -> str:
    """What a round line (or a folded one) says was asked."""
    if line.startswith(_EARLIER):
        return line.removeprefix(_EARLIER)
    return line[2:].split(" | ")[0].removeprefix(_ASKED) if line.startswith("- ") else line


def _joined_size(rows: list[str]) -> int:
    return len("\n".join(rows))


def _fit_rounds(lines: list[str], budget: int) -> list[str]:
    """*lines* (oldest first) within *budget* characters, every round still represented: the
    older rounds are told more briefly first and then folded into one line of their questions;
    the newest _RECENT_DETAIL rounds are told briefly only when that is not enough."""

    rows = list(lines)
    total = _joined_size(rows)  # kept up to date line by line: joining every time was quadratic
    older = max(len(rows) - _RECENT_DETAIL, 0)
    for span in (range(older), range(len(rows))):  # the older rounds first, then all of them
        for level in (1, 2, 3):
            for k in span:
                if total <= budget:
                    return rows
                brief = _brief(rows[k], level)
                total += len(brief) - len(rows[k])
                rows[k] = brief
        folded = _fold(rows, budget, upto=len(span))
        if folded is not None:
            return folded
    return _fold(rows, budget, upto=len(rows), last_resort=True) or [_clip(rows[0], budget)]


def _fold(rows: list[str], budget: int, *, upto: int, last_resort: bool = False) -> list[str] | None:
    """*rows* with the fewest of the first *upto* folded into one line of their questions that
    fits *budget* (a line folded by an earlier summary is taken apart again, so that its rounds
    share the room with the new ones); None when none does. As a *last_resort*, the newest
    questions that fit and how many came before."""

    if _joined_size(rows) <= budget:
        return rows
    # What the rows after each point take (their lengths and the newlines between them).
    after = [0] * (len(rows) + 1)
    for k in range(len(rows) - 1, -1, -1):
        after[k] = len(rows[k]) + (after[k + 1] + 1 if k + 1 < len(rows) else 0)
    asked: list[str] = []
    uncounted = 0  # rounds an earlier summary could only count
    for taken in range(1, upto + 1):
        for item in _question_of(rows[taken - 1]).split("; "):
            counted = _ROUNDS_BEFORE.fullmatch(item)
            if counted:
                uncounted += int(counted.group(1))
            else:
                asked.append(item)
        lead = f"({uncounted} rounds before); " if uncounted else ""
        room = budget - after[taken] - len(_EARLIER) - len(lead) - (1 if taken < len(rows) else 0)
        each = room // max(len(asked), 1) - 2
        if (taken > 1 or rows[0].startswith(_EARLIER)) and each >= _FOLDED_MIN:
            return [_EARLIER + lead + "; ".join(_clip(q, each) for q in asked), *rows[taken:]]
    if not last_resort or not asked:
        return None
    keep = max(1, (budget - len(_EARLIER) - 24) // (_FOLDED_MIN + 2))
    before = uncounted + max(len(asked) - keep, 0)
    kept = "; ".join(_clip(q, _FOLDED_MIN) for q in asked[-keep:])
    return [_clip(_EARLIER + (f"({before} rounds before); " if before else "") + kept, budget)]


def _clip(text: str, limit: int) -> str:
    """*text* on one line, cut at a word boundary near *limit* characters, with "…" when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space > limit // 2:  # text without spaces (Chinese) is cut where the limit falls
        cut = cut[:space]
    return cut.rstrip(" ,;:…") + "…"  # a text clipped before is not marked twice


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = _SENTENCE_END.search(flat)
    return flat[: match.start()].strip() if match else flat


def _content(message: Mapping[str, Any]) -> str:
    return message.get("content") or ""


def _calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    return message.get("tool_calls") or []


def _parsed_arguments(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return None


def _render_call(call: Mapping[str, Any], value_chars: int = 40, max_args: int = 3) -> str:
    """``name(key=value, ...)`` with the call's scalar arguments, for a one-line summary."""
    function = call["function"]
    data = _parsed_arguments(function["arguments"])
    if isinstance(data, dict):
        parts = []
        for key, value in data.items():
            if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
                value = ",".join(str(v) for v in value)
            if isinstance(value, str | int | float | bool):
                parts.append(f"{key}={_clip(str(value), value_chars)}")
        rendered = ", ".join(parts[:max_args])
    else:  # the model wrote something that is not a JSON object: show it as written
        rendered = _clip(function["arguments"], value_chars)
    return f"{function['name']}({rendered})"


def _segments(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """*messages* split before each user message (the first part may have no user message)."""
    out: list[list[dict[str, Any]]] = []
    for message in messages:
        if message.get("role") == "user" or not out:
            out.append([])
        out[-1].append(message)
    return out


def _mentions(texts: Iterable[str]) -> list[str]:
    """Note ids and ``.md`` file names in *texts*, each once, in the order they first appear."""
    seen: dict[str, None] = {}
    for text in texts:
        for m in _NOTE_ID.finditer(text):
            seen.setdefault(m.group(0))
        for m in _FILE.finditer(text):
            seen.setdefault(m.group(0))
        for m in _QUOTED_FILE.finditer(text):
            seen.setdefault(m.group(1).strip())
    return list(seen)


class ExtractiveSummarizer:
    """A summary without a model: per folded round the user's question, the tools called and
    the first sentence of the answer, then every note id and ``.md`` file mentioned.

    Deterministic, and bounded by *max_chars*. Every round stays represented, as the tutorial's
    summary keeps the whole conversation's questions, actions and notes: over the budget, the
    oldest rounds are told more briefly first (the answer's sentence shorter, then the tools by
    name, then the question alone, clipped), and past that the oldest are folded together into
    one line of their questions. The line of notes involved stays (it is what lets the agent find
    its way back to the material).
    """

    name = "extractive"

    def __init__(self, max_chars: int = 1500, *, question_chars: int = 200, answer_chars: int = 200) -> None:
        if max_chars < 200:
            raise InvalidArgumentError(f"max_chars must be at least 200, not {max_chars}")
        if question_chars < 20 or answer_chars < 20:
            raise InvalidArgumentError("question_chars and answer_chars must be at least 20")
        self.max_chars = max_chars
        self.question_chars = question_chars
        self.answer_chars = answer_chars

    def summarize(self, messages: list[dict[str, Any]], previous: str | None) -> str:
        """Round lines of *previous* and *messages*, then the notes involved, within max_chars."""
        old_lines, omitted = self._previous_lines(previous)
        lines = old_lines + [line for segment in _segments(messages) if (line := self._round_line(segment))]
        notes = self._notes_line(previous, messages)
        budget = self.max_chars - (len(notes) + 1 if notes else 0) - (len(_OMITTED) + 1 if omitted else 0)
        body = ([_OMITTED] if omitted else []) + _fit_rounds(lines, max(budget, 20)) + ([notes] if notes else [])
        return "\n".join(body) if body else "- (no earlier exchanges)"

    def _previous_lines(self, previous: str | None) -> tuple[list[str], bool]:
        lines, omitted = [], False
        for line in (previous or "").splitlines():
            line = line.strip()
            if not line or line == SUMMARY_PREFIX or line.startswith(_NOTES_LABEL):
                continue  # the notes line is rebuilt from scratch, with the old ids in it
            if line == _OMITTED:
                omitted = True
                continue
            lines.append(line if line.startswith("- ") else f"- {line}")
        return lines, omitted

    def _round_line(self, segment: list[dict[str, Any]]) -> str:
        parts = []
        if segment[0].get("role") == "user":
            parts.append(f"User asked: {_clip(_first_line(_content(segment[0])), self.question_chars) or '(empty)'}")
        calls = list(dict.fromkeys(_render_call(c) for m in segment for c in _calls(m)))
        if calls:
            parts.append("tools: " + "; ".join(calls))
        answers = [m for m in segment if m.get("role") == "assistant" and _content(m).strip()]
        if answers:  # the last one is the answer the user saw; earlier ones are thoughts between calls
            parts.append(f"answer: {_clip(_first_sentence(_content(answers[-1])), self.answer_chars)}")
        return "- " + " | ".join(parts) if parts else ""

    def _notes_line(self, previous: str | None, messages: list[dict[str, Any]]) -> str:
        # Ids the user and assistant wrote or the tools were called with come before the ones
        # that only turned up in tool results, so that those are the first to go when cut.
        spoken = [previous or ""]
        for m in messages:
            if m.get("role") != "tool":
                spoken.append(_content(m))
            for call in _calls(m):
                spoken.append(call["function"]["arguments"])
                data = _parsed_arguments(call["function"]["arguments"])
                if isinstance(data, dict):
                    spoken.extend(v for v in data.values() if isinstance(v, str) and v.endswith(".md"))
        heard = [_content(m) for m in messages if m.get("role") == "tool"]
        names = _mentions(spoken + heard)
        if not names:
            return ""
        limit = self.max_chars // 2
        shown: list[str] = []
        for name in names:
            if len(_NOTES_LABEL) + 20 + len(", ".join([*shown, name])) > limit:
                break
            shown.append(name)
        more = f" (+{len(names) - len(shown)} more)" if len(shown) < len(names) else ""
        return f"{_NOTES_LABEL} {', '.join(shown)}{more}"


_LLM_INSTRUCTIONS = (
    "You maintain the running summary of a conversation between a user and an assistant that works"
    " with the user's notes. Merge the previous summary (if any) and the new part of the conversation"
    " into one concise summary that keeps:\n"
    "1. the questions the user asked;\n"
    "2. the key actions the assistant took (tools called, notes changed) and the conclusions it gave;\n"
    "3. every note and file involved, by id and by name (e.g. nte_0123456789, go-tips.md); the"
    " assistant needs them to find its way back.\n"
    "Write in the language the user writes in. Reply with the summary only, no preamble."
)


class LLMSummarizer:
    """A summary written by a chat model from the previous summary and a transcript of the folded messages.

    Raises ``UnavailableError`` when the model cannot answer or answers with nothing, which
    ``ConversationMemory`` takes as the cue to fall back to the extractive summary.
    """

    def __init__(
        self,
        chat: ChatModel,
        max_tokens: int = 400,
        *,
        temperature: float | None = None,
        result_chars: int = 500,
        message_chars: int = 2000,
    ) -> None:
        if max_tokens < 1:
            raise InvalidArgumentError(f"max_tokens must be at least 1, not {max_tokens}")
        if result_chars < 20 or message_chars < 20:
            raise InvalidArgumentError("result_chars and message_chars must be at least 20")
        self.chat = chat
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.result_chars = result_chars
        self.message_chars = message_chars
        self.name = f"llm:{chat.model}" if getattr(chat, "model", "") else "llm"

    def prompt(self, messages: list[dict[str, Any]], previous: str | None) -> list[dict[str, Any]]:
        """The messages sent to the model for *messages* and *previous*."""
        parts = []
        if previous and previous.strip():
            parts.append(f"Previous summary:\n{previous.strip()}")
        parts.append(f"New part of the conversation:\n{self.transcript(messages)}")
        parts.append("Write the updated summary.")
        return [
            {"role": "system", "content": _LLM_INSTRUCTIONS},
            {"role": "user", "content": "\n\n".join(parts)},
        ]

    def transcript(self, messages: list[dict[str, Any]]) -> str:
        """*messages* as plain lines: tool calls as ``name(arguments)``, results cut to result_chars."""
        tool_names = {c["id"]: c["function"]["name"] for m in messages for c in _calls(m)}
        lines = []
        for m in messages:
            role, text = m.get("role"), _content(m).strip()
            if role == "tool":
                name = tool_names.get(m.get("tool_call_id", ""), "tool")
                lines.append(f"Tool result ({name}): {_clip(text, self.result_chars)}")
                continue
            if text:
                label = {"user": "User", "assistant": "Assistant", "system": "System"}[role]
                lines.append(f"{label}: {_clip(text, self.message_chars)}")
            for call in _calls(m):
                arguments = " ".join(call["function"]["arguments"].split())
                lines.append(f"Assistant called {call['function']['name']}({_clip(arguments, self.result_chars)})")
        return "\n".join(lines)

    def summarize(self, messages: list[dict[str, Any]], previous: str | None) -> str:
        """The model's summary, stripped; ``UnavailableError`` when it gives none."""
        reply = self.chat.complete(
            self.prompt(messages, previous), max_tokens=self.max_tokens, temperature=self.temperature
        )
        text = (reply.content or "").strip()
        if not text:
            raise UnavailableError("the model returned an empty summary")
        return text


def _validated(message: object) -> dict[str, Any]:
    """A deep copy of *message* once it has the shape of an OpenAI chat message."""
    if not isinstance(message, Mapping):
        raise InvalidArgumentError(f"a message must be a dict, not {type(message).__name__}")
    role = message.get("role")
    if role not in _ROLES:
        raise InvalidArgumentError(f"unknown message role {role!r} (expected system, user, assistant or tool)")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidArgumentError(f"message content must be a string or None, not {type(content).__name__}")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidArgumentError("a tool message needs a tool_call_id")
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            raise InvalidArgumentError(f"only assistant messages carry tool_calls, not {role} messages")
        if not isinstance(calls, list):
            raise InvalidArgumentError("tool_calls must be a list")
        for i, call in enumerate(calls):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not (
                isinstance(function, Mapping)
                and isinstance(call.get("id"), str)
                and isinstance(function.get("name"), str)
                and isinstance(function.get("arguments"), str)
            ):
                raise InvalidArgumentError(
                    f"tool_calls[{i}] needs a string id and a function with a name and string arguments"
                )
    return copy.deepcopy(dict(message))


def _round_starts(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the user messages where a round may start: not between a tool call and its result."""
    blocked = [0] * (len(messages) + 1)
    call_at: dict[str, int] = {}
    for j, m in enumerate(messages):
        for call in _calls(m):
            call_at[call["id"]] = j
        if m.get("role") == "tool" and (k := call_at.get(m["tool_call_id"])) is not None:
            blocked[k + 1] += 1  # no cut in (k, j]: it would part the call from its result
            blocked[j + 1] -= 1
    starts, open_spans = [], 0
    for i, m in enumerate(messages):
        open_spans += blocked[i]
        if m.get("role") == "user" and open_spans == 0:
            starts.append(i)
    return starts


class ConversationMemory:
    """The messages of one conversation, compressed into a summary plus the last rounds on demand.

    *system_prompt* stays at index 0 for good. Compression triggers at *trigger_chars*
    characters (content plus tool-call arguments), or, when *trigger_tokens* is set, at that
    many tokens as *counter* counts them instead (default: ``default_counter()``). The last
    *keep_rounds* rounds are always kept whole; at least one, so that the round in progress
    (perhaps waiting for a tool result) is never folded.
    """

    def __init__(
        self,
        system_prompt: str | None = None,
        *,
        summarizer: Summarizer | None = None,
        trigger_chars: int = 3000,
        trigger_tokens: int | None = None,
        keep_rounds: int = 3,
        counter: TokenCounter | None = None,
    ) -> None:
        if trigger_chars < 1:
            raise InvalidArgumentError(f"trigger_chars must be at least 1, not {trigger_chars}")
        if trigger_tokens is not None and trigger_tokens < 1:
            raise InvalidArgumentError(f"trigger_tokens must be at least 1, not {trigger_tokens}")
        if keep_rounds < 1:
            raise InvalidArgumentError(f"keep_rounds must be at least 1, not {keep_rounds}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise InvalidArgumentError(f"system_prompt must be a string, not {type(system_prompt).__name__}")
        self.trigger_chars = trigger_chars
        self.trigger_tokens = trigger_tokens
        self.keep_rounds = keep_rounds
        self._fallback = ExtractiveSummarizer()
        self.summarizer: Summarizer = summarizer if summarizer is not None else self._fallback
        self._counter = counter
        # Leading system messages (the prompt) stay put; the summary goes right after them.
        self._head: list[dict[str, Any]] = []
        if system_prompt is not None:
            self._head.append({"role": "system", "content": system_prompt})
        self._summary: str | None = None
        self._body: list[dict[str, Any]] = []

    @property
    def counter(self) -> TokenCounter:
        """The token counter; the default one is resolved on first use (loading a BPE takes a moment)."""
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    @property
    def system_prompt(self) -> str | None:
        """The system prompt given at construction (or the first leading system message)."""
        return _content(self._head[0]) if self._head else None

    @property
    def summary(self) -> str | None:
        """The current summary text (without the prefix), None before the first compression."""
        return self._summary

    def append(self, message: Mapping[str, Any]) -> None:
        """Add a copy of *message*; ``InvalidArgumentError`` when it is not a chat message."""
        self._add(_validated(message))

    def extend(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Add copies of *messages*; nothing is added when one of them is invalid."""
        checked = [_validated(m) for m in messages]
        for message in checked:
            self._add(message)

    def _add(self, message: dict[str, Any]) -> None:
        if not self._body and self._summary is None and message["role"] == "system":
            text = _content(message)
            if text.startswith(SUMMARY_PREFIX):  # restoring a saved conversation: it is the summary
                self._summary = text[len(SUMMARY_PREFIX) :].strip()
            else:
                self._head.append(message)
            return
        self._body.append(message)

    def clear(self) -> None:
        """Forget the conversation and its summary; the system prompt stays."""
        self._summary = None
        self._body = []

    def mark(self) -> int:
        """A point to :meth:`rollback` to (the number of messages after the summary)."""
        return len(self._body)

    def rollback(self, mark: int) -> None:
        """Forget the messages appended since :meth:`mark` (a turn the model could not finish)."""
        if not 0 <= mark <= len(self._body):
            raise InvalidArgumentError(f"no such mark: {mark}")
        del self._body[mark:]

    def get_messages(self) -> list[dict[str, Any]]:
        """The messages to send, as copies: prompt, summary (if any), then the recent messages."""
        return copy.deepcopy(self._messages())

    def __len__(self) -> int:
        return len(self._head) + (self._summary is not None) + len(self._body)

    def total_chars(self) -> int:
        """Characters of content and tool-call arguments over all messages (what trigger_chars counts)."""
        return sum(self._chars(m) for m in self._messages())

    def total_tokens(self) -> int:
        """Tokens of content and tool-call arguments over all messages (what trigger_tokens counts)."""
        return sum(self._tokens(m) for m in self._messages())

    def rounds(self) -> list[tuple[int, int]]:
        """Each round as a ``(start, end)`` range of ``get_messages()`` indexes, oldest first."""
        offset = len(self) - len(self._body)
        starts = _round_starts(self._body)
        ends = starts[1:] + [len(self._body)] if starts else []
        return [(offset + s, offset + e) for s, e in zip(starts, ends, strict=True)]

    def over_trigger(self) -> bool:
        """True when the conversation has reached the size at which it should be compressed."""
        if self.trigger_tokens is not None:
            return self.total_tokens() >= self.trigger_tokens
        return self.total_chars() >= self.trigger_chars

    def maybe_compress(self) -> CompressionEvent | None:
        """Fold all but the last keep_rounds rounds into the summary when over the trigger.

        None when under the trigger or when there are no more than keep_rounds rounds. A model
        that is down does not make this fail: the extractive summary stands in.
        """
        if not self.over_trigger():
            return None
        starts = _round_starts(self._body)
        if len(starts) <= self.keep_rounds:
            return None
        cut = starts[-self.keep_rounds]
        folded = self._body[:cut]
        before_messages, before_chars, before_tokens = len(self), self.total_chars(), self.total_tokens()
        text, used, reason = self._summarize(folded)
        self._summary = text
        self._body = self._body[cut:]
        preview = _clip(text, 120)
        return CompressionEvent(
            before_messages=before_messages,
            before_chars=before_chars,
            before_tokens=before_tokens,
            after_messages=len(self),
            after_chars=self.total_chars(),
            after_tokens=self.total_tokens(),
            rounds_folded=len(starts) - self.keep_rounds,
            messages_folded=len(folded),
            summary=text,
            summary_preview=preview,
            summarizer=used,
            fallback_reason=reason,
        )

    def _summarize(self, folded: list[dict[str, Any]]) -> tuple[str, str, str | None]:
        """The summary text, the name of the summarizer that wrote it, and why it fell back (if it did)."""
        if self.summarizer is not self._fallback:
            try:
                text = self.summarizer.summarize(copy.deepcopy(folded), self._summary)
                if isinstance(text, str) and text.strip():
                    return text.strip(), self.summarizer.name, None
                reason = f"{self.summarizer.name} returned an empty summary"
            except UnavailableError as exc:
                reason = f"{self.summarizer.name}: {exc.message}"
            except Exception as exc:  # a plug-in summarizer's own bug must not cost the conversation
                reason = f"{getattr(self.summarizer, 'name', 'summarizer')} failed: {type(exc).__name__}: {exc}"
        else:
            reason = None
        text = self._fallback.summarize(copy.deepcopy(folded), self._summary)
        return text, self._fallback.name, reason

    def _messages(self) -> list[dict[str, Any]]:
        summary = [] if self._summary is None else [self._summary_message(self._summary)]
        return self._head + summary + self._body

    @staticmethod
    def _summary_message(text: str) -> dict[str, Any]:
        return {"role": "system", "content": f"{SUMMARY_PREFIX}\n{text}"}

    @staticmethod
    def _chars(message: Mapping[str, Any]) -> int:
        return len(_content(message)) + sum(len(c["function"]["arguments"]) for c in _calls(message))

    def _tokens(self, message: Mapping[str, Any]) -> int:
        count = self.counter
        return count(_content(message)) + sum(count(c["function"]["arguments"]) for c in _calls(message))
