"""A project assistant that works: the chapter's ProjectAssistant, end to end.

Each turn it builds the context (open blockers and actions, the notes the search engine finds,
the conversation so far) under the token budget, asks the chat model with the note tools
registered, runs the tool calls it makes and gives it their results until it answers, folds old
rounds of the conversation into a summary when the memory grows past its trigger, and, when
asked, records the exchange as a note that builds on the notes the answer cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidArgumentError, NotewellError
from ..model.header import compose_note
from ..model.ids import NOTE_ID_RE
from ..services.contract import NoteStore
from .chat import ChatModel, ChatReply, ToolCall
from .context import Context, ContextBuilder, ContextConfig
from .memory import CompressionEvent, ConversationMemory, LLMSummarizer
from .note_tools import ToolContext, execute_tool, tool_schemas

__all__ = ["ASSISTANT_INSTRUCTIONS", "ProjectAssistant", "Turn", "kind_for"]

ASSISTANT_INSTRUCTIONS = """You are a long-term assistant for the {project} project.
- Answer from the notes and the conversation given to you; deal with open blockers first.
- Cite each note you rely on by its id in brackets, like [nte_...]; say when the notes do not cover the question.
- Give specific next steps.
- You may search and read notes with the tools. Use add_tag or summarize_note only when the user asks
  to tag a note or to save a summary."""

_RESULT_ECHO = 300  # characters of each tool result kept in the Turn for display
_TOOL_FLOOR = 200  # tokens: below this much room, the model is asked to answer, not to call tools


@dataclass
class Turn:
    """What one turn did: the answer, the tool calls, the context sent, any compression."""

    question: str
    answer: str
    tool_calls: list[dict[str, Any]]
    context: Context
    rounds: int  # chat model calls made
    usage: dict[str, int] = field(default_factory=dict)
    compression: CompressionEvent | None = None
    recorded: str | None = None  # the id of the note the exchange was recorded as

    @property
    def cited(self) -> list[str]:
        """The note ids the answer names, in order, once each."""
        return list(dict.fromkeys(NOTE_ID_RE.findall(self.answer)))


def kind_for(question: str) -> str:
    """The type of note an exchange is recorded as, from what the user said (as the chapter did,
    in English and Chinese): a problem is a blocker, a plan an action, else a conclusion."""
    text = question.lower()
    if re.search(
        r"\b(?:problems?|block(?:s|ed|er|ers|ing)?|stuck|errors?|fails?|failing|broken)\b|问题|阻塞|报错|失败", text
    ):
        return "blocker"
    if re.search(r"\b(?:plan|next|todo|to-do|will)\b|计划|下一步|待办", text):
        return "action"
    return "conclusion"


class ProjectAssistant:
    """Retrieve, build the context, ask the model with the note tools, run its calls, remember."""

    def __init__(
        self,
        store: NoteStore,
        chat: ChatModel,
        *,
        project: str = "notes",
        context: ContextConfig | None = None,
        memory: ConversationMemory | None = None,
        author: str | None = "assistant",
        max_tool_rounds: int = 6,
        allow_writes: bool = True,
        tool_tokens: int | None = None,
    ) -> None:
        if max_tool_rounds < 0:
            raise InvalidArgumentError("max_tool_rounds is 0 or more")
        self.store = store
        self.chat = chat
        self.project = project
        context = context or ContextConfig()
        # The notes and the conversation may fill the window only up to what the tool rounds of
        # the turn (results the model asks for) still need; the answer keeps its own reserve.
        self.window = context.max_tokens - context.reserve_tokens
        room = self.window // 4 if tool_tokens is None else tool_tokens
        if not 0 <= room < self.window:
            raise InvalidArgumentError(f"tool_tokens must be from 0 to {self.window - 1}, got {room}")
        self.builder = ContextBuilder(store, replace(context, reserve_tokens=context.reserve_tokens + room))
        self.memory = memory if memory is not None else ConversationMemory(summarizer=LLMSummarizer(chat))
        self.tools = ToolContext(store, chat=chat, author=author, allow_writes=allow_writes)
        self.max_tool_rounds = max_tool_rounds
        self.instructions = ASSISTANT_INSTRUCTIONS.format(project=project)

    def ask(self, question: str, *, record: bool | str = False) -> Turn:
        """One turn. *record*: True records the exchange as a note of the type :func:`kind_for`
        picks; a string records it as that type."""
        if not isinstance(question, str) or not question.strip():
            raise InvalidArgumentError("ask a question")
        tools = tool_schemas()
        context = self.builder.build(
            question,
            conversation_history=self.memory.get_messages(),
            system_instructions=self.instructions,
            tools=tools,
        )
        messages = [dict(m) for m in context.messages]
        mark = self.memory.mark()
        self.memory.append({"role": "user", "content": question})
        calls: list[dict[str, Any]] = []
        usage: dict[str, int] = {}
        rounds = 0
        answer = ""
        window = self.window
        try:
            while True:
                room = window - self.builder.tokens_of(messages, tools)
                offer_tools = rounds < self.max_tool_rounds and room > _TOOL_FLOOR
                reply = self.chat.complete(messages, tools=tools if offer_tools else None)
                rounds += 1
                for key, value in reply.usage.items():
                    usage[key] = usage.get(key, 0) + value
                if not reply.tool_calls or not offer_tools:
                    answer = (reply.content or "").strip()
                    if not answer and reply.tool_calls:
                        answer = "(the model kept asking for tools and gave no answer)"
                    final = {"role": "assistant", "content": reply.content or ""}  # no calls left unanswered
                    messages.append(final)
                    self.memory.append(final)
                    break
                message = self._unique_ids(reply, rounds).to_message()
                messages.append(message)
                self.memory.append(message)
                for call in message["tool_calls"]:
                    name, arguments = call["function"]["name"], call["function"]["arguments"]
                    result = self._fit(execute_tool(name, arguments, self.tools), window, messages, tools)
                    calls.append({"name": name, "arguments": arguments, "result": result[:_RESULT_ECHO]})
                    tool_message = {"role": "tool", "tool_call_id": call["id"], "content": result}
                    messages.append(tool_message)
                    self.memory.append(tool_message)
        except BaseException:
            self.memory.rollback(mark)  # a turn the model did not finish leaves no half exchange behind
            raise
        turn = Turn(question, answer, calls, context, rounds, usage)
        turn.compression = self.memory.maybe_compress()
        if record:
            turn.recorded = self._record(question, turn, record if isinstance(record, str) else kind_for(question))
        return turn

    @staticmethod
    def _unique_ids(reply: ChatReply, rounds: int) -> ChatReply:
        """The reply with tool-call ids unique in the turn (servers repeat call_0 every round)."""
        seen: set[str] = set()
        calls = []
        for n, call in enumerate(reply.tool_calls):
            cid = call.id or f"call_{rounds}_{n}"
            if cid in seen or (call.id.startswith("call_") and call.id[5:].isdigit()):
                cid = f"call_{rounds}_{n}"
            seen.add(cid)
            calls.append(ToolCall(cid, call.name, call.arguments))
        return ChatReply(reply.content, calls, reply.usage, reply.model)

    def _fit(self, result: str, window: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        """*result* clipped to the room left in the window (a long note read whole would not fit)."""
        room = window - self.builder.tokens_of(messages, tools) - _TOOL_FLOOR
        cost = self.builder.count(result)
        if cost <= room:
            return result
        keep = max(0, int(len(result) * max(room, 0) / max(cost, 1)))
        return result[:keep] + f"\n[… clipped: {len(result) - keep} more characters did not fit the context budget]"

    def _record(self, question: str, turn: Turn, kind: str) -> str:
        title = " ".join(question.split())
        title = title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…"
        known = set()
        for note_id in turn.cited:  # builds_on only what exists: a model may invent an id
            try:
                known.add(self.store.get_note(note_id).id)
            except NotewellError:  # an id the model made up, or a note gone: do not link it
                continue
        body = f"## Question\n\n{question.strip()}\n\n## Answer\n\n{turn.answer or '(no answer)'}\n"
        text = compose_note(
            body,
            title=title,
            kind=kind,
            tags=[self.project, "assistant"],
            builds_on=[n for n in turn.cited if n in known],
            model=getattr(self.chat, "model", None) or None,
        )
        return self.store.add_note(text, author=self.tools.author).id
