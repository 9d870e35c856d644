"""A long-running watcher that other processes on the same store can lean on.

``notewell watch`` keeps the index in step with the folder from inotify events and
answers one-shot processes that ask, with a cookie file, whether every change made
before their question is indexed (the way git's fsmonitor daemon works). They then
skip the whole-folder check. Other questions (the search helper's) count for its idle
timer through :meth:`FolderWatching.note_question`.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ...errors import NotewellError, StorageError
from .guard import StoreLock
from .history import HISTORY_DIR
from .index import Index, translated
from .inotify import COOKIE_PREFIX, Watcher
from .sync import SyncReport

__all__ = ["FolderWatching", "StoreHome", "WatchedStore", "folder_identity"]

_BEAT = 1.0  # seconds between a watcher's heartbeats
# How long a one-shot process waits for a live watcher's answer before looking for itself: past
# the 2 s a watcher may settle a mass change, with room for a busy machine. Not shorter: an asker
# that gives up meets the watcher's write lock and serves the index as last committed (stale).
_COOKIE_WAIT = 3.0


class StoreHome:
    """The store's folder and notewell's two folders in it, as a watcher found them: gone()
    says when any was removed or replaced (``rm -rf``, a folder moved in its place), after which
    a watcher writes nothing there (a journal line would make a folder being removed again)."""

    def __init__(self, root: Path) -> None:
        self.paths = [root, root / ".notewell", root / HISTORY_DIR]
        self.seen = [folder_identity(p) for p in self.paths]

    def gone(self) -> bool:
        return any(was is not None and folder_identity(p) != was for p, was in zip(self.paths, self.seen, strict=True))


def folder_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of *path*, None when it is not there: a folder put in its place differs."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class WatchedStore(Protocol):
    """What the watching side needs of the SQLite backend it serves."""

    root: Path
    lock: StoreLock
    inotify: Watcher | None

    @property
    def index(self) -> Index: ...

    def full_sync(self) -> SyncReport: ...

    def refresh(self, *, wait: bool = True) -> SyncReport: ...


class FolderWatching:
    """The watcher side and the asking side of the cookie handshake, for one SQLite backend."""

    def __init__(self, store: WatchedStore) -> None:
        self._store = store
        self._asked_at = 0.0  # when a question other than a cookie last came (time.time())

    @property
    def _index(self) -> Index:
        return self._store.index  # not kept: a reindex puts a new one in place

    def synced_by_watcher(self) -> bool:
        """Ask a running ``notewell watch`` whether the index has every change made so far.

        The question is a cookie file created in the folder: inotify delivers events in
        order, so once the watcher has answered for the cookie it has applied everything
        written before it. No live watcher, or no answer in time: False (scan instead).
        """
        if self.watcher_pid() is None:
            return False
        name = COOKIE_PREFIX + secrets.token_hex(8)
        path = os.path.join(self._store.root, name)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except OSError:
            return False
        deadline = time.monotonic() + _COOKIE_WAIT
        try:
            while time.monotonic() < deadline:
                if self._index.get_state("cookie:" + name) is not None:
                    return True
                time.sleep(0.001)
            return False
        finally:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def note_question(self) -> None:
        """Count a question asked some other way than by cookie (a search sent to the helper),
        so that a watcher started on demand does not stop while it is being used."""
        self._asked_at = time.time()

    def watcher_pid(self) -> int | None:
        """The pid of another process watching this store (``notewell watch``), if one
        is alive and beating."""
        info = self.watcher()
        return None if info is None else int(info["pid"])

    def watcher(self) -> dict[str, Any] | None:
        """Another process watching this store, if one is alive and beating: its ``pid``, when it
        ``started`` and last beat (``beat``), and for one started on demand ``idle_exit`` (the
        seconds without a question it stops after) and ``asked`` (when it was last asked); times
        in seconds since the epoch."""
        raw = self._index.get_state("watcher")
        if not raw:
            return None
        try:
            info = json.loads(raw)
            pid, beat = int(info["pid"]), float(info["beat"])
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(info, dict) or pid == os.getpid() or time.time() - beat > 5 * _BEAT:
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return info

    def watch_forever(
        self,
        stop: threading.Event | None = None,
        on_error: Callable[[NotewellError], None] | None = None,
        *,
        idle_exit: float | None = None,
        on_beat: Callable[[], None] | None = None,
    ) -> bool:
        """Keep the index in step with the folder until *stop* is set.

        While this runs (``notewell watch``), other processes on the store skip the
        whole-folder check: they ask this watcher instead (see :meth:`notewell.services.opening.Store.refresh`).
        With *idle_exit* (a watcher started on demand), it stops once no process has
        asked for that many seconds, and does not start when another watcher is alive.
        Returns False when it did not start for that reason. *on_beat* is called at every
        heartbeat (the search helper checks its socket there).
        """
        if self._store.inotify is None or not self._store.inotify.active:
            raise StorageError("watching needs Linux inotify (open the store with watch=True)")
        stop = stop or threading.Event()
        if idle_exit is not None and self.watcher_pid() is not None:
            return False
        home = StoreHome(self._store.root)
        with self._store.lock:
            self._store.full_sync()
        me = os.getpid()
        started = last_question = time.time()
        last_beat = 0.0
        try:
            while not stop.is_set() and not home.gone():
                now = time.time()
                if idle_exit is not None and now - max(last_question, self._asked_at) > idle_exit:
                    break
                if now - last_beat >= _BEAT:
                    if idle_exit is not None and self.watcher_pid() is not None:
                        break  # two started on demand at once: the one on record stays
                    self._beat(me, started, now, idle_exit, max(last_question, self._asked_at))
                    last_beat = now
                    if on_beat is not None and not home.gone():  # (it may serve a socket in the folder)
                        on_beat()
                ready, _, _ = select.select([self._store.inotify.fileno()], [], [], _BEAT / 4)
                # A search on another thread may have read the events (cookies among them):
                # answer those cookies after a refresh of our own, which applies what it held back.
                if not ready and not self._store.inotify.cookies:
                    continue
                # A mass change read whole (an rm -rf is over before we look), up to 2 s, beating
                # as it waits so that other processes never take this watcher for dead. Short
                # waits: a stream of small changes delays the answer to a cookie by 0.25 s at most
                # a round (an asker waits for its answer up to _COOKIE_WAIT).
                for _ in range(8 if ready else 0):
                    if not self._store.inotify.settle(longest=0.25):
                        break
                    self._beat(me, started, time.time(), idle_exit, max(last_question, self._asked_at))
                    last_beat = time.time()
                with self._store.lock:
                    if home.gone():  # removed or replaced while events came: write nothing there
                        break
                    try:
                        self._store.refresh()
                    except NotewellError as exc:  # reported, and the watcher keeps going
                        # Cookies stay unanswered: their askers scan instead of trusting us.
                        self._store.inotify.cookies = []
                        if on_error is not None:
                            on_error(exc)
                        continue
                    cookies, self._store.inotify.cookies = self._store.inotify.cookies, []
                    if cookies:
                        last_question = now
                        with translated(), self._index.write():
                            for name in cookies:
                                self._index.set_state("cookie:" + name, str(now))
        finally:
            if not home.gone():  # a store that is gone: nothing to tidy, and nothing of it to make again
                with self._index.write():
                    raw = self._index.get_state("watcher")
                    if raw and json.loads(raw).get("pid") == me:
                        self._index.conn.execute("DELETE FROM state WHERE key = 'watcher'")
        return True

    def _beat(self, pid: int, started: float, now: float, idle_exit: float | None, asked: float) -> None:
        record = {"pid": pid, "started": started, "beat": now, "idle_exit": idle_exit, "asked": asked}
        with self._store.lock, translated(), self._index.write():
            self._index.set_state("watcher", json.dumps(record))
            self._index.conn.execute(
                "DELETE FROM state WHERE key LIKE 'cookie:%' AND CAST(value AS REAL) < ?", (now - 60,)
            )
