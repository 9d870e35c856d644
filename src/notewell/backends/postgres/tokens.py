"""Bearer tokens kept in the PostgreSQL database, shared by every server of that database.

The same book as :class:`~notewell.backends.sqlite.tokens.TokenBook` (the same names, secrets,
expiry and errors), in the ``tokens`` table: only each secret's SHA-256 is stored. A check
looks the digest up in the table every time (no copy kept in memory), so a token revoked
through one server, or by ``notewell token revoke``, is refused by all of them at once.
"""

from __future__ import annotations

from ...model.access_tokens import (
    Token,
    digest_of,
    name_taken_error,
    namespace_holder,
    new_token,
    unknown_token_error,
)
from .db import PgDatabase

__all__ = ["PgTokenBook"]

_COLUMNS = "name, read_only, owner, created_at, expires_at"


def _token(row: tuple[str, bool, bool, str, str]) -> Token:
    name, read_only, owner, created_at, expires_at = row
    return Token(name, bool(read_only), bool(owner), created_at or "", expires_at or "")


class PgTokenBook:
    """The tokens of a store in PostgreSQL (the ``tokens`` table)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def create(
        self, name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
    ) -> tuple[Token, str]:
        """A new token named *name*; returns it with its secret (shown once, stored hashed).
        *expires*: a lifetime (``30d``, ``12h``, ``90m``) or an ISO date or time (UTC)."""
        token, secret, digest = new_token(name, read_only=read_only, owner=owner, expires=expires)
        with self._db.transaction() as conn:
            # Writers wait for each other here (readers do not), so two names that stand for one
            # namespace cannot both go in; ON CONFLICT stays for the plain case.
            conn.execute("LOCK TABLE tokens IN SHARE ROW EXCLUSIVE MODE")
            held_by = namespace_holder(name, (row[0] for row in conn.execute("SELECT name FROM tokens")))
            if held_by is not None:
                raise name_taken_error(name, held_by)
            made = conn.execute(
                "INSERT INTO tokens(name, sha256, read_only, owner, created_at, expires_at)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING RETURNING name",
                (token.name, digest, token.read_only, token.owner, token.created_at, token.expires_at),
            ).fetchone()
        if made is None:
            raise name_taken_error(name)
        return token, secret

    def verify(self, secret: str | None) -> Token | None:
        """The token whose secret this is, or None (looked up by the secret's digest, each time)."""
        digest = digest_of(secret)
        if digest is None:
            return None
        with self._db.transaction() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE sha256 = %s", (digest,)).fetchone()
        return _token(row) if row else None

    def list(self) -> list[Token]:
        """Every token, by name (code point order, as the file book sorts)."""
        with self._db.transaction() as conn:
            rows = conn.execute(f'SELECT {_COLUMNS} FROM tokens ORDER BY name COLLATE "C"').fetchall()
        return [_token(r) for r in rows]

    def revoke(self, name: str) -> Token:
        """Remove the token named *name*; every server refuses its secret from now on."""
        with self._db.transaction() as conn:
            row = conn.execute(f"DELETE FROM tokens WHERE name = %s RETURNING {_COLUMNS}", (name,)).fetchone()
        if row is None:
            raise unknown_token_error(name)
        return _token(row)
