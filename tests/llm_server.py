"""A scripted OpenAI-compatible chat server for tests: real HTTP on 127.0.0.1, no network.

    with ScriptedLLM(["hello", {"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}]) as llm:
        client = OpenAIChatClient(llm.url, "test-model")
        assert client.complete([{"role": "user", "content": "hi"}]).content == "hello"
        assert llm.requests[0].body["messages"][0]["content"] == "hi"

It serves ``POST /v1/chat/completions`` (and ``/chat/completions``) and ``GET /v1/models``.
Each chat request takes the next item of the script:

* a ``str``: a plain text reply;
* a dict ``{"content": ..., "tool_calls": [{"name": ..., "arguments": {...} or "...", "id": ...}]}``
  (optional ``"usage"``, ``"model"``, ``"finish_reason"``; a tool call that already has a ``"function"``
  key is sent verbatim, e.g. to send dict arguments or leave out the id); a ``ChatReply`` works too;
* an ``int``: that HTTP status with an OpenAI-style error body (e.g. ``503`` then a reply, to test retries);
* a dict with ``"status"``: an error, with optional ``"retry_after"`` (seconds, sent as ``Retry-After``),
  ``"message"`` and ``"headers"``;
* a dict with ``"raw"`` (str/bytes sent as is, with ``"status"`` 200 by default) or ``"json"`` (any
  JSON document sent as is) for malformed answers; ``"delay"`` (seconds) on any dict waits first;
* a callable ``(request_json) -> any of the above``, to answer based on what was sent.

When the script is empty the ``default`` callable answers, if set; otherwise the server answers
HTTP 500 with an error saying the script is exhausted, so a test that asks too often fails loudly.
Every request (method, path, headers, parsed JSON body) is recorded in ``.requests``; an exception
raised by a script callable is answered as HTTP 500 and kept in ``.errors``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, is_dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordedRequest", "ScriptedLLM"]

Item = Any  # str | int | dict | ChatReply | Callable[[dict], ...]


@dataclass
class RecordedRequest:
    """One request the server received; ``body`` is the parsed JSON (None when absent or not JSON)."""

    method: str
    path: str
    headers: Message  # case-insensitive: ``headers.get("authorization")``
    body: Any
    raw: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


def _tokens(text: str) -> int:
    """A rough token count (about four characters a token)."""
    return (len(text) + 3) // 4 if text else 0


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return str(message)
    parts = [message.get("content")] if isinstance(message.get("content"), str) else []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            parts.append(str(call["function"].get("name", "")) + str(call["function"].get("arguments", "")))
    return " ".join(parts)


class ScriptedLLM:
    """An OpenAI-compatible chat server that answers from a script; use as a context manager."""

    def __init__(
        self,
        script: Iterable[Item] = (),
        *,
        default: Callable[[dict[str, Any]], Item] | None = None,
        model: str = "scripted-model",
    ) -> None:
        self.script: deque[Item] = deque(script)
        self.default = default
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.errors: list[Exception] = []  # exceptions raised by script callables (answered as HTTP 500)
        self.answered = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._calls = 0

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> ScriptedLLM:
        if self._server is not None:
            return self
        owner = self

        class Handler(_Handler):
            llm = owner

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="ScriptedLLM", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the ScriptedLLM is not running (use it as a context manager or call start())")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL, ending in ``/v1`` (what an OpenAI client takes)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- the script -----------------------------------------------------------------------

    def push(self, *items: Item) -> None:
        """Add replies to the end of the script."""
        with self._lock:
            self.script.extend(items)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.script)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat requests, in order."""
        with self._lock:
            return [r.body for r in self.requests if r.method == "POST"]

    def assert_exhausted(self) -> None:
        """Fail when script items were left unused."""
        left = self.remaining
        assert left == 0, f"ScriptedLLM: {left} scripted replies were never asked for"

    def _next(self, request: Any) -> Item:
        with self._lock:
            if self.script:
                item = self.script.popleft()
            elif self.default is not None:
                item = self.default
            else:
                return {
                    "status": 500,
                    "message": f"ScriptedLLM: the script is exhausted ({self.answered} requests answered)",
                }
            self.answered += 1
        while callable(item) and not isinstance(item, type):
            item = item(request)
        return item

    # -- building answers -----------------------------------------------------------------

    def _completion(self, request: Any, reply: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._calls += 1
            base = self._calls
        calls = []
        for n, call in enumerate(reply.get("tool_calls") or []):
            if "function" in call:  # already OpenAI-shaped: send verbatim
                calls.append(call)
                continue
            arguments = call.get("arguments", {})
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            calls.append(
                {
                    "id": call.get("id") or f"call_{base}_{n}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        messages = request.get("messages", []) if isinstance(request, dict) else []
        prompt = _tokens(" ".join(_message_text(m) for m in messages))
        completion = _tokens(_message_text(message))
        usage = reply.get("usage") or {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        model = reply.get("model") or (request.get("model") if isinstance(request, dict) else None) or self.model
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.get("finish_reason") or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": usage,
        }


def _as_dict(item: Item) -> Item:
    if is_dataclass(item) and not isinstance(item, type):  # a ChatReply
        data = asdict(item)
        return {"content": data["content"], "tool_calls": data["tool_calls"], "usage": data["usage"] or None}
    if isinstance(item, str):
        return {"content": item}
    return item


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer (a test timing out on purpose) is not an error here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    llm: ScriptedLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the http.server signature
        pass  # keep test output quiet

    def _record(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self.llm._lock:
            self.llm.requests.append(RecordedRequest(self.command, self.path, self.headers, body, raw))
        return body

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        self._record()
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": self.llm.model, "object": "model", "created": 0, "owned_by": "scripted"}]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(*_error(404, f"ScriptedLLM: no route GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        request = self._record()
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(*_error(404, f"ScriptedLLM: no route POST {self.path}"))
            return
        try:
            item = _as_dict(self.llm._next(request))
            if isinstance(item, dict) and item.get("delay"):
                time.sleep(float(item["delay"]))
            answer = _answer(self.llm, request, item)
        except Exception as exc:  # a broken script or callable: say so loudly, keep it for the test
            with self.llm._lock:
                self.llm.errors.append(exc)
            answer = _error(500, f"ScriptedLLM: the script failed: {exc!r}")
        self._send(*answer)


Answer = tuple[int, bytes, dict[str, str]]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
    kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "code": status}}
    return status, json.dumps(body).encode(), dict(headers or {})


def _answer(llm: ScriptedLLM, request: Any, item: Item) -> Answer:
    if isinstance(item, int) and not isinstance(item, bool):
        return _error(item, f"ScriptedLLM: scripted HTTP {item}")
    if not isinstance(item, dict):
        raise TypeError(f"a script item must be a str, int, dict, ChatReply or callable, got {item!r}")
    headers = {str(k): str(v) for k, v in (item.get("headers") or {}).items()}
    if "retry_after" in item:
        headers["Retry-After"] = str(item["retry_after"])
    if "raw" in item:
        raw = item["raw"]
        return int(item.get("status", 200)), raw.encode() if isinstance(raw, str) else bytes(raw), headers
    if "json" in item:
        return int(item.get("status", 200)), json.dumps(item["json"]).encode(), headers
    if "status" in item:
        status = int(item["status"])
        return _error(status, item.get("message") or f"ScriptedLLM: scripted HTTP {status}", headers)
    return 200, json.dumps(llm._completion(request, item)).encode(), headers
