"""The HTTP server's guard against slow clients: deadlines for a request to arrive, and a cap on
connections below the process's file limit.

uvicorn times out a connection only while it idles between requests: one that sends nothing,
a header line every few seconds or a body byte every few seconds stays open for good, and a few
hundred of them used up the process's files (a token holder's request timed out, imports failed
with "Too many open files"). Here each request must bring its headers within ``head_seconds``
and all of itself within ``request_seconds`` of the connection (or of the end of the answer
before it); a connection that does not is closed. Past ``limit`` open connections uvicorn
answers 503 at once, so files are never exhausted: an attacker can hold the slots for
``head_seconds`` at a time, then must connect again.
"""

from __future__ import annotations

import asyncio
import json
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "HEAD_SECONDS",
    "LINGER_SECONDS",
    "REQUEST_SECONDS",
    "connection_limit",
    "deadline_protocol",
    "server_config",
]

HEAD_SECONDS = 10.0
REQUEST_SECONDS = 60.0
# After a 400 for a request it cannot read (a head past h11's 16 KiB, say), how long the rest of
# that request is read and dropped before the connection is closed.
LINGER_SECONDS = 2.0
_COMPLETE = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)


class _Deadlines(H11Protocol):
    head_seconds = HEAD_SECONDS
    request_seconds = REQUEST_SECONDS
    _timers: tuple[asyncio.TimerHandle, ...] = ()
    _lingering = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # the rest of a request already answered with 400: read and dropped
        super().data_received(data)
        if self._lingering:
            return  # its deadline is the linger's
        state = self.conn.their_state
        if state in _COMPLETE:
            self._disarm()
        elif state is not h11.IDLE and len(self._timers) == 2:  # the headers are in: the body's deadline is left
            self._timers[0].cancel()
            self._timers = self._timers[1:]

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request it cannot read, then a lingering close: uvicorn closes at
        once, and closing with the rest of the request unread makes the kernel reset the
        connection, so the client often gets the reset instead of the 400. Here the writing side
        is shut after the answer and what still comes is dropped until the client closes, or
        LINGER_SECONDS pass."""
        # The API's error form (JSON with a code), as every other answer of the server.
        error = {"error": {"code": "invalid_argument", "message": f"{msg} (a head over 16 KiB?)"}}
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        answer = (
            h11.Response(status_code=400, headers=headers),
            h11.Data(data=json.dumps(error).encode("ascii")),
            h11.EndOfMessage(),
        )
        for event in answer:
            self.transport.write(self.conn.send(event))
        self._lingering = True
        self._disarm()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._timers = (self.loop.call_later(LINGER_SECONDS, self._too_slow),)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may already read a pipelined request that came whole
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            self._arm()  # the next request on this connection has the same time
        elif state is h11.SEND_BODY:
            self._arm()
            self._timers[0].cancel()  # its headers are in: the whole request's deadline is left
            self._timers = self._timers[1:]

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._timers = (
            self.loop.call_later(self.head_seconds, self._too_slow),
            self.loop.call_later(self.request_seconds, self._too_slow),
        )

    def _disarm(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers = ()

    def _too_slow(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()


def deadline_protocol(head_seconds: float = HEAD_SECONDS, request_seconds: float = REQUEST_SECONDS) -> type[Any]:
    """uvicorn's h11 protocol with these deadlines."""
    return type(
        "DeadlineH11Protocol", (_Deadlines,), {"head_seconds": head_seconds, "request_seconds": request_seconds}
    )


def connection_limit() -> int:
    """Open connections past which the server answers 503: half the files this process may
    open (its soft limit raised to the hard one first), between 64 and 4,096."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    files = 8192 if soft == resource.RLIM_INFINITY else soft
    return max(64, min(4096, files // 2))


def server_config(
    app: Any,
    host: str,
    port: int,
    *,
    head_seconds: float = HEAD_SECONDS,
    request_seconds: float = REQUEST_SECONDS,
    limit: int | None = None,
) -> Any:
    """The uvicorn configuration every notewell server runs with."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=deadline_protocol(head_seconds, request_seconds),
        limit_concurrency=limit if limit is not None else connection_limit(),
    )
