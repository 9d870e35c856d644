"""Bearer tokens for the servers: who a request comes from, stored hashed.

``notewell token create NAME [--read-only] [--owner]`` makes one and prints its secret once;
the store keeps only the secret's SHA-256 in ``.notewell/tokens.json`` (beside the index,
never in the notes folder, so it is not committed with the notes); a store in PostgreSQL
keeps them in its ``tokens`` table (:mod:`notewell.services.pg_tokens`), shared by all its
servers. A token's name is the caller's handle: the author of what it writes and the owner
it is matched against for private projects. An owner token administers the store (sees and
edits everything). The rules for names, secrets and expiry are here, once, for both books.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeGuard

from ..errors import InvalidArgumentError, NotFoundError, StorageError
from ..model.timestamps import now_iso
from ..model.visibility import Viewer

__all__ = [
    "TOKEN_PREFIX",
    "Token",
    "TokenBook",
    "Tokens",
    "digest_of",
    "expiry",
    "name_taken_error",
    "new_token",
    "unknown_token_error",
    "well_formed",
]

TOKEN_PREFIX = "nwt_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_FILE = "tokens.json"


@dataclass(frozen=True, slots=True)
class Token:
    """What a token grants: a handle, read-only or not, owner (administrator) or not."""

    name: str
    read_only: bool = False
    owner: bool = False
    created_at: str = ""
    expires_at: str = ""  # an ISO time in UTC; "" never expires

    def expired(self, now: datetime | None = None) -> bool:
        if not self.expires_at:
            return False
        now = now or datetime.now(UTC)
        try:
            return datetime.fromisoformat(self.expires_at.replace("Z", "+00:00")) <= now
        except ValueError:
            return True  # an expiry that cannot be read is not a licence to go on

    @property
    def viewer(self) -> Viewer:
        return Viewer(handle=self.name, admin=self.owner)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_LIFETIME = re.compile(r"(\d{1,6})\s*([mhdw])")


def expiry(value: str, now: datetime | None = None) -> str:
    """When a token given *value* (``30d``, ``12h``, ``90m``, ``2w``, or an ISO date or time)
    expires, as an ISO time in UTC; InvalidArgumentError for anything else or a time past."""
    now = now or datetime.now(UTC)
    text = value.strip().lower() if isinstance(value, str) else ""
    if m := _LIFETIME.fullmatch(text):
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        when = now + timedelta(**{unit: int(m.group(1))})
    else:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except (ValueError, AttributeError):
            raise InvalidArgumentError(
                f"an expiry is a lifetime like 30d, 12h or 90m, or an ISO date; got {value!r}"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
    if when <= now:
        raise InvalidArgumentError(f"the expiry {value!r} is already past")
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def well_formed(secret: object) -> TypeGuard[str]:
    """Whether *secret* has the shape of a token's secret (anything else is never looked up)."""
    return isinstance(secret, str) and secret.startswith(TOKEN_PREFIX) and len(secret) <= 200


def digest_of(secret: str | None) -> str | None:
    """What a book keeps of *secret* and looks it up by (its SHA-256, so a guess is never
    compared with a real secret character by character); None when it is not well formed."""
    return _digest(secret) if well_formed(secret) else None


def new_token(
    name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
) -> tuple[Token, str, str]:
    """A checked new token: the token, its secret (to show once) and the secret's digest (to keep).
    *expires*: a lifetime (``30d``, ``12h``, ``90m``) or an ISO date or time (UTC)."""
    expires_at = expiry(expires) if expires else ""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidArgumentError(
            f"a token name is 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit; got {name!r}"
        )
    if read_only and owner:
        raise InvalidArgumentError("an owner token cannot be read-only")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return Token(name, bool(read_only), bool(owner), now_iso(), expires_at), secret, _digest(secret)


def name_taken_error(name: str) -> InvalidArgumentError:
    """The error for creating a token under a name one has already (both books say it alike)."""
    return InvalidArgumentError(f"a token named {name!r} exists (revoke it first)")


def unknown_token_error(name: str) -> NotFoundError:
    """The error for revoking a token no book has."""
    return NotFoundError(f"no token named {name!r}")


class Tokens(Protocol):
    """What the servers need of a token book (:class:`TokenBook`, or a database's)."""

    def create(
        self, name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
    ) -> tuple[Token, str]: ...

    def verify(self, secret: str | None) -> Token | None: ...

    def list(self) -> list[Token]: ...

    def revoke(self, name: str) -> Token: ...


class TokenBook:
    """The tokens of one store (a small JSON file, re-read when it changes on disk)."""

    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / _FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, Token] = {}
        self._raw: list[dict[str, Any]] = []

    def _load(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._by_digest, self._raw = None, {}, []
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            entries = [e for e in raw.get("tokens", []) if isinstance(e, dict) and "sha256" in e and "name" in e]
        except (OSError, ValueError, AttributeError) as exc:
            raise StorageError(f"cannot read the tokens file {self.path}: {exc}") from None
        self._raw = entries
        self._by_digest = {
            e["sha256"]: Token(
                e["name"],
                bool(e.get("read_only")),
                bool(e.get("owner")),
                str(e.get("created_at", "")),
                str(e.get("expires_at") or ""),
            )
            for e in entries
        }
        self._stamp = stamp

    @contextlib.contextmanager
    def _exclusive(self):  # noqa: ANN202
        """Hold the tokens file for a read-change-write: other processes (`notewell token`) wait."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._stamp = None  # re-read under the lock
                self._load()
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        data = json.dumps({"tokens": self._raw}, indent=1, ensure_ascii=False)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise StorageError(f"cannot write the tokens file {self.path}: {exc.strerror}") from None
        self._stamp = None  # re-read next time (picks up the new mtime)

    def create(
        self, name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
    ) -> tuple[Token, str]:
        """A new token named *name*; returns it with its secret (shown once, stored hashed).
        *expires*: a lifetime (``30d``, ``12h``, ``90m``) or an ISO date or time (UTC)."""
        token, secret, digest = new_token(name, read_only=read_only, owner=owner, expires=expires)
        with self._exclusive():
            if any(e["name"] == name for e in self._raw):
                raise name_taken_error(name)
            self._raw.append({"sha256": digest, **token.to_dict()})
            self._save()
            return token, secret

    def verify(self, secret: str | None) -> Token | None:
        """The token whose secret this is, or None."""
        if not well_formed(secret):
            return None
        with self._lock:
            self._load()
            return self._by_digest.get(_digest(secret))

    def list(self) -> list[Token]:
        with self._lock:
            self._load()
            return sorted(self._by_digest.values(), key=lambda t: t.name)

    def revoke(self, name: str) -> Token:
        with self._exclusive():
            kept = [e for e in self._raw if e["name"] != name]
            if len(kept) == len(self._raw):
                raise unknown_token_error(name)
            gone = next(t for t in self._by_digest.values() if t.name == name)
            self._raw = kept
            self._save()
            return gone
