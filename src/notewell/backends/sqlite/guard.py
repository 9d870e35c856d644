"""The wrapper every public store method runs in, and the two locks of a store in a server.

Reads and writes of one :class:`~.backend.SqliteBackend` run on many threads at once (a server calls it
from a thread pool). Writes take the :class:`StoreLock`, one at a time, as they always did.
Reads do not wait for it (a read takes it only to catch up with the folder, and only when it
is free): they pass the :class:`ReadGate`, which only a swap of the index (a rebuild, a
reopen, closing) shuts, once the reads inside it are done.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

from .index import CorruptIndexError, translated

T = TypeVar("T")
S = TypeVar("S")
P = ParamSpec("P")

__all__ = ["ReadGate", "StoreLock", "guarded", "run_guarded"]


class ReadGate:
    """Shared by any number of reads, shut by one swap of the index at a time.

    A thread that is inside already passes again at once (a read calling another read), so
    a swap waiting to shut the gate never blocks a read it waits for.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._inside = 0  # threads inside (each counted once, however deep)
        self._swapper: int | None = None  # the thread shutting the gate, while it does
        self._local = threading.local()

    def depth(self) -> int:
        """How many times the calling thread is inside (0: not)."""
        return getattr(self._local, "depth", 0)

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Inside the gate: the index is not swapped until this (and every other read) is out."""
        self._enter()
        try:
            yield
        finally:
            self._leave()

    def _enter(self) -> None:
        local = self._local
        depth = getattr(local, "depth", 0)
        if not depth:
            me = threading.get_ident()
            with self._cond:
                while self._swapper not in (None, me):
                    self._cond.wait()
                self._inside += 1
        local.depth = depth + 1

    def _leave(self) -> None:
        local = self._local
        local.depth -= 1
        if not local.depth:
            with self._cond:
                self._inside -= 1
                self._cond.notify_all()

    def swap_waiting(self) -> bool:
        """Whether another thread waits to shut the gate (a long read may step aside for it)."""
        with self._cond:
            return self._swapper not in (None, threading.get_ident())

    @contextmanager
    def stepped_out(self) -> Iterator[None]:
        """Not counted inside while waiting for something a swap may hold (the store lock)."""
        depth = self.depth()
        if not depth:
            yield
            return
        with self._cond:
            self._inside -= 1
            self._cond.notify_all()
        self._local.depth = 0
        try:
            yield
        finally:
            me = threading.get_ident()
            with self._cond:
                while self._swapper not in (None, me):
                    self._cond.wait()
                self._inside += 1
            self._local.depth = depth

    @contextmanager
    def exclusive(self, timeout: float | None = None) -> Iterator[None]:
        """The gate shut: no read inside but the caller's own. New reads wait at the gate
        until this ends. With *timeout*, go ahead after that long even if reads are still
        inside (closing a store must not hang on a read that never ends)."""
        me = threading.get_ident()
        with self._cond:
            if self._swapper == me:  # a swap inside a swap (a rebuild that fails reopens)
                nested = True
            else:
                nested = False
                while self._swapper is not None:
                    self._cond.wait()
                self._swapper = me
                mine = 1 if self.depth() else 0
                deadline = None if timeout is None else time.monotonic() + timeout
                while self._inside > mine:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    self._cond.wait(left)
        try:
            yield
        finally:
            if not nested:
                with self._cond:
                    self._swapper = None
                    self._cond.notify_all()


class StoreLock:
    """The store's write lock: reentrant, it knows its owner, and a reader inside the
    :class:`ReadGate` steps out of it while waiting (a swap holds this lock while it waits for
    the gate to empty: a reader waiting here inside the gate would wait for ever)."""

    def __init__(self, gate: ReadGate) -> None:
        self._lock = threading.RLock()
        self._gate = gate
        self._owner: int | None = None
        self._count = 0

    def held(self) -> bool:
        """True when the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    def acquire(self, blocking: bool = True) -> bool:
        """Take the lock; with ``blocking=False``, False at once when another thread holds it."""
        if not self._lock.acquire(blocking=False):
            if not blocking:
                return False
            with self._gate.stepped_out():
                self._lock.acquire()
        self._owner = threading.get_ident()
        self._count += 1
        return True

    def release(self) -> None:
        self._count -= 1
        if not self._count:
            self._owner = None
        self._lock.release()

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_calls = threading.local()  # how deep the calling thread is in guarded methods, by store


def guarded(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """A public backend method run through :func:`run_guarded`."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return run_guarded(self, lambda: method(self, *args, **kwargs))

    return wrapper


def run_guarded(store: Any, call: Callable[[], T]) -> T:
    """Run one public call of *store* with sqlite3 errors translated; a damaged index, or one
    replaced by another process's reindex, is reopened or rebuilt, then the call retried.

    Only the outermost call on a thread does that: a method called by another one runs
    inside its caller's read or lock, where no index may be swapped underneath it."""
    depths: dict[int, int] = _calls.__dict__.setdefault("depths", {})
    key = id(store)
    if depths.get(key):
        with translated():
            return call()
    for attempt in (0, 1):
        try:
            with translated():
                if store.index.replaced():
                    store.reopen_index(rebuild=False)
                depths[key] = 1
                try:
                    return call()
                finally:
                    depths.pop(key, None)
        except CorruptIndexError:
            if attempt:
                raise
            store.reopen_index(rebuild=True)
    raise AssertionError("unreachable")
