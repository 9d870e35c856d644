"""Opening a store: the one place that names a backend.

:class:`Store` is the note service on a folder (SQLite beside it), :class:`PgStore` on a
PostgreSQL database; :func:`open_store` picks one from a path or URL. Each adds to the
service only what its kind of store has (a folder's refresh and reindex, a database's
export and import). A new backend is a package under ``backends/`` and a line here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.postgres.db import is_database_url
from ..backends.sqlite.backend import SqliteBackend
from ..backends.sqlite.sync import SyncReport
from ..errors import InvalidArgumentError, NotewellError
from ..model.note import DEFAULT_MAX_BYTES
from ..model.progress import Progress
from ..search.embedder_slot import EmbedderSpec
from ..settings import setting
from .contract import NoteStore
from .service import NoteService

if TYPE_CHECKING:  # imported when a database is opened: a folder's store never loads it
    from ..backends.postgres.backend import PostgresBackend  # noqa: F401 - named in PgStore's base

__all__ = ["PgStore", "Store", "location_from_environment", "open_store"]


class Store(NoteService[SqliteBackend]):
    """A notes folder and its index. Use :func:`notewell.open` to get one."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        watch: bool = True,
        busy_timeout: float = 60.0,
        create: bool = True,
        embedder: EmbedderSpec = "default",
        ann: bool | int = False,
        progress: Progress | None = None,
        quick_check_from: int | None = None,
        redact: str | None = None,
    ) -> None:
        backend = SqliteBackend(
            path,
            max_bytes=max_bytes,
            watch=watch,
            busy_timeout=busy_timeout,
            create=create,
            embedder=embedder,
            ann=ann,
            progress=progress,
            quick_check_from=quick_check_from,
        )
        super().__init__(backend, redact=redact)

    def __repr__(self) -> str:
        return f"<notewell.Store {str(self.root)!r}>"

    @property
    def root(self) -> Path:
        """The notes folder."""
        return self.backend.root

    @property
    def last_check(self) -> str:
        """How the last read was brought up to date: scan, quick, inotify, watcher or deferred."""
        return self.backend.last_check

    @property
    def last_sync(self) -> SyncReport:
        """What the last catch-up with the folder found."""
        return self.backend.last_sync

    @property
    def last_scan_size(self) -> int:
        """Files seen by the last whole-folder check."""
        return self.backend.last_scan_size

    @property
    def full_check_owed(self) -> bool:
        """A quick look served the reads; a full check of every file is still owed (refresh() makes it)."""
        return self.backend.full_check_owed

    @property
    def built_on_open(self) -> bool:
        """This open made the index (none was there, or another version's)."""
        return self.backend.built_on_open

    def refresh(self, *, wait: bool = True) -> SyncReport:
        """Pick up changes made outside notewell (runs before every read); with ``wait=False``
        another process's write lock is not waited for (for a while)."""
        return self.backend.refresh(wait=wait)

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Rebuild the index from the folder; vectors of unchanged passages are kept."""
        return self.backend.reindex(progress)

    def problems(self) -> list[dict[str, str]]:
        """Files in the folder that could not be indexed, with the reason."""
        return self.backend.problems()

    def transfer_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Every live and deleted note, attempt, project setting and read: what a move elsewhere needs."""
        return self.backend.transfer_rows()

    def kept_revision(self, note_id: str, revision: int) -> bytes | None:
        """The kept text of an earlier revision of a note (None when it was not kept)."""
        return self.backend.kept_revision(note_id, revision)

    def watch_forever(
        self,
        stop: threading.Event | None = None,
        on_error: Callable[[NotewellError], None] | None = None,
        *,
        idle_exit: float | None = None,
        on_beat: Callable[[], None] | None = None,
    ) -> bool:
        """Keep the index in step with the folder until *stop* is set (``notewell watch``);
        other processes then ask this watcher instead of checking the folder."""
        return self.backend.watching.watch_forever(stop, on_error, idle_exit=idle_exit, on_beat=on_beat)

    def watcher_pid(self) -> int | None:
        """The pid of another process watching this store, if one is alive and beating."""
        return self.backend.watching.watcher_pid()

    def watcher(self) -> dict[str, Any] | None:
        """The process watching this store, if one is alive and beating: ``pid``, ``started``,
        ``beat``, and for one started on demand ``idle_exit`` and ``asked`` (epoch seconds)."""
        return self.backend.watching.watcher()

    def note_question(self) -> None:
        """Count a question asked other than by cookie, for an on-demand watcher's idle timer."""
        self.backend.watching.note_question()


class PgStore(NoteService["PostgresBackend"]):
    """Notes in a PostgreSQL database (``notewell.open("postgresql://…")``)."""

    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        pool_size: int = 8,
        create: bool = True,
        embedder: EmbedderSpec = "default",
        redact: str | None = None,
    ) -> None:
        from ..backends.postgres.backend import PostgresBackend

        super().__init__(
            PostgresBackend(url, max_bytes=max_bytes, pool_size=pool_size, create=create, embedder=embedder),
            redact=redact,
        )

    def __repr__(self) -> str:
        return f"<notewell.PgStore {self.address}>"

    @property
    def url(self) -> str:
        """The database's URL (with its password, if it has one: not for showing)."""
        return self.backend.url

    @property
    def address(self) -> str:
        """Where the database is, ``user@host:port/dbname``: never the password."""
        return self.backend.address

    def export_folder(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Write the store into a new or empty *folder* as the embedded store keeps one (notes,
        journal, earlier revisions): ids, authors, times and revisions survive."""
        return self.backend.export_folder(folder)

    def import_folder(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Load the embedded store in *folder* into this (empty) database, history and all."""
        root = Path(folder)
        if not root.is_dir():
            raise InvalidArgumentError(f"{root} is not a folder")
        self.backend.check_empty()
        # The folder is read the way the embedded store reads it.
        with Store(root, watch=False, embedder=None, create=False, max_bytes=self.max_bytes) as source:
            return self.backend.import_folder(source)


_DATABASE_OPTIONS = {"max_bytes", "pool_size", "create", "embedder", "redact"}


def open_store(path: str | os.PathLike[str] = "notes", **options: Any) -> NoteStore:
    """Open (or create) the store in *path*. Options: max_bytes, watch, busy_timeout, create,
    embedder ('default', None, an embedder or a function making one), ann (True, or the number
    of passages from which semantic search uses an approximate index; needs the 'ann' extra),
    quick_check_from (from this many notes, reads look only at the folders that changed since
    the last look; see ``full_check_owed``), redact (``mask``, ``refuse`` or ``off``: what a write
    does with a secret or personal data; default $NOTEWELL_REDACT, else mask).

    A ``postgresql://`` URL opens the store in that database instead (a :class:`PgStore`;
    needs the 'postgres' extra; options: max_bytes, pool_size, create, embedder)."""
    if is_database_url(path):
        unknown = sorted(set(options) - _DATABASE_OPTIONS)
        if unknown:
            raise InvalidArgumentError(
                f"a PostgreSQL store takes max_bytes, pool_size, create, embedder and redact, not {', '.join(unknown)}"
                " (this command works on a notes folder)"
            )
        return PgStore(str(path), **options)
    return Store(path, **options)


def location_from_environment(env: Mapping[str, str] = os.environ) -> str:
    """Where a caller that names no store works: $NOTEWELL_DATABASE, else $NOTEWELL_STORE, else
    ``./notes`` (as the CLI without --store or --database; both set is an error)."""
    database, folder = setting("NOTEWELL_DATABASE", env) or "", setting("NOTEWELL_STORE", env) or ""
    if database and folder:
        raise InvalidArgumentError("NOTEWELL_STORE and NOTEWELL_DATABASE are both set: name the store to use")
    return database or folder or "notes"
