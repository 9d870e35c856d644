"""The bearer tokens of a folder store: ``.notewell/tokens.json`` beside the index.

Only each secret's SHA-256 is kept, never in the notes folder (so it is not committed with
the notes). The rules for names, secrets and expiry are :mod:`notewell.model.access_tokens`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import StorageError
from ...model.access_tokens import (
    Token,
    name_taken_error,
    namespace_holder,
    new_token,
    secret_digest,
    unknown_token_error,
    well_formed,
)

__all__ = ["TokenBook"]

_FILE = "tokens.json"


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
    def _exclusive(self) -> Iterator[None]:
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
            held_by = namespace_holder(name, (e["name"] for e in self._raw))
            if held_by is not None:
                raise name_taken_error(name, held_by)
            self._raw.append({"sha256": digest, **token.to_dict()})
            self._save()
            return token, secret

    def verify(self, secret: str | None) -> Token | None:
        """The token whose secret this is, or None."""
        if not well_formed(secret):
            return None
        with self._lock:
            self._load()
            return self._by_digest.get(secret_digest(secret))

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
