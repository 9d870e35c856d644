"""A chat model behind any OpenAI-compatible ``POST /v1/chat/completions`` endpoint.

That covers OpenAI itself, Ollama, llama.cpp's server, LM Studio, vLLM, LocalAI and the
hosted routers. It implements ``notewell.agents.chat.ChatModel`` with the standard library
only: a busy or failing server (429, 5xx) is retried with backoff (honouring ``Retry-After``,
bounded); a refused key, an unreachable server or an answer that is not a chat completion
becomes a clear ``UnavailableError``. The API key is sent as ``Authorization: Bearer ...`` and
never appears in an error message or a ``repr``.

Configuration (``chat_from_environment``): ``NOTEWELL_CHAT_URL`` / ``NOTEWELL_CHAT_MODEL`` /
``NOTEWELL_CHAT_KEY``, else ``OPENAI_BASE_URL`` / ``OPENAI_MODEL`` / ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..agents.chat import ChatReply, completion_body, reply_from_completion
from ..errors import InvalidArgumentError, UnavailableError
from ..settings import setting

__all__ = ["OPENAI_URL", "OpenAIChatClient", "chat_from_environment", "describe_chat_setup"]

OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"  # used only for OpenAI itself when no model is named
_RETRY = frozenset({429, 500, 502, 503, 504})


class OpenAIChatClient:
    """Chat completions from an OpenAI-compatible server (base URL like ``http://127.0.0.1:11434/v1``)."""

    backoff: float = 0.5  # first wait between retries (doubles each time)
    max_wait: float = 10.0  # no single wait (backoff or Retry-After) is longer than this

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
    ) -> None:
        parts = urlsplit(base_url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidArgumentError(f"the chat model's URL must be http(s)://host[:port]/..., got {base_url!r}")
        if not model:
            raise InvalidArgumentError("name the chat model the server should use")
        if not timeout or timeout <= 0:
            raise InvalidArgumentError(f"the chat model's timeout must be a positive number of seconds, got {timeout}")
        if retries < 0:
            raise InvalidArgumentError(f"the chat model's retries must be 0 or more, got {retries}")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self._api_key = api_key or None
        self.timeout = float(timeout)
        self.retries = int(retries)

    def __repr__(self) -> str:
        key = ", api_key=***" if self._api_key else ""
        return f"OpenAIChatClient({self.base_url!r}, {self.model!r}{key})"

    # -- the ChatModel protocol -------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatReply:
        """Send the conversation; answer the model's reply (text, tool calls, or both)."""
        body = completion_body(self.model, messages, tools=tools, temperature=temperature, max_tokens=max_tokens)
        if tools:
            body["tool_choice"] = "auto"
        return self._parse(self._post(body))

    # -- HTTP -----------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _clean(self, text: str) -> str:
        """``text`` without the API key (a server may echo it back), trimmed for a message."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        text = " ".join(text.split())
        return text if len(text) <= 300 else text[:297] + "..."

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        delay = self.backoff
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=data, headers=self._headers(), method="POST")
            wait = min(delay, self.max_wait)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
                return self._decode(raw)
            except urllib.error.HTTPError as exc:
                with exc:
                    detail = _error_message(_read(exc))
                    code = exc.code
                    retry_after = _retry_after(exc.headers)
                if code in (401, 403):
                    what = "refused the API key" if self._api_key else "wants an API key (none was set)"
                    said = f": {detail}" if detail else ""
                    hint = "check NOTEWELL_CHAT_KEY (or OPENAI_API_KEY)"
                    message = f"the chat model at {self.url} {what} (HTTP {code}{said}); {hint}"
                    raise UnavailableError(self._clean(message)) from None
                if code not in _RETRY or attempt == self.retries:
                    tries = f" after {attempt + 1} tries" if attempt else ""
                    reason = detail or exc.reason or ""
                    raise UnavailableError(
                        self._clean(f"the chat model at {self.url} answered HTTP {code}{tries}: {reason}")
                    ) from None
                if retry_after is not None:
                    wait = min(retry_after, self.max_wait)
            except urllib.error.URLError as exc:
                reason = exc.reason
                if isinstance(reason, TimeoutError):
                    raise UnavailableError(self._timeout_message()) from None
                if not isinstance(reason, ConnectionResetError) or attempt == self.retries:
                    raise UnavailableError(
                        self._clean(f"cannot reach the chat model at {self.url}: {reason}")
                    ) from None
            except TimeoutError:
                raise UnavailableError(self._timeout_message()) from None
            except ConnectionResetError as exc:  # the server hung up mid-answer (RemoteDisconnected too)
                if attempt == self.retries:
                    raise UnavailableError(self._clean(f"cannot reach the chat model at {self.url}: {exc}")) from None
            except (OSError, http.client.HTTPException) as exc:
                raise UnavailableError(
                    self._clean(f"the chat model at {self.url} broke off its answer: {exc!r}")
                ) from None
            time.sleep(max(0.0, wait))
            delay *= 2
        raise AssertionError("unreachable")

    def _timeout_message(self) -> str:
        return f"the chat model at {self.url} did not answer within {self.timeout:g} s"

    def _decode(self, raw: bytes) -> dict[str, Any]:
        try:
            answer = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            snippet = self._clean(raw[:120].decode("utf-8", "replace"))
            raise UnavailableError(f"the chat model at {self.url} did not answer JSON: {snippet!r}") from None
        if not isinstance(answer, dict):
            raise UnavailableError(f"the chat model at {self.url} did not answer a JSON object")
        return answer

    # -- the answer -----------------------------------------------------------------------

    def _bad(self, why: str) -> UnavailableError:
        return UnavailableError(
            self._clean(f"the chat model at {self.url} did not answer like a chat completion: {why}")
        )

    def _parse(self, answer: dict[str, Any]) -> ChatReply:
        detail = _error_message(answer) if "error" in answer else ""
        if detail:
            raise UnavailableError(self._clean(f"the chat model at {self.url} answered an error: {detail}"))
        return reply_from_completion(answer, model=self.model, bad=self._bad)


def _read(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""


def _error_message(body: bytes | dict[str, Any]) -> str:
    """The ``error.message`` of an OpenAI-style error body (or its text, if short and not JSON)."""
    if isinstance(body, bytes | bytearray):
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            text = bytes(body).decode("utf-8", "replace").strip()
            return text if len(text) <= 200 and "<" not in text else ""
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message else ""
    if isinstance(error, str):
        return error
    message = body.get("message") or body.get("detail")
    return str(message) if isinstance(message, str) else ""


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from a ``Retry-After`` header (a number or an HTTP date); None when absent or unreadable."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _get(env: Mapping[str, str], name: str) -> str:
    if name.startswith("NOTEWELL_"):
        return setting(name, env) or ""
    return (env.get(name) or "").strip()


def chat_from_environment(env: Mapping[str, str] = os.environ) -> OpenAIChatClient | None:
    """The chat model the environment describes, or None when nothing is configured.

    ``NOTEWELL_CHAT_URL`` (with ``NOTEWELL_CHAT_MODEL`` and, if needed, ``NOTEWELL_CHAT_KEY``) wins;
    else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (the key alone means OpenAI itself) with
    ``OPENAI_MODEL``. A URL without a model is an ``InvalidArgumentError`` naming what to set.
    """
    url = _get(env, "NOTEWELL_CHAT_URL")
    if url:
        model = _get(env, "NOTEWELL_CHAT_MODEL")
        if not model:
            raise InvalidArgumentError("NOTEWELL_CHAT_URL is set: set NOTEWELL_CHAT_MODEL to the model's name too")
        return OpenAIChatClient(url, model, api_key=_get(env, "NOTEWELL_CHAT_KEY") or None)
    base, key = _get(env, "OPENAI_BASE_URL"), _get(env, "OPENAI_API_KEY")
    if base or key:
        model = _get(env, "NOTEWELL_CHAT_MODEL") or _get(env, "OPENAI_MODEL")
        if not model:
            if base and base.rstrip("/") != OPENAI_URL:
                raise InvalidArgumentError(
                    "OPENAI_BASE_URL is set: set OPENAI_MODEL (or NOTEWELL_CHAT_MODEL) to the model's name too"
                )
            model = DEFAULT_OPENAI_MODEL
        return OpenAIChatClient(base or OPENAI_URL, model, api_key=_get(env, "NOTEWELL_CHAT_KEY") or key or None)
    if _get(env, "NOTEWELL_CHAT_MODEL") or _get(env, "NOTEWELL_CHAT_KEY"):
        raise InvalidArgumentError(
            "NOTEWELL_CHAT_MODEL or NOTEWELL_CHAT_KEY is set: set NOTEWELL_CHAT_URL to the server's base URL too"
        )
    return None


def describe_chat_setup() -> str:
    """One line telling the user which variables configure the chat model."""
    return (
        "no chat model is configured: set NOTEWELL_CHAT_URL (an OpenAI-compatible base URL, e.g. "
        "http://127.0.0.1:11434/v1) and NOTEWELL_CHAT_MODEL (plus NOTEWELL_CHAT_KEY if the server wants a key), "
        "or OPENAI_API_KEY to use OpenAI"
    )
