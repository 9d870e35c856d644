"""Signing in to the web page: a one-time link for the person at the keyboard, and sessions.

``notewell serve`` on a loopback address prints a link with a random code; opening it within
:data:`CODE_SECONDS` swaps the code, once, for an owner session, held by an HttpOnly cookie
the page's script never sees. A token typed into the page is swapped for a session the same
way, so no secret is kept in the browser's storage. Everything here lives in the server's
memory: a restart signs everybody out.

Bounds, so that repeating a request never grows anything: one code is pending at a time (a
new link replaces it), a new link is made at most every :data:`LINK_SECONDS`, and at most
:data:`MAX_SESSIONS` sessions live (a new one ends the oldest). Codes and session cookies are
kept only as SHA-256 digests and compared with :func:`hmac.compare_digest`, so a guess is
never compared with a secret character by character.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from ...errors import NotFoundError, RateLimitedError
from ...model.access_tokens import Token

__all__ = [
    "CODE_SECONDS",
    "LINK_SECONDS",
    "MAX_SESSIONS",
    "SESSION_SECONDS",
    "Session",
    "Sessions",
    "keyboard_owner",
]

CODE_SECONDS = 600.0  # a sign-in link works this long after it is printed
SESSION_SECONDS = 12 * 3600.0  # a session ends this long after it began (sooner with its token)
MAX_SESSIONS = 64
LINK_SECONDS = 5.0  # between two links asked for from the page: each one is a line in the terminal
_SECRET_MAX = 200  # characters of a code or cookie looked at; anything longer is no code
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def keyboard_owner() -> str:
    """The handle of the person at the keyboard (the login name, as notes' author), or "owner"."""
    try:
        name = getpass.getuser()
    except (OSError, KeyError):  # no login name in a bare container
        return "owner"
    return name if _NAME.fullmatch(name) else "owner"


def _digest(secret: object) -> str | None:
    if not isinstance(secret, str) or not 0 < len(secret) <= _SECRET_MAX:
        return None
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Session:
    """Who a cookie signs in: *token* (the owner's, for a link), the typed token's *secret*
    (checked again on every request, so revoking the token ends the session), and when it ends."""

    token: Token
    secret: str | None
    ends: float  # seconds since the epoch
    via: str  # "link" or "token"

    @property
    def ends_at(self) -> str:
        return _iso(self.ends)


class Sessions:
    """The sign-in codes and sessions of one server.

    *announce*: where a new sign-in link is said (the terminal ``notewell serve`` runs in);
    None: this server makes no links (a non-loopback bind not asked to), and only a typed
    token signs in. *base*: the server's URL, which a link starts with."""

    def __init__(
        self,
        *,
        announce: Callable[[str], None] | None = None,
        base: str = "",
        owner: str | None = None,
        code_seconds: float = CODE_SECONDS,
        session_seconds: float = SESSION_SECONDS,
        max_sessions: int = MAX_SESSIONS,
        link_seconds: float = LINK_SECONDS,
    ) -> None:
        self.announce = announce
        self.base = base.rstrip("/")
        self.owner = owner or keyboard_owner()
        self.code_seconds, self.session_seconds = code_seconds, session_seconds
        self.max_sessions, self.link_seconds = max(1, max_sessions), link_seconds
        self._lock = threading.Lock()
        self._code: tuple[str, float] | None = None  # the pending code's digest, and when it stops working
        self._last_link = -float("inf")
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # by the cookie's digest, oldest first

    @property
    def links(self) -> bool:
        """Whether this server makes sign-in links."""
        return self.announce is not None

    def new_link(self, *, asked: bool = True) -> str:
        """A fresh sign-in link, said through *announce*; the pending one stops working.
        *asked*: from the page, at most one every ``link_seconds`` (the server's own first one is not)."""
        if self.announce is None:
            raise NotFoundError("this server makes no sign-in links (serve on 127.0.0.1, or with --sign-in-link)")
        code = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            wait = self._last_link + self.link_seconds - now
            if asked and wait > 0:
                raise RateLimitedError(f"a sign-in link was printed a moment ago: retry in {wait:.1f} s", wait)
            self._last_link = now
            self._code = (hashlib.sha256(code.encode()).hexdigest(), time.time() + self.code_seconds)
        link = f"{self.base}/signin?code={code}"
        self.announce(link)
        return link

    def redeem(self, code: object) -> tuple[str, Session] | None:
        """A new owner session for the pending *code* (its cookie value and the session), or None
        when the code is not the pending one or has expired. Used or expired, it is gone."""
        digest = _digest(code)
        with self._lock:
            pending = self._code
            if pending is None:
                return None
            if time.time() >= pending[1]:
                self._code = None
                return None
            if digest is None or not hmac.compare_digest(digest, pending[0]):
                return None
            self._code = None
            token = Token(self.owner, owner=True, created_at=_iso(time.time()))
            return self._open(token, None, "link", time.time() + self.session_seconds)

    def sign_in(self, token: Token, secret: str) -> tuple[str, Session]:
        """A session for a typed token (already verified); it ends when the token expires, if sooner."""
        ends = time.time() + self.session_seconds
        if token.expires_at:
            try:
                ends = min(ends, datetime.fromisoformat(token.expires_at.replace("Z", "+00:00")).timestamp())
            except ValueError:
                ends = time.time()
        with self._lock:
            return self._open(token, secret, "token", ends)

    def _open(self, token: Token, secret: str | None, via: str, ends: float) -> tuple[str, Session]:
        """Called with the lock held: the new session, the oldest ended if there are too many."""
        self._drop_ended()
        while len(self._sessions) >= self.max_sessions:
            self._sessions.popitem(last=False)
        value = secrets.token_urlsafe(32)
        session = Session(token, secret, ends, via)
        self._sessions[hashlib.sha256(value.encode()).hexdigest()] = session
        return value, session

    def _drop_ended(self) -> None:
        now = time.time()
        for key in [key for key, session in self._sessions.items() if session.ends <= now]:
            del self._sessions[key]

    def find(self, value: object) -> Session | None:
        """The live session a cookie *value* names, or None."""
        digest = _digest(value)
        if digest is None:
            return None
        with self._lock:
            session = self._sessions.get(digest)
            if session is not None and session.ends <= time.time():
                del self._sessions[digest]
                return None
            return session

    def end(self, value: object) -> bool:
        """End the session a cookie *value* names; whether there was one."""
        digest = _digest(value)
        with self._lock:
            return digest is not None and self._sessions.pop(digest, None) is not None

    def count(self) -> int:
        """How many sessions live."""
        with self._lock:
            self._drop_ended()
            return len(self._sessions)
