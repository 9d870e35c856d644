"""What the services need from a chat model: messages in, a reply (text or tool calls) out.

Messages are OpenAI-style dicts (``{"role": "user", "content": "..."}``; an assistant
message may carry ``tool_calls``; a ``tool`` message answers one by ``tool_call_id``), so any
OpenAI-compatible server can stand behind it. The HTTP client lives with the interfaces
(``notewell.adapters.openai_chat``); services only see this protocol.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidArgumentError, UnavailableError

__all__ = ["ChatModel", "ChatReply", "ClientChat", "ToolCall", "completion_body", "reply_from_completion"]


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


_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def completion_body(
    model: str,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """A chat completion request in OpenAI's shape, with only the options given."""
    body: dict[str, Any] = {"model": model, "messages": list(messages)}
    if tools:
        body["tools"] = list(tools)
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def reply_from_completion(answer: dict[str, Any], *, model: str, bad: Callable[[str], Exception]) -> ChatReply:
    """A chat completion in OpenAI's JSON shape as a :class:`ChatReply`; ``bad(why)`` is the
    error raised for one that is not such a completion."""
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad("no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise bad("choices[0] has no message")
    content = _content(message.get("content"))
    calls = message.get("tool_calls") or []
    if isinstance(message.get("function_call"), dict) and not calls:  # the older single-call shape
        calls = [{"function": message["function_call"]}]
    if not isinstance(calls, list):
        raise bad("tool_calls is not a list")
    tool_calls = [_tool_call(call, n, bad) for n, call in enumerate(calls)]
    usage: dict[str, int] = {}
    raw_usage = answer.get("usage")
    if isinstance(raw_usage, dict):
        for key in _USAGE_KEYS:
            value = raw_usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                usage[key] = int(value)
    named = answer.get("model")
    return ChatReply(
        content=content, tool_calls=tool_calls, usage=usage, model=named if isinstance(named, str) and named else model
    )


def _tool_call(call: Any, n: int, bad: Callable[[str], Exception]) -> ToolCall:
    if not isinstance(call, dict):
        raise bad(f"tool call {n} is not an object")
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise bad(f"tool call {n} has no function name")
    arguments = function.get("arguments")
    if arguments is None or arguments == "":
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = call.get("id")
    return ToolCall(id=call_id if isinstance(call_id, str) and call_id else f"call_{n}", name=name, arguments=arguments)


def _content(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": "..."}]
        texts = [part.get("text", "") for part in value if isinstance(part, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return str(value)


class ClientChat:
    """A :class:`ChatModel` over an OpenAI-style client object (``openai.OpenAI()`` or anything
    with ``client.chat.completions.create(model=, messages=, ...)``): the Day-5 tutorial's
    ``ToolContext(client=client, chat_model=...)``."""

    def __init__(self, client: Any, model: str) -> None:
        create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
        if not callable(create):
            raise InvalidArgumentError(
                "the client must offer chat.completions.create(...), as an OpenAI client does;"
                f" got {type(client).__name__}"
            )
        if not isinstance(model, str) or not model.strip():
            raise InvalidArgumentError("name the chat model the client should use (chat_model)")
        self._create, self.model = create, model.strip()
        key = getattr(client, "api_key", None)
        self._key = key if isinstance(key, str) and len(key) >= 8 else None

    def _clean(self, text: str) -> str:
        """*text* without the client's API key, or anything shaped like one, and short."""
        if self._key:
            text = text.replace(self._key, "***")
        text = _KEY_SHAPED.sub("***", " ".join(text.split()))
        return text if len(text) <= 300 else text[:297] + "..."

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatReply:
        body = completion_body(self.model, messages, tools=tools, temperature=temperature, max_tokens=max_tokens)
        try:
            answer = self._create(**body)
        except Exception as exc:  # the client's own errors (network, auth, rate limits): one kind here
            raise UnavailableError(self._clean(f"the chat client failed: {type(exc).__name__}: {exc}")) from None
        if hasattr(answer, "model_dump"):
            answer = answer.model_dump()
        elif hasattr(answer, "to_dict"):
            answer = answer.to_dict()
        if not isinstance(answer, dict):
            raise UnavailableError(f"the chat client answered a {type(answer).__name__}, not a chat completion")
        error = answer.get("error")
        if error:
            said = error.get("message") if isinstance(error, dict) else error
            raise UnavailableError(self._clean(f"the chat model answered an error: {said}"))
        return reply_from_completion(answer, model=self.model, bad=_bad_reply)


# API keys of the common providers (sk-..., sk-proj-..., gsk_..., xai-...), as an error may quote one.
_KEY_SHAPED = re.compile(r"\b(?:sk|pk|rk|gsk|xai)[-_][A-Za-z0-9_-]{8,}")


def _bad_reply(why: str) -> UnavailableError:
    return UnavailableError(f"the chat client did not answer like a chat completion: {why}")
