"""Opening a store: the one place that asks which backend a path or URL names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..backends.postgres.db import is_database_url
from ..errors import InvalidArgumentError
from ..settings import setting
from .contract import NoteStore

__all__ = ["location_from_environment", "open_store"]

_DATABASE_OPTIONS = {"max_bytes", "pool_size", "create", "embedder"}


def open_store(path: str | os.PathLike[str] = "notes", **options: Any) -> NoteStore:
    """Open (or create) the store in *path*. Options: max_bytes, watch, busy_timeout, create,
    embedder ('default', None, an embedder or a function making one), ann (True, or the number
    of passages from which semantic search uses an approximate index; needs the 'ann' extra),
    quick_check_from (from this many notes, reads look only at the folders that changed since
    the last look; see ``full_check_owed``).

    A ``postgresql://`` URL opens the store in that database instead (a :class:`notewell.services.pg_store.PgStore`;
    needs the 'postgres' extra; options: max_bytes, pool_size, create, embedder)."""
    if is_database_url(path):
        from .pg_store import PgStore

        unknown = sorted(set(options) - _DATABASE_OPTIONS)
        if unknown:
            raise InvalidArgumentError(
                f"a PostgreSQL store takes max_bytes, pool_size, create and embedder, not {', '.join(unknown)}"
                " (this command works on a notes folder)"
            )
        return PgStore(str(path), **options)
    from .store import Store

    return Store(path, **options)


def location_from_environment(env: Mapping[str, str] = os.environ) -> str:
    """Where a caller that names no store works: $NOTEWELL_DATABASE, else $NOTEWELL_STORE, else
    ``./notes`` (as the CLI without --store or --database; both set is an error)."""
    database, folder = setting("NOTEWELL_DATABASE", env) or "", setting("NOTEWELL_STORE", env) or ""
    if database and folder:
        raise InvalidArgumentError("NOTEWELL_STORE and NOTEWELL_DATABASE are both set: name the store to use")
    return database or folder or "notes"
