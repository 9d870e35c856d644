"""The search helper: a long-running process on a folder store (``notewell watch``) answers
other processes' searches on its own open store, whose model is loaded once.

It listens on the store's :mod:`query_socket` and calls :meth:`notewell.services.service.NoteService.search_notes`, the
same service call as an in-process search, so the cards are the same. Requests
(one JSON line each, protocol :data:`PROTOCOL`)::

    {"v": 1, "op": "search", "config": "<hash>", "query": "...", "mode": "semantic",
     "limit": 10, "wait": false, "filters": {"kind": ["decision"], ...}}
    {"v": 1, "op": "status"}

Answers: ``{"ok": true, "cards": [...], "pending": n}``; ``{"ok": false, "error": {"code",
"message"}}`` (the search's own error, or a malformed request's); ``{"ok": false,
"declined": "..."}`` when the caller should search itself (another configuration or
version, too many callers at once, a failure that is not a notewell error).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors
from ..errors import ForbiddenError, InvalidArgumentError, NotewellError
from ..model.note import Card
from ..search.filters import Filters
from .query_socket import MAX_REQUEST, REQUEST_TIMEOUT, Listener, RequestError, ask, peer_uid, read_line

if TYPE_CHECKING:
    from .embedder_loading import EmbedderLoader
    from .opening import Store

__all__ = ["ACCEPT_TIMEOUT", "PROTOCOL", "SearchHelper", "helper_status", "search_by_helper"]

PROTOCOL = 1
ACCEPT_TIMEOUT = 1.0  # a caller's wait for the helper's first reply before it searches itself
IDLE_TIMEOUT = 10.0  # a caller's wait between heartbeats
_HEARTBEAT = 0.5
_MAX_CALLERS = 8  # searches served at once; more are declined (their callers search themselves)
_ERRORS = {
    cls.code: cls
    for cls in (getattr(errors, name) for name in errors.__all__ if name.endswith("Error"))
    if cls is not errors.NotewellError
}


def _failure(exc: NotewellError) -> dict[str, Any]:
    return {"ok": False, "error": exc.to_dict()}


def _declined(why: str) -> dict[str, Any]:
    return {"ok": False, "declined": why}


def _search_args(request: dict[str, Any]) -> tuple[str, str, int, bool, dict[str, Any]]:
    """The search parameters of a request, checked for type (the service checks the values)."""
    query, mode = request.get("query"), request.get("mode", "keyword")
    limit, wait, filters = request.get("limit", 10), request.get("wait", False), request.get("filters") or {}
    if not isinstance(query, str) or not isinstance(mode, str):
        raise InvalidArgumentError("query and mode must be strings")
    if isinstance(limit, bool) or not isinstance(limit, int) or not isinstance(wait, bool):
        raise InvalidArgumentError("limit must be a whole number and wait true or false")
    if not isinstance(filters, dict):
        raise InvalidArgumentError("filters must be an object")
    # The filters' own check: never a keyword search_notes takes otherwise (viewer, limit, ...).
    Filters.from_kwargs({str(name)[:40]: None for name in filters})
    for name, value in filters.items():
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if not (value is None or isinstance(value, str) or strings):
            raise InvalidArgumentError(f"filter {name!r} must be a string or a list of strings")
    return query, mode, limit, wait, filters


class SearchHelper:
    """Serves searches on *store* over its socket, one thread per caller.

    *config* names the settings that shape results (the caller's must match, or it is
    declined); a search that needs the model first waits for *loader* (outside the store's
    lock); *on_question* is called for every search (the watcher's idle timer).
    """

    def __init__(
        self,
        store: Store,
        *,
        config: str,
        loader: EmbedderLoader | None = None,
        on_question: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.loader = loader
        self.on_question = on_question
        self.searches = 0  # searches answered (cards or an error), for `status`
        self._count = threading.Lock()
        self._slots = threading.BoundedSemaphore(_MAX_CALLERS)
        self._listener: Listener | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self.started = time.time()

    @property
    def serving(self) -> bool:
        return self._listener is not None

    def serve(self) -> bool:
        """Listen, unless another process serves this store; True when this one does."""
        if self._closed:
            return False
        listener = Listener(Path(self.store.root))
        if not listener.open():
            return False
        self._listener = listener
        self._thread = threading.Thread(
            target=self._accept, args=(listener,), name="notewell-search-helper", daemon=True
        )
        self._thread.start()
        return True

    def check(self) -> None:
        """Serve again when the socket is gone (``.notewell/`` was deleted, as `rm -rf .notewell` does) or when the
        process that served it has stopped (the watcher calls this at every heartbeat)."""
        if self._listener is not None and self._listener.intact():
            return
        self._stop_listening()
        self.serve()

    def close(self) -> None:
        self._closed = True
        self._stop_listening()

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if self._thread is not None:
            self._thread.join(timeout=5)  # it looks at self._listener every half second
            self._thread = None
        if listener is not None:
            listener.close()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "protocol": PROTOCOL,
            "store": str(self.store.root),
            "started": self.started,
            "searches": self.searches,
            "model": self.loader.state if self.loader is not None else "none",
        }

    # -- serving ------------------------------------------------------------

    def _accept(self, listener: Listener) -> None:
        while self._listener is listener:
            conn = listener.accept(0.5)
            if conn is None:
                continue
            if not self._slots.acquire(blocking=False):
                self._reply(conn, _declined("busy"))
                conn.close()
                continue
            threading.Thread(target=self._serve_one, args=(conn,), name="notewell-search", daemon=True).start()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                # Who is asking comes first: another user's request is never read (only drained
                # briefly, since a socket closed on unread input resets before the answer lands).
                uid = peer_uid(conn)
                if uid is not None and uid != os.geteuid():
                    _drain(conn, limit=MAX_REQUEST)
                    self._reply(conn, _failure(ForbiddenError("the search helper answers its own user only")))
                    return
                try:
                    line = read_line(conn, MAX_REQUEST, time.monotonic() + REQUEST_TIMEOUT)
                except RequestError as exc:
                    _drain(conn)
                    self._reply(conn, _failure(InvalidArgumentError(str(exc))))
                    return
                try:
                    request = json.loads(line)
                except (ValueError, RecursionError):
                    self._reply(conn, _failure(InvalidArgumentError("the request is not a line of JSON")))
                    return
                conn.sendall(b"\n")  # read: from now on the caller waits on heartbeats
                answer = self._while_beating(conn, lambda: self.answer(request))
                if answer is not None:
                    self._reply(conn, answer)
        except OSError:
            pass  # the caller went away
        finally:
            self._slots.release()

    def _while_beating(self, conn: socket.socket, work: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
        """Run *work* on a thread, sending a blank line every _HEARTBEAT seconds meanwhile;
        None when the caller went away."""
        done: list[dict[str, Any]] = []
        worker = threading.Thread(target=lambda: done.append(work()), name="notewell-search-work", daemon=True)
        worker.start()
        gone = False
        while True:
            worker.join(_HEARTBEAT)
            if not worker.is_alive():
                break
            if not gone:
                try:
                    conn.sendall(b"\n")
                except OSError:
                    gone = True  # let the search finish: it cannot be interrupted half-way
        return None if gone or not done else done[0]

    def _reply(self, conn: socket.socket, answer: dict[str, Any]) -> None:
        try:
            data = json.dumps(answer).encode("utf-8")
        except (TypeError, ValueError) as exc:
            data = json.dumps(_declined(f"unencodable answer: {exc}")).encode("utf-8")
        try:
            conn.sendall(data + b"\n")
        except OSError:
            pass

    def answer(self, request: Any) -> dict[str, Any]:
        """The answer to one decoded request."""
        if not isinstance(request, dict):
            return _failure(InvalidArgumentError("a request is a JSON object"))
        if request.get("v") != PROTOCOL:
            return _declined(f"this helper speaks protocol {PROTOCOL}")
        op = request.get("op")
        if op == "status":
            return {"ok": True, "status": self.status()}
        if op != "search":
            return _failure(InvalidArgumentError(f"unknown op {str(op)[:40]!r}: search or status"))
        if request.get("config") != self.config:
            return _declined("another configuration (embedder, version or limits)")
        try:
            query, mode, limit, wait, filters = _search_args(request)
            if self.on_question is not None:
                self.on_question()
            if mode != "keyword" and self.loader is not None:
                self.loader.wait()  # here, not inside the store's lock, so other work goes on
            from .searching import search  # the watcher's side: its store is open already

            found = search(self.store, query, limit=limit, mode=mode, wait=wait, **filters)
            answer = {"ok": True, "cards": [c.to_dict() for c in found.cards], "pending": found.not_embedded or 0}
        except NotewellError as exc:
            answer = _failure(exc)
        except Exception as exc:  # noqa: BLE001 - the caller searches itself and meets it there
            return _declined(f"internal error: {type(exc).__name__}")
        with self._count:
            self.searches += 1
        return answer


def _drain(conn: socket.socket, limit: int = 1 << 20, seconds: float = 0.2) -> None:
    """Read and drop what a caller is still sending (a bounded amount), so that the answer
    that follows reaches it."""
    deadline = time.monotonic() + seconds
    try:
        while limit > 0 and (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            chunk = conn.recv(65536)
            if not chunk:
                return
            limit -= len(chunk)
    except OSError:
        pass


# -- the asking side ------------------------------------------------------------


def search_by_helper(
    root: Path, *, config: str, query: str, mode: str, limit: int, wait: bool, filters: dict[str, Any]
) -> tuple[list[Card], int] | None:
    """Search through the store's helper: the cards and the number of notes not embedded
    yet, or None when no helper answered (search in-process then). A notewell error the
    search raised there is raised here."""
    request = {
        "v": PROTOCOL,
        "op": "search",
        "config": config,
        "query": query,
        "mode": mode,
        "limit": limit,
        "wait": wait,
        "filters": filters,
    }
    answer = ask(root, request, accept_timeout=ACCEPT_TIMEOUT, idle_timeout=IDLE_TIMEOUT)
    if answer is None or answer.get("ok") is not True:
        error = (answer or {}).get("error")
        if isinstance(error, dict) and (exc := _error_from(error)) is not None:
            raise exc
        return None
    try:
        cards = [Card.from_dict(c) for c in answer["cards"]]
        pending = int(answer["pending"])
    except (KeyError, TypeError, ValueError):
        return None
    return cards, pending


def helper_status(root: Path) -> dict[str, Any] | None:
    """What the store's helper says of itself (pid, searches answered, model), or None."""
    answer = ask(root, {"v": PROTOCOL, "op": "status"}, accept_timeout=ACCEPT_TIMEOUT, idle_timeout=IDLE_TIMEOUT)
    status = (answer or {}).get("status")
    return status if isinstance(status, dict) else None


def _error_from(error: dict[str, Any]) -> NotewellError | None:
    cls = _ERRORS.get(error.get("code"))  # type: ignore[arg-type]
    message = error.get("message")
    if cls is None or not isinstance(message, str):
        return None
    try:
        return cls(message)
    except TypeError:
        return None  # an error that needs more than a message (rate_limited): search in-process
