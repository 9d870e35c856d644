"""The chapter's ContextBuilder names on notewell's builder: ``from notewell.compat import
ContextBuilder, ContextConfig, ContextPacket``.

The NoteTool chapter builds its prompts with hello-agents' classes::

    ContextPacket(content=..., timestamp=datetime, token_count=..., relevance_score=0.75, metadata={...})
    ContextBuilder(memory_tool=..., rag_tool=..., config=ContextConfig(max_tokens=4000))
    context = builder.build(user_query=..., conversation_history=[...], system_instructions=...,
                            custom_packets=[...])

These take those names and pack with :class:`notewell.agents.context.ContextBuilder`: every token
sent is counted (the packets' own ``token_count`` estimates are kept but not trusted), a note
packet is cited by its id, open blockers and actions come first, and ``build`` returns the
prompt text as the chapter's code expects (the whole :class:`Context` is ``builder.last``).
A memory tool and a RAG tool may be None or any object with the chapter's methods
(``memory_tool.execute("search", query=..., limit=...)``, ``rag_tool.run({"action": "search", ...})``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...agents.context import Context
from ...agents.context import ContextBuilder as _Builder
from ...agents.context import ContextConfig as _Config
from ...agents.context import ContextPacket as _Packet
from ...errors import InvalidArgumentError
from ...services.contract import NoteStore

__all__ = ["ContextBuilder", "ContextConfig", "ContextPacket"]

_OPEN_KINDS = ("blocker", "action")
# How the original tools open an answer that holds nothing (not found, or their own error);
# a result that only mentions such a word ("Go 的错误处理") is material like any other.
_NOTHING_FOUND = ("未找到", "❌", "📝 未找到", "⚠️", "错误:", "错误：")


class ContextPacket(_Packet):
    """A packet by the chapter's names: ``relevance_score`` is the relevance, ``metadata``'s
    ``note_type`` the kind and ``note_id`` the source cited; notewell's own names work too."""

    def __init__(
        self,
        content: str,
        timestamp: str | datetime | None = None,
        metadata: dict[str, Any] | None = None,
        token_count: int = 0,
        relevance_score: float | None = None,
        **fields: Any,
    ) -> None:
        meta = dict(metadata or {})
        kind = fields.pop("kind", None) or meta.get("note_type") or meta.get("type") or "other"
        source = fields.pop("source", None) or meta.get("note_id")
        relevance = relevance_score if relevance_score is not None else fields.pop("relevance", None)
        fields.pop("relevance", None)
        if "section" not in fields:
            fields["section"] = "open" if kind in _OPEN_KINDS else "notes" if source else "evidence"
        super().__init__(
            content=content, kind=kind, source=source, timestamp=timestamp, relevance=relevance, metadata=meta, **fields
        )
        self.token_count = token_count  # the caller's estimate: the builder counts for itself

    @property
    def relevance_score(self) -> float | None:
        return self.relevance


@dataclass
class ContextConfig(_Config):
    """notewell's settings plus the chapter's: ``reserve_ratio`` (the share of ``max_tokens`` kept
    for the answer, instead of ``reserve_tokens``; notewell's 600 is the original's 0.15 of 4,000)
    and ``min_relevance`` (packets scored lower are left out; the original's default 0.3)."""

    reserve_ratio: float | None = None
    min_relevance: float = 0.3

    def __post_init__(self) -> None:
        if self.reserve_ratio is not None:
            if not 0 <= self.reserve_ratio < 1:
                raise InvalidArgumentError(
                    f"reserve_ratio is a share of max_tokens in [0, 1), got {self.reserve_ratio}"
                )
            self.reserve_tokens = int(self.max_tokens * self.reserve_ratio)
        if not 0 <= self.min_relevance <= 1:
            raise InvalidArgumentError(f"min_relevance is in [0, 1], got {self.min_relevance}")
        self.check()


class ContextBuilder:
    """hello-agents' ContextBuilder by the chapter's names, on notewell's builder (a notewell
    *store*, if given, adds its open blockers and actions and the notes found for the question)."""

    def __init__(
        self,
        memory_tool: Any = None,
        rag_tool: Any = None,
        config: _Config | None = None,
        *,
        store: NoteStore | None = None,
    ) -> None:
        self.memory_tool = memory_tool
        self.rag_tool = rag_tool
        self.config = config or ContextConfig()
        self._builder = _Builder(store, self.config)
        self.last: Context | None = None

    def build(
        self,
        user_query: str,
        conversation_history: Sequence[Any] | None = None,
        system_instructions: str | None = None,
        custom_packets: Sequence[_Packet] | None = None,
        additional_packets: Sequence[_Packet] | None = None,
    ) -> str:
        """The prompt for *user_query* within the budget, as text (the chapter's code hands it
        to the model as it is). *additional_packets* is the original package's name for *custom_packets*."""
        warnings: list[str] = []
        floor = getattr(self.config, "min_relevance", 0.0)
        packets = [
            p
            for p in [*(custom_packets or []), *(additional_packets or [])]
            if not isinstance(p, _Packet) or p.relevance is None or p.relevance >= floor
        ]
        packets += self._from_tools(user_query, warnings)
        history = [_message(m) for m in conversation_history or []]
        context = self._builder.build(user_query, history, system_instructions, packets)
        context.warnings[:0] = warnings
        self.last = context
        return context.text

    def _from_tools(self, query: str, warnings: list[str]) -> list[_Packet]:
        out: list[_Packet] = []
        for name, tool, ask in (
            ("memory", self.memory_tool, _ask_memory),
            ("knowledge_base", self.rag_tool, _ask_rag),
        ):
            if tool is None:
                continue
            try:
                found = ask(tool, query)
            except Exception as exc:  # another library's tool: any failure is reported, not raised
                warnings.append(f"the {name} tool failed: {type(exc).__name__}: {exc}")
                continue
            if isinstance(found, str) and found.strip() and not found.strip().startswith(_NOTHING_FOUND):
                out.append(_Packet(found.strip(), kind=name, section="evidence", metadata={"type": name}))
        return out


def _ask_memory(tool: Any, query: str) -> Any:
    if hasattr(tool, "execute"):
        return tool.execute("search", query=query, limit=5)
    return tool.run({"action": "search", "query": query, "limit": 5})


def _ask_rag(tool: Any, query: str) -> Any:
    return tool.run({"action": "search", "query": query, "limit": 5})


def _message(message: Any) -> dict[str, Any]:
    """A chat message as notewell's builder takes it: a dict, or an object with ``role`` and
    ``content`` (hello-agents' Message)."""
    if isinstance(message, dict):
        return message
    role, content = getattr(message, "role", None), getattr(message, "content", None)
    if not isinstance(role, str) or not isinstance(content, str):
        raise InvalidArgumentError(
            f"a conversation message has a role and a content, not {type(message).__name__}: "
            "a dict {'role', 'content'} or an object with those attributes"
        )
    return {"role": role, "content": content}
