"""A channel only the store's user can use: a Unix domain socket in the store's ``.notewell/``.

The socket is ``.notewell/helper/search.sock``: the folder is mode 0700 and the socket 0600,
and on Linux each end also checks the other's uid (SO_PEERCRED), so a caller of another user
is refused and a socket someone else made is never trusted. One process at a time serves it:
the one holding the flock on ``helper/lock``, which replaces a socket file left by a process
that died. A message is one line of JSON; a request is at most :data:`MAX_REQUEST` bytes and
must arrive within :data:`REQUEST_TIMEOUT` seconds. While it works, the server sends blank
lines (heartbeats), so a caller can tell a slow answer from a dead server.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["MAX_REQUEST", "REQUEST_TIMEOUT", "Listener", "RequestError", "ask", "helper_dir", "peer_uid", "read_line"]

MAX_REQUEST = 64 * 1024
MAX_ANSWER = 32 * 1024 * 1024  # 100 cards are far below this; a bound against a runaway peer
REQUEST_TIMEOUT = 2.0
# However long heartbeats go on, a caller stops waiting after this (a helper stuck behind a
# lock or a model that never loads must not hold a shell forever) and searches itself.
ANSWER_DEADLINE = 600.0
_SOCKET = "search.sock"
_LOCK = "lock"
_SUN_PATH_MAX = 100  # sockaddr_un holds 108 bytes on Linux, 104 on the BSDs
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class RequestError(Exception):
    """A request that could not be read: too large, incomplete in time, or cut off."""


def helper_dir(root: Path) -> Path:
    """The folder holding the store's helper socket and its lock."""
    return root / ".notewell" / "helper"


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux); None where the kernel does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or not sys.platform.startswith("linux"):
        return None
    _pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size))
    return uid


def _trusted(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.geteuid()


@contextlib.contextmanager
def _address(directory: Path) -> Iterator[str]:
    """The socket's address: its path, or on Linux a short one through the folder's descriptor
    when the path is too long for a socket address (deep temporary folders)."""
    path = str(directory / _SOCKET)
    if len(os.fsencode(path)) < _SUN_PATH_MAX or not sys.platform.startswith("linux"):
        yield path
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{_SOCKET}"
    finally:
        os.close(fd)


def read_line(sock: socket.socket, limit: int, deadline: float) -> bytes:
    """One line from *sock* (without its newline), at most *limit* bytes, by *deadline*
    (time.monotonic); RequestError otherwise."""
    data = bytearray()
    while True:
        end = data.find(b"\n")
        if end >= 0:
            return bytes(data[:end])
        if len(data) > limit:
            raise RequestError(f"the request is over {limit} bytes")
        left = deadline - time.monotonic()
        if left <= 0:
            raise RequestError("the request did not arrive in time")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise RequestError("the request did not arrive in time") from None
        if not chunk:
            raise RequestError("the request was cut off")
        data += chunk


class Listener:
    """The serving end: :meth:`open` takes the lock and binds the socket, :meth:`accept` waits
    for a caller, :meth:`intact` says whether the socket file is still this one's."""

    def __init__(self, root: Path) -> None:
        self.directory = helper_dir(root)
        self._lock_fd = -1
        self._sock: socket.socket | None = None
        self._inode: tuple[int, int] | None = None

    @property
    def path(self) -> Path:
        return self.directory / _SOCKET

    def open(self) -> bool:
        """Serve the socket; False when another live process serves it (or the folder is not
        this user's)."""
        import fcntl  # POSIX only, like the socket

        try:
            # Never its parents: a store's .notewell/ is the index's to make (a watcher whose
            # folder was replaced must not make one in the folder put in its place).
            self.directory.mkdir(mode=0o700, exist_ok=True)
            st = self.directory.stat()
            if st.st_uid != os.geteuid():
                return False  # someone else's folder: never serve from it
            if st.st_mode & 0o077:
                self.directory.chmod(0o700)
            fd = os.open(self.directory / _LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # left by a process that died: the lock says none serves it
            with _address(self.directory) as address:
                sock.bind(address)
            os.chmod(self.path, 0o600)
            sock.listen(16)
            st = self.path.stat()
        except OSError:
            sock.close()
            self._release()
            return False
        self._sock = sock
        self._inode = (st.st_dev, st.st_ino)
        return True

    def accept(self, timeout: float) -> socket.socket | None:
        """The next caller (None after *timeout* seconds, or once closed)."""
        sock = self._sock
        if sock is None:
            return None
        sock.settimeout(timeout)
        try:
            conn, _ = sock.accept()
        except (TimeoutError, OSError):
            return None
        conn.settimeout(REQUEST_TIMEOUT)
        return conn

    def intact(self) -> bool:
        """Whether the socket file is still the one this listener bound (someone may delete
        ``.notewell/``: `rm -rf .notewell && notewell reindex` is the documented reset)."""
        if self._sock is None:
            return False
        try:
            st = self.path.stat()
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._inode

    def close(self) -> None:
        if self._sock is not None:
            if self.intact():
                with contextlib.suppress(OSError):
                    self.path.unlink()
            self._sock.close()
            self._sock = None
        self._release()

    def _release(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = -1


def ask(root: Path, request: dict[str, Any], *, accept_timeout: float, idle_timeout: float) -> dict[str, Any] | None:
    """Send *request* to the store's helper and return its answer; None when no helper (of
    this user) answers: no socket, nobody listening, no first reply within *accept_timeout*,
    silence for *idle_timeout* after that, or a connection cut before the answer."""
    directory = helper_dir(root)
    if not hasattr(socket, "AF_UNIX") or not (directory / _SOCKET).exists():
        return None
    line = json.dumps(request).encode("utf-8") + b"\n"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(accept_timeout)
        with _address(directory) as address:
            sock.connect(address)
        if not _trusted(sock):
            return None
        sock.sendall(line)
        data = bytearray()
        searched = 0  # the answer's line break is looked for only in what is new
        deadline = time.monotonic() + ANSWER_DEADLINE
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            if time.monotonic() > deadline:
                return None  # heartbeats without an end: the caller searches itself
            sock.settimeout(idle_timeout)  # the first reply came: from now on heartbeats keep it going
            data += chunk
            while data.startswith(b"\n"):
                del data[:1]
            end = data.find(b"\n", max(0, searched - 1))
            if end >= 0:
                answer = json.loads(bytes(data[:end]))
                return answer if isinstance(answer, dict) else None
            searched = len(data)
            if len(data) > MAX_ANSWER:
                return None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        sock.close()
