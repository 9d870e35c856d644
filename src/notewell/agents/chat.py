"""What the services need from a chat model: messages in, a reply (text or tool calls) out.

Messages are OpenAI-style dicts (``{"role": "user", "content": "..."}``; an assistant
message may carry ``tool_calls``; a ``tool`` message answers one by ``tool_call_id``), so any
OpenAI-compatible server can stand behind it. The HTTP client lives with the interfaces
(``notewell.interfaces.openai_chat``); services only see this protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["ChatModel", "ChatReply", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str

    def parsed(self) -> dict[str, Any]:
        """The arguments as a dict; ValueError when the model wrote something else."""
        data = json.loads(self.arguments or "{}")
        if not isinstance(data, dict):
            raise ValueError("the arguments are not a JSON object")
        return data

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ChatReply:
    """The model's answer: text, tool calls, or both; ``usage`` as the server reported it."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""

    def to_message(self) -> dict[str, Any]:
        """The reply as the assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return message


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. Implementations raise ``UnavailableError`` when the model cannot answer."""

    model: str

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatReply: ...
