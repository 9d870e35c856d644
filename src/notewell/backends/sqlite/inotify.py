"""Noticing outside changes without rescanning: Linux inotify, read without blocking.

A long-running process asks :meth:`Watcher.changes` before each read; when the
kernel queued no event, nothing in the folder changed and no scan is needed.
Where inotify is missing (not Linux, or no watches left) the store falls back to
the full mtime/size check on every read.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import sys
import termios
import time
from typing import Any

__all__ = ["COOKIE_PREFIX", "Watcher"]

# A one-shot process creates such a file in the root to ask a running watcher
# whether it has applied every change made before it (inotify keeps events in order).
COOKIE_PREFIX = ".notewell-cookie-"

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ISDIR = 0x40000000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000  # a folder replaced by a link is not watched through it
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_EVENT = struct.Struct("iIII")


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only a store that watches pays for loading ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - probe the symbol
        return libc
    except (OSError, AttributeError):
        return None


class Watcher:
    """Watches every folder of a notes tree (dot-folders excluded)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.cookies: list[str] = []  # cookie files seen, for the caller to answer
        self._wd: dict[int, str] = {}
        self._watched: set[str] = set()  # the folders of _wd, for a look-up per folder
        self._moved: set[int] = set()  # watches of folders that moved: under their old names until watched again
        self._held: tuple[set[str], bool] = (set(), False)  # changes handed back, not yet applied
        self._fd = -1
        libc = _libc()
        if libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        self._libc = libc
        self._fd = fd

    @property
    def active(self) -> bool:
        return self._fd >= 0

    def fileno(self) -> int:
        """The inotify descriptor, readable when events are queued (for select)."""
        return self._fd

    def settle(self, step: float = 0.05, longest: float = 1.0) -> bool:
        """Wait while events keep arriving (a mass change: ``rm -rf``, a checkout, a copy), at
        most *longest* seconds, so that what is read next is the change whole. One event alone
        waits *step*. True when they were still coming at the end (the caller may wait again)."""
        deadline = time.monotonic() + longest
        before = self._pending()
        while time.monotonic() < deadline:
            time.sleep(step)
            now = self._pending()
            if now <= before:
                return False
            before = now
        return True

    def _pending(self) -> int:
        """Bytes of events waiting to be read (FIONREAD)."""
        try:
            got = fcntl.ioctl(self._fd, termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return 0
        return int.from_bytes(got, sys.byteorder)

    def watch(self, dirs: set[str]) -> bool:
        """Watch these folders (relative; '' is the root). False if the kernel refused."""
        if not self.active:
            return False
        todo = sorted(dirs - self._watched)
        for rel in todo:
            path = os.path.join(self.root, rel) if rel else self.root
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
            if wd < 0:
                import ctypes

                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    # Gone, or no folder any more (a link): nothing to watch, but what it held
                    # went with it; the next check compares every file.
                    self._held = (self._held[0], True)
                    continue
                self.close()
                return False
            if wd in self._wd:  # the same folder under a new name (moved): the old name is not watched
                self._watched.discard(self._wd[wd])
                self._moved.discard(wd)
            self._wd[wd] = rel
            self._watched.add(rel)
        return True

    def changes(self) -> tuple[set[str], bool] | None:
        """Paths of .md files that changed since the last call, and whether a full
        check is needed (a folder appeared or moved, or the queue overflowed).
        None when not watching."""
        if not self.active:
            return None
        paths, rescan = self._held
        self._held = (set(), False)
        moved: set[str] = set()  # folders that moved: their watches would report old names
        while True:
            try:
                data = os.read(self._fd, 256 * 1024)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return None
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + 16 : offset + 16 + length].rstrip(b"\0").decode("utf-8", "surrogateescape")
                offset += 16 + length
                if mask & _IN_Q_OVERFLOW:
                    rescan = True
                    continue
                if mask & _IN_IGNORED:
                    gone = self._wd.pop(wd, None)
                    self._moved.discard(wd)
                    if gone is not None:  # not one this watcher took off itself
                        self._watched.discard(gone)
                        rescan = True
                    continue
                rel = self._wd.get(wd)
                if rel is None:
                    continue
                if wd in self._moved:  # a change in a moved folder, not yet watched where it is now
                    rescan = True
                    continue
                if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                    if mask & _IN_MOVE_SELF:
                        moved.add(rel)
                    rescan = True
                    continue
                if not name:
                    continue
                if name.startswith("."):
                    if rel == "" and name.startswith(COOKIE_PREFIX) and mask & _IN_CREATE:
                        self.cookies.append(name)
                    continue
                if mask & _IN_ISDIR:
                    rescan = True
                    continue
                if name.endswith(".md"):
                    paths.add(f"{rel}/{name}" if rel else name)
        if moved:
            self._mark_moved(moved)
        return paths, rescan

    def _mark_moved(self, moved: set[str]) -> None:
        """Folders that moved, and the folders inside them: a watch follows its folder (out of the
        store too) but reports it under its old name. Until the rescan the move asks for watches
        them where they are now, a change in one asks another rescan; let_go_of_moved() then takes
        off those left outside the store. Parents before children, each folder looks at its own
        parent only: linear in the watches' names, however deep the tree."""
        inside = set(moved)
        for wd, rel in sorted(self._wd.items(), key=lambda item: len(item[1])):
            if "" in inside or rel in inside or rel.rpartition("/")[0] in inside:
                inside.add(rel)
                self._moved.add(wd)
                self._watched.discard(rel)

    def let_go_of_moved(self) -> None:
        """After a full look has watched every folder of the store: take the watches off the
        moved folders it did not find (they left the store)."""
        for wd in self._moved:
            self._libc.inotify_rm_watch(self._fd, wd)
            self._wd.pop(wd, None)  # its old name was let go of when it moved
        self._moved.clear()

    def hand_back(self, paths: set[str], rescan: bool) -> None:
        """Changes that :meth:`changes` gave out but that could not be applied yet: the next
        call returns them again (with whatever happened since)."""
        held, again = self._held
        self._held = (held | paths, again or rescan)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._wd.clear()
        self._watched.clear()
        self._moved.clear()
