"""Bearer tokens for the servers: who a request comes from, and the rules both books follow.

``notewell token create NAME [--read-only] [--owner]`` makes one and prints its secret once;
a book keeps only the secret's SHA-256: a folder store in ``.notewell/tokens.json``
(:class:`notewell.backends.sqlite.tokens.TokenBook`), a store in PostgreSQL in its ``tokens``
table, shared by all its servers (:class:`notewell.backends.postgres.tokens.PgTokenBook`).
A token's name is the caller's handle: the author of what it writes and the owner it is
matched against for private projects. An owner token administers the store (sees and edits
everything). The rules for names, secrets and expiry are here, once, for both books.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeGuard

from ..errors import InvalidArgumentError, NotFoundError
from .redaction import sensitive_spans
from .timestamps import now_iso
from .visibility import Viewer, handle_namespace

__all__ = [
    "TOKEN_PREFIX",
    "Token",
    "Tokens",
    "digest_of",
    "expiry",
    "name_taken_error",
    "namespace_holder",
    "new_token",
    "secret_digest",
    "unknown_token_error",
    "well_formed",
]

TOKEN_PREFIX = "nwt_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


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


def secret_digest(secret: str) -> str:
    """The SHA-256 a book keeps of a well-formed *secret*."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def well_formed(secret: object) -> TypeGuard[str]:
    """Whether *secret* has the shape of a token's secret (anything else is never looked up)."""
    return isinstance(secret, str) and secret.startswith(TOKEN_PREFIX) and len(secret) <= 200


def digest_of(secret: str | None) -> str | None:
    """What a book keeps of *secret* and looks it up by (its SHA-256, so a guess is never
    compared with a real secret character by character); None when it is not well formed."""
    return secret_digest(secret) if well_formed(secret) else None


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
    if sensitive_spans(name):
        # A name is the caller's handle, kept as the author of what it writes: a store masks it
        # there (and in its namespace), and the caller could no longer change its own notes.
        raise InvalidArgumentError("a token name must not look like a key, a token or personal data")
    if read_only and owner:
        raise InvalidArgumentError("an owner token cannot be read-only")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return Token(name, bool(read_only), bool(owner), now_iso(), expires_at), secret, secret_digest(secret)


def name_taken_error(name: str, held_by: str | None = None) -> InvalidArgumentError:
    """The error for creating a token under a name one has already, or one that stands for the
    same namespace (``Bob`` beside ``bob``): both books say it alike."""
    if held_by is not None and held_by != name:
        return InvalidArgumentError(
            f"token name {name!r} stands for the namespace {handle_namespace(name)}, which token {held_by!r} holds"
            " (names differing only in case or '@' are one caller)"
        )
    return InvalidArgumentError(f"a token named {name!r} exists (revoke it first)")


def namespace_holder(name: str, names: Iterable[str]) -> str | None:
    """The first of *names* that stands for the same namespace as *name*, or None."""
    mine = handle_namespace(name)
    return next((other for other in names if handle_namespace(other) == mine), None)


def unknown_token_error(name: str) -> NotFoundError:
    """The error for revoking a token no book has."""
    return NotFoundError(f"no token named {name!r}")


class Tokens(Protocol):
    """What the servers need of a token book (a folder store's file, or a database's table)."""

    def create(
        self, name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
    ) -> tuple[Token, str]: ...

    def verify(self, secret: str | None) -> Token | None: ...

    def list(self) -> list[Token]: ...

    def revoke(self, name: str) -> Token: ...
