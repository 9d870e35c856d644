"""The SQLite index: opening (and self-repair), transactions, and the rows for a note.

Every write of a note updates note_index, note_text, note_tags, note_links and notes_fts
in one transaction; sqlite3 errors are turned into notewell errors here and
nowhere above.

One connection writes (and serves whoever is not reading: its callers hold the store's
lock). A thread inside :meth:`Index.reading` reads through a read-only connection of its
own instead, so reads on many threads run at once, beside a write (WAL): each sees the
index as last committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ...errors import BusyError, StorageError
from ...model.header import ParsedNote
from ...search.meta_tokens import meta_token
from .fts_rows import delete_fts, insert_fts_many
from .old_revision_rows import forget_old_revisions
from .rebuild import recover
from .schema import GONE_INDEX, NOTE_INDEXES, SCHEMA, SCHEMA_VERSION, configure

__all__ = [
    "INDEX_DIR",
    "CorruptIndexError",
    "Index",
    "IndexRow",
    "JournalMeta",
    "LockHeld",
    "PathRow",
    "schema_outdated",
    "translated",
]

INDEX_DIR = ".notewell"
VECTOR_LOG_KEEP = 50_000  # vector changes a process may be behind and still catch up
# Each reading thread has a page cache of its own: smaller than the writer's (bulk FTS5
# inserts want a big one), since a server may have dozens of threads and the kernel's page
# cache holds the file for them all anyway.
_READ_CACHE_KIB = 16_000


@dataclass(slots=True)
class IndexRow:
    """Everything the index keeps about one note file."""

    id: str
    path: str
    title: str
    kind: str | None
    model: str | None
    summary: str | None
    tags: list[str]
    builds_on: list[str]
    author: str | None
    created_at: str
    updated_at: str
    revision: int
    mtime_ns: int
    size: int
    sha256: str
    text: str
    body: str
    header: dict[str, Any] | None = None  # parsed once, reused by the caller; not stored
    extra: list[str] = field(default_factory=list)
    attempt_id: str | None = None
    note_kind: str = "note"
    supersedes: list[str] = field(default_factory=list)


def row_fields(parsed: ParsedNote) -> dict[str, Any]:
    """The header fields an index row takes from a parsed note."""
    header = parsed.header or {}
    return {
        "kind": header.get("kind"),
        "model": header.get("model"),
        "summary": header.get("summary"),
        "tags": list(header.get("tags", [])),
        "builds_on": list(header.get("builds_on", [])),
        "supersedes": list(header.get("supersedes", [])),
    }


def meta_tokens(row: IndexRow, project: str | None = None) -> str:
    """The notes_fts.meta text of a note: one token per value a search can filter on."""
    tokens = [meta_token("t", t) for t in row.tags]
    # No campaign token: a campaign can be set on the project later; a campaign filter
    # becomes its projects' tokens when the search runs.
    for letter, value in (("x", row.attempt_id), ("p", project)):
        if value:
            tokens.append(meta_token(letter, value))
    tokens += [meta_token("b", b) for b in row.builds_on]
    for letter, value in (("k", row.kind), ("a", row.author), ("m", row.model)):
        if value:
            tokens.append(meta_token(letter, value))
    return " ".join(tokens)


_INDEX_COLUMNS = (
    "id, path, title, kind, model, summary, tags, builds_on, author,"
    " created_at, updated_at, revision, mtime_ns, size, sha256, attempt_id, note_kind"
)
_INDEX_MARKS = ",".join("?" * 18)  # the rowid, then _INDEX_COLUMNS
_META_COLUMNS = "id, path, author, model, created_at, updated_at, revision, sha256, deleted, attempt, note_kind"


class JournalMeta(NamedTuple):
    """What the journal says of a note id (journal_meta's row), whether or not it is indexed."""

    id: str
    path: str | None
    author: str | None
    model: str | None
    created_at: str
    updated_at: str
    revision: int
    sha256: str | None
    deleted: int
    attempt: str | None
    note_kind: str | None


class PathRow(NamedTuple):
    """The index's row of a note at a path, as a sync compares it with the file."""

    rowid: int
    id: str
    path: str
    mtime_ns: int
    size: int
    sha256: str
    revision: int


def _index_values(row: IndexRow) -> tuple:
    """note_index's _INDEX_COLUMNS of a row (tags and builds_on as JSON)."""
    return (
        row.id,
        row.path,
        row.title,
        row.kind,
        row.model,
        row.summary,
        json.dumps(row.tags, ensure_ascii=False),
        json.dumps(row.builds_on),
        row.author,
        row.created_at,
        row.updated_at,
        row.revision,
        row.mtime_ns,
        row.size,
        row.sha256,
        row.attempt_id,
        row.note_kind,
    )


_MALFORMED = (
    sqlite3.InterfaceError,
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    AttributeError,
    LookupError,
    TypeError,
    ValueError,
)
_ADD_META = (
    "INSERT INTO journal_meta(id, path, author, model, created_at, updated_at, revision,"
    " sha256, deleted, attempt, note_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)"
    " ON CONFLICT(id) DO UPDATE SET path = excluded.path, author = excluded.author,"
    " model = excluded.model, created_at = excluded.created_at,"
    " updated_at = excluded.updated_at, revision = excluded.revision,"
    " sha256 = excluded.sha256, deleted = 0, attempt = excluded.attempt,"
    " note_kind = excluded.note_kind"
)
_ADD_REVISION = (
    "INSERT OR REPLACE INTO revisions(id, revision, op, at, author, sha256, size) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _parts(values: Sequence[Any], size: int = 10_000) -> Iterator[list[Any]]:
    """*values* in lists of *size*: each a statement's parameters, under SQLite's limit."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def _plain_add(r: Any) -> bool:
    return isinstance(r, dict) and r.get("op") in ("add", "adopt") and isinstance(r.get("id"), str)


def _add_meta_values(r: dict[str, Any]) -> tuple:
    return (
        r["id"],
        r.get("path"),
        r.get("author"),
        r.get("model"),
        r.get("at"),
        r.get("at"),
        r.get("rev") or 1,
        r.get("sha256"),
        r.get("attempt"),
        r.get("note_kind"),
    )


def _revision_values(r: dict[str, Any]) -> tuple:
    return (r["id"], r["rev"], r["op"], r.get("at"), r.get("author"), r.get("sha256"), r.get("size"))


class LockHeld(BusyError):
    """The write lock was asked for without waiting and another writer holds it."""


class CorruptIndexError(StorageError):
    """The index database is damaged; the store throws it away and rebuilds it."""


@contextmanager
def translated() -> Iterator[None]:
    """Turn sqlite3 errors into notewell errors (the one place that does)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        text = str(exc)
        if _is_corrupt(exc):
            raise CorruptIndexError(f"the index is damaged ({text}); rebuild it with `notewell reindex`") from exc
        if "locked" in text or "busy" in text:
            raise BusyError(f"the store is busy ({text}); try again") from exc
        raise StorageError(f"index error: {text}") from exc


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("malformed", "not a database", "corrupt", "no such table", "no such column"))


class _Reader:
    """One thread's read connection; it is closed when the thread ends (its thread-local
    storage goes, and this with it) or when the index closes."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


def _forget(readers: dict[int, sqlite3.Connection], lock: threading.Lock, key: int) -> None:
    # Whoever takes a connection out of *readers* closes it: it is closed exactly once.
    with lock:
        conn = readers.pop(key, None)
    if conn is not None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


class Index:
    """A store's index database: one write connection, and a read connection per reading thread."""

    def __init__(self, root: Path, *, busy_timeout: float = 60.0) -> None:
        self.dir = root / INDEX_DIR
        self.path = self.dir / "index.db"
        self.busy_timeout = busy_timeout
        self._undo: list[Callable[[], object]] = []
        self.rebuilt = False  # True when this open had to (re)create the database
        self._local = threading.local()  # per thread: reading depth, writing flag, read connection
        self._readers: dict[int, sqlite3.Connection] = {}  # every open read connection
        self._readers_lock = threading.Lock()
        self._closed = False
        before = self._inode()
        self._writer = self._open()
        # The inode from before the connection: if another process's reindex puts a new
        # database in place meanwhile, replaced() tells at the next look (one reopen too many at
        # worst), where the inode read after could name the new file while this connection
        # holds the old one, and never tell. A database this open made itself is its own.
        self.inode = before if before is not None and not self.rebuilt else self._inode()

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection for the calling thread: its own read connection inside
        :meth:`reading` (unless it is writing), else the write connection."""
        local = self._local
        if getattr(local, "reading", 0) and not getattr(local, "writing", False):
            holder = getattr(local, "reader", None)
            if holder is None:
                holder = local.reader = self._new_reader()
            return holder.conn
        return self._writer

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Read through this thread's own read-only connection inside (a write transaction
        begun inside still writes through the write connection). Nests."""
        local = self._local
        depth = getattr(local, "reading", 0)
        local.reading = depth + 1
        try:
            yield
        finally:
            local.reading = depth

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction around the statements inside :meth:`reading`: they all see
        the index as committed when the first of them ran, whatever is written meanwhile."""
        conn = self.conn
        if conn is self._writer or conn.in_transaction:
            yield  # the caller holds the store's lock, or an outer snapshot is open
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")

    def _new_reader(self) -> _Reader:
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        with translated():
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                conn.execute("PRAGMA query_only = 1")  # a read that tried to write would fail, not write
                conn.execute("PRAGMA temp_store = MEMORY")
                conn.execute(f"PRAGMA cache_size = -{_READ_CACHE_KIB}")
            except BaseException:
                conn.close()
                raise
        holder = _Reader(conn)
        key = id(holder)
        with self._readers_lock:
            if self._closed:
                conn.close()
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            self._readers[key] = conn
        weakref.finalize(holder, _forget, self._readers, self._readers_lock, key)
        return holder

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._closed

    def readers(self) -> int:
        """How many read connections are open (one per thread that read and still runs)."""
        with self._readers_lock:
            return len(self._readers)

    def _inode(self) -> int | None:
        try:
            return os.stat(self.path).st_ino
        except OSError:
            return None

    def replaced(self) -> bool:
        """True when the database file is no longer the one this connection opened
        (another process ran `notewell reindex`, or it was deleted)."""
        return self._inode() != self.inode

    # -- opening and repair -------------------------------------------------

    def _ensure_dir(self) -> None:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # the index holds every note's text, and tokens
        ignore = self.dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# derived from the notes; rebuild with `notewell reindex`\n*\n", encoding="utf-8")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout)
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                configure(conn, busy_timeout_ms=int(self.busy_timeout * 1000))
                return conn
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(0.01)

    def _open(self) -> sqlite3.Connection:
        try:
            self._ensure_dir()
        except OSError as exc:
            raise StorageError(f"cannot create the index folder {self.dir}: {exc.strerror}") from exc
        recover(self.dir)  # a rebuild that crashed: its old index goes back in place
        for attempt in range(2):
            try:
                conn = self._connect()
                try:
                    self._ensure_schema(conn)
                except BaseException:
                    conn.close()
                    raise
                return conn
            except sqlite3.DatabaseError as exc:
                if attempt or not _is_corrupt(exc):
                    raise StorageError(f"cannot open the index {self.path}: {exc}") from exc
                self._discard_files()
        raise AssertionError("unreachable")

    def _discard_files(self) -> None:
        # The index is derived: a damaged one is thrown away and rebuilt from the folder.
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass
        for sidecar in self.dir.glob("vectors-*"):
            try:
                sidecar.unlink()
            except OSError:
                pass

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            conn.execute("SELECT count(*) FROM state").fetchone()
            # An index of an older version is rebuilt (its vectors taken over) before this
            # open; at this version only a rebuild cut short leaves something to make.
            if self._missing_indexes(conn):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for sql in (*NOTE_INDEXES, GONE_INDEX):
                        conn.execute(sql)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                if version != 0:
                    tables = conn.execute(
                        # An FTS5 table's own tables go with it.
                        "SELECT name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE 'sqlite_%'"
                        " AND name NOT GLOB 'notes_fts_*' AND name NOT GLOB 'titles_fts_*'"
                        " AND name NOT GLOB 'old_revisions_fts_*'"
                    ).fetchall()
                    for (name,) in tables:
                        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                for statement in SCHEMA.split(";\n"):
                    if statement.strip():
                        conn.execute(statement)
                for statement in NOTE_INDEXES:
                    conn.execute(statement)
                conn.execute("INSERT INTO state(key, value) VALUES ('vectors_generation', ?)", (secrets.token_hex(8),))
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self.rebuilt = True
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the write connection and every thread's read connection."""
        with self._readers_lock:
            self._closed = True
            readers = list(self._readers.values())
            self._readers.clear()
        for conn in readers:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._writer.close()

    @staticmethod
    def _missing_indexes(conn: sqlite3.Connection) -> bool:
        (count,) = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'note\\_%' ESCAPE '\\'"
            " AND sql IS NOT NULL"
        ).fetchone()
        return count < len(NOTE_INDEXES)

    def drop_note_indexes(self) -> None:
        """Drop the secondary indexes before a bulk load into an empty index (inside a
        write transaction); :meth:`make_note_indexes` makes them again."""
        for sql in NOTE_INDEXES:
            name = sql.split(" EXISTS ", 1)[1].split(" ", 1)[0]
            self.conn.execute(f"DROP INDEX IF EXISTS {name}")

    def make_note_indexes(self) -> None:
        for sql in NOTE_INDEXES:
            self.conn.execute(sql)

    # -- transactions -------------------------------------------------------

    @contextmanager
    def write(self, *, wait: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the store's write lock (BEGIN IMMEDIATE).

        With ``wait=False`` a lock held by another writer raises :class:`LockHeld` at once.
        """
        self._begin(wait)
        self._undo = []
        try:
            try:
                yield self._writer
            except BaseException:
                self._abort()
                raise
            try:
                self._writer.execute("COMMIT")
            except sqlite3.Error as exc:  # a full disk, an I/O error: the files must not say otherwise
                self._abort()
                raise StorageError(f"index error: {exc}; nothing was written") from exc
        finally:
            self._undo = []
            self._local.writing = False

    def _begin(self, wait: bool) -> None:
        # SQLite's own busy handler sleeps up to 100 ms between tries, so under a few busy
        # writers a waiter rarely finds the lock free and can starve for many seconds.
        # Asking every millisecond or so (backing off to 5 ms) keeps the wait near the
        # time the lock is actually held.
        conn = self._writer
        deadline = time.monotonic() + self.busy_timeout
        pause = 0.0005
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    self._local.writing = True  # this thread's statements go to the writer now
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise StorageError(f"index error: {exc}") from exc
                    if not wait:
                        raise LockHeld("another writer holds the store") from exc
                    if time.monotonic() > deadline:
                        raise BusyError(
                            f"another process held the store for over {self.busy_timeout:.0f}s; try again"
                        ) from exc
                    time.sleep(pause)
                    pause = min(pause * 1.5, 0.005)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    def on_abort(self, undo: Callable[[], object]) -> None:
        """Run *undo* if the current write transaction does not commit: while it still holds
        the write lock, so that no other writer sees (or appends after) what is undone."""
        self._undo.append(undo)

    def _abort(self) -> None:
        for undo in reversed(self._undo):
            try:
                undo()
            except OSError:  # best effort: what cannot be undone is found by the next check
                pass
        self._undo = []
        try:
            self._writer.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def query(self, sql: str, params: tuple | list | dict = ()) -> list[sqlite3.Row | tuple]:
        # Through translated(), so a damaged index surfaces as CorruptIndexError and gets rebuilt.
        with translated():
            return self.conn.execute(sql, params).fetchall()

    # -- state --------------------------------------------------------------

    def get_state(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_state(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (key, value))

    def remember(self, key: str, value: str) -> bool:
        """Store a cached value if the write lock is free right now; False when it is not, or
        when the disk is full. For what a reader merely saves itself work with: it never waits
        behind writers and never fails the read."""
        conn = self._writer
        try:
            self._begin(wait=False)
        except (BusyError, StorageError):
            return False
        try:
            self.set_state(key, value)
            conn.execute("COMMIT")
            return True
        except sqlite3.Error:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            return False
        finally:
            self._local.writing = False

    # -- journal, applied ---------------------------------------------------

    def apply_records(self, records: list[dict[str, Any]]) -> None:
        """Fold journal records into journal_meta and revisions (idempotent)."""
        start = 0
        while start < len(records):
            end = start
            while end < len(records) and _plain_add(records[end]):
                end += 1
            if end - start > 1 and self._apply_adds(records[start:end]):
                start = end
                continue
            for r in records[start : max(end, start + 1)]:
                try:
                    self._apply(r)
                except _MALFORMED:
                    continue  # a malformed line (a hand edit, a bad merge) is skipped, as an unreadable one is
            start = max(end, start + 1)

    def _apply_adds(self, records: list[dict[str, Any]]) -> bool:
        """:meth:`_apply` each of a run of add records, one statement per table for them all
        (a bulk load's journal); False, nothing changed, when one of them is refused."""
        c = self.conn
        c.execute("SAVEPOINT adds")
        try:
            c.executemany(_ADD_META, [_add_meta_values(r) for r in records])
            c.executemany(_ADD_REVISION, [_revision_values(r) for r in records if isinstance(r.get("rev"), int)])
        except _MALFORMED:
            c.execute("ROLLBACK TO adds")
            c.execute("RELEASE adds")
            return False  # one by one, skipping the refused one
        c.execute("RELEASE adds")
        return True

    def _apply(self, r: dict[str, Any]) -> None:
        """Fold one journal record into the index tables."""
        c = self.conn
        op, nid = r.get("op"), r["id"]
        if not isinstance(nid, str):
            return
        rev = r.get("rev")
        if op == "attempt":
            c.execute(
                "INSERT OR REPLACE INTO attempts(id, project, campaign, author, model, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (nid, r.get("project") or "", r.get("campaign"), r.get("author"), r.get("model"), r.get("at")),
            )
            return
        if op == "project":
            c.execute("INSERT OR IGNORE INTO projects(name) VALUES (?)", (nid,))
            for key in ("private", "owner", "campaign"):
                if key in r:
                    value = int(r[key] is True) if key == "private" else r[key]
                    c.execute(f"UPDATE projects SET {key} = ? WHERE name = ?", (value, nid))
            return
        if op == "read":
            c.execute(
                "INSERT OR IGNORE INTO attempt_reads(attempt, note, at) VALUES (?, ?, ?)",
                (r.get("attempt"), nid, r.get("at") or ""),
            )
            return
        if op == "attempt_end":
            c.execute(
                "UPDATE attempts SET ended_at = ?, outcome = ?, summary_note = ? WHERE id = ?",
                (r.get("at"), r.get("outcome"), r.get("summary"), nid),
            )
            return
        if op in ("add", "adopt"):
            c.execute(_ADD_META, _add_meta_values(r))
        elif op in ("edit", "change"):
            c.execute(
                "UPDATE journal_meta SET updated_at = ?, revision = max(revision, ?), sha256 = ?,"
                " path = coalesce(?, path), deleted = 0 WHERE id = ?",
                (r.get("at"), rev or 0, r.get("sha256"), r.get("path"), nid),
            )
        elif op == "move":
            c.execute("UPDATE journal_meta SET path = ?, deleted = 0 WHERE id = ?", (r.get("path"), nid))
        elif op in ("delete", "gone"):
            # When, for history (a note that comes back keeps its own times).
            c.execute(
                "UPDATE journal_meta SET deleted = 1, path = NULL, deleted_at = ? WHERE id = ?", (r.get("at"), nid)
            )
        else:
            return
        if op in ("add", "adopt", "edit", "change") and isinstance(rev, int):
            c.execute(_ADD_REVISION, _revision_values(r))

    def meta_for_path(self, path: str) -> JournalMeta | None:
        """What the journal says of the live note last at *path*."""
        row = self.conn.execute(
            f"SELECT {_META_COLUMNS} FROM journal_meta WHERE path = ? AND deleted = 0 ORDER BY updated_at DESC LIMIT 1",
            (path,),
        ).fetchone()
        return JournalMeta(*row) if row is not None else None

    def deleted_with(self, sha: str) -> str | None:
        """The id of the most recently deleted note whose last text had this hash."""
        row = self.conn.execute(
            "SELECT id FROM journal_meta WHERE sha256 = ? AND deleted = 1 ORDER BY updated_at DESC LIMIT 1", (sha,)
        ).fetchone()
        return row[0] if row else None

    def meta_for_id(self, note_id: str) -> JournalMeta | None:
        row = self.conn.execute(f"SELECT {_META_COLUMNS} FROM journal_meta WHERE id = ?", (note_id,)).fetchone()
        return JournalMeta(*row) if row is not None else None

    def metas_for_ids(self, note_ids: Sequence[str]) -> dict[str, JournalMeta]:
        """:meth:`meta_for_id` of each of *note_ids* that has a journal row, by id."""
        found: dict[str, JournalMeta] = {}
        for some in _parts(note_ids):
            marks = ",".join("?" * len(some))
            found.update(
                (r[0], JournalMeta(*r))
                for r in self.conn.execute(f"SELECT {_META_COLUMNS} FROM journal_meta WHERE id IN ({marks})", some)
            )
        return found

    def id_known(self, note_id: str) -> bool:
        """True when the id was ever used (live, deleted, or only journaled)."""
        # Every indexed note has a journal row (add, adopt, move or change), so one lookup does.
        return self.conn.execute("SELECT 1 FROM journal_meta WHERE id = ?", (note_id,)).fetchone() is not None

    # -- note rows ----------------------------------------------------------

    @staticmethod
    def _in_folder(rel: str) -> tuple[str, list[Any]]:
        """SQL for the paths directly in the folder *rel* ('' the root)."""
        if not rel:
            return "instr(path, '/') = 0", []
        # the range of paths under rel/, then those not in a subfolder ('0' follows '/')
        return "path > ? AND path < ? AND instr(substr(path, ?), '/') = 0", [rel + "/", rel + "0", len(rel) + 2]

    def count_in(self, rel: str, *, up_to: int) -> int:
        """How many notes the index has directly in the folder *rel*, counting no further than
        *up_to* (in SQL, no rows: the range of paths under it once at most)."""
        where, params = self._in_folder(rel)
        sql = f"SELECT count(*) FROM (SELECT 1 FROM note_index WHERE {where} LIMIT ?)"
        return self.conn.execute(sql, [*params, up_to]).fetchone()[0]

    def paths_in(self, rel: str) -> set[str]:
        """The paths of the files directly in the folder *rel* ('' the root) that the index
        knows: its notes, and the files it reports as problems."""
        where, params = self._in_folder(rel)
        found = {path for (path,) in self.conn.execute(f"SELECT path FROM note_index WHERE {where}", params)}
        found.update(path for (path,) in self.conn.execute(f"SELECT path FROM problems WHERE {where}", params))
        return found

    def compare_files(self, fs: dict[str, tuple[int, int]]) -> tuple[list[str], list[str], list[str], int]:
        """Compare a folder scan with the index: paths whose (mtime_ns, size) changed,
        indexed paths gone from the folder, paths not indexed yet, and how many are indexed.

        Streams a covering-index scan instead of loading the index into a dict: this runs
        before every read of a store that has no watcher."""
        changed: list[str] = []
        missing: list[str] = []
        known: set[str] = set()
        get = fs.get
        for path, mtime, size in self.conn.execute(
            "SELECT path, mtime_ns, size FROM note_index INDEXED BY note_index_files"
        ):
            known.add(path)
            state = get(path)
            if state is None:
                missing.append(path)
            elif state[0] != mtime or state[1] != size:
                changed.append(path)
        new = [p for p in fs if p not in known] if len(known) - len(missing) != len(fs) else []
        return changed, missing, new, len(known)

    def row_for_id(self, note_id: str) -> tuple | None:
        """(rowid, id, path, mtime_ns, size, sha256, revision) of a note, or None."""
        return self.conn.execute(
            "SELECT rowid, id, path, mtime_ns, size, sha256, revision FROM note_index WHERE id = ?", (note_id,)
        ).fetchone()

    def row_for_path(self, path: str) -> PathRow | None:
        """The index's row of the note at *path*, or None."""
        row = self.conn.execute(
            "SELECT rowid, id, path, mtime_ns, size, sha256, revision FROM note_index WHERE path = ?", (path,)
        ).fetchone()
        return PathRow(*row) if row is not None else None

    def optimize(self) -> None:
        """Merge the keyword index into one b-tree (worth it after a bulk load: searches
        then read one segment instead of many)."""
        with self.write():
            self.conn.execute("INSERT INTO notes_fts(notes_fts) VALUES('optimize')")
            self.conn.execute("INSERT INTO titles_fts(titles_fts) VALUES('optimize')")
        self.give_back_space()

    def give_back_space(self) -> None:
        """Return the free pages a bulk load leaves (the segments a merge replaced) to the file
        system, and the write-ahead log's too, without waiting for readers: what cannot be
        done at once now is done by later writes and checkpoints."""
        conn = self._writer
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            # A transaction of its own; executescript steps it to the end (execute() would free
            # one page). A no-op on an index made before auto_vacuum.
            conn.executescript("PRAGMA incremental_vacuum;")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            pass  # busy: another writer, or a reader holding the log; later writes catch up
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    def note_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM note_index").fetchone()[0]

    def text_of(self, rowid: int) -> str:
        """The text last indexed for a note (kept as a revision when it changes outside)."""
        row = self.conn.execute("SELECT text FROM note_text WHERE rowid = ?", (rowid,)).fetchone()
        return row[0] if row else ""

    def upsert(self, row: IndexRow, *, new: bool = False) -> int:
        """Insert or replace a note's rows in every index table; returns its rowid.

        *new* promises that neither the id nor the path is indexed yet (a fresh note).
        """
        return self.upsert_many([row], new=True)[0] if new else self._upsert_one(row)

    def upsert_many(self, rows: Sequence[IndexRow], *, new: bool = False) -> list[int]:
        """:meth:`upsert` each of *rows* in turn (one statement per table for them all when
        none replaces a row: the bulk paths); returns their rowids."""
        c = self.conn
        if not rows:
            return []
        if not new and self._replaces(rows):
            return [self._upsert_one(row) for row in rows]
        # The rowids SQLite would give them one by one (no AUTOINCREMENT: the largest plus one).
        (last,) = c.execute("SELECT coalesce(max(rowid), 0) FROM note_index").fetchone()
        rowids = list(range(last + 1, last + 1 + len(rows)))
        projects: dict[str | None, str | None] = {}
        entries, texts, tags, links, words, queued = [], [], [], [], [], []
        corrects: list[tuple[str, int]] = []
        for rowid, row in zip(rowids, rows, strict=True):
            entries.append((rowid, *_index_values(row)))
            body_at = len(row.text) - len(row.body)  # the body is the text's end (parse_note)
            if row.attempt_id not in projects:
                projects[row.attempt_id] = self._project_of(row.attempt_id)
            meta = meta_tokens(row, projects[row.attempt_id])
            texts.append((rowid, body_at, meta, row.text))
            tags += [(t, rowid) for t in row.tags]
            links += [(t, rowid) for t in row.builds_on]
            corrects += [(t, rowid) for t in row.supersedes if t != row.id]  # never itself
            words.append((rowid, row.title, row.text, body_at, meta))
            queued.append((row.id, row.updated_at))
        c.executemany(f"INSERT INTO note_index(rowid, {_INDEX_COLUMNS}) VALUES ({_INDEX_MARKS})", entries)
        c.executemany("INSERT INTO note_text(rowid, body_at, meta, text) VALUES (?, ?, ?, ?)", texts)
        if tags:
            c.executemany("INSERT OR IGNORE INTO note_tags(tag, note) VALUES (?, ?)", tags)
        if links:
            c.executemany("INSERT OR IGNORE INTO note_links(target, note) VALUES (?, ?)", links)
        if corrects:
            c.executemany("INSERT OR IGNORE INTO note_supersedes(target, note) VALUES (?, ?)", corrects)
        insert_fts_many(c, words)
        if not new and c.execute("SELECT 1 FROM problems LIMIT 1").fetchone():
            c.executemany("DELETE FROM problems WHERE path = ?", [(row.path,) for row in rows])
        # Embedding happens off the write path; the note waits in the queue, in this transaction.
        c.executemany("INSERT OR REPLACE INTO embed_queue(note_id, queued_at) VALUES (?, ?)", queued)
        return rowids

    def _replaces(self, rows: Sequence[IndexRow]) -> bool:
        """Whether writing *rows* replaces a row: one indexed under an id or path of theirs,
        or two of them with one id or path."""
        ids, paths = [row.id for row in rows], [row.path for row in rows]
        if len(set(ids)) < len(ids) or len(set(paths)) < len(paths):
            return True
        for some_ids, some_paths in zip(_parts(ids), _parts(paths), strict=True):
            marks = ",".join("?" * len(some_ids))
            if self.conn.execute(
                f"SELECT 1 FROM note_index WHERE id IN ({marks}) OR path IN ({marks}) LIMIT 1", [*some_ids, *some_paths]
            ).fetchone():
                return True
        return False

    def _upsert_one(self, row: IndexRow) -> int:
        # A rewritten note gets a fresh rowid, so rowids keep following the order of
        # writes (keyword search uses that as its recency window).
        for stale, stale_id in self.conn.execute(
            "SELECT rowid, id FROM note_index WHERE id = ? OR path = ?", (row.id, row.path)
        ).fetchall():
            self.delete(stale, rewrite=stale_id == row.id)
        self.conn.execute("DELETE FROM problems WHERE path = ?", (row.path,))
        return self.upsert_many([row], new=True)[0]

    def _project_of(self, attempt_id: str | None) -> str | None:
        if not attempt_id:
            return None
        found = self.conn.execute("SELECT project FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return found[0] if found else None

    def log_vectors(self, note_ids: Iterable[str]) -> None:
        """Record that these notes' vectors changed (in the caller's transaction); keep the
        log's newest VECTOR_LOG_KEEP rows (a reader further behind reloads everything)."""
        c = self.conn
        c.executemany("INSERT INTO vector_log(note_id) VALUES (?)", ((nid,) for nid in note_ids))
        first, last = c.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
        if last is not None and last - first > VECTOR_LOG_KEEP + 1000:  # trimmed in steps of 1,000
            c.execute("DELETE FROM vector_log WHERE seq <= ?", (last - VECTOR_LOG_KEEP,))

    def vectors_epoch(self) -> str:
        """The vector log's identity: a random token made with the index, so a rebuilt index
        never meets a matrix (or a memory-mapped sidecar) of the one it replaced."""
        return self.get_state("vectors_generation") or "0"

    def touch(self, rowid: int, mtime_ns: int, size: int) -> None:
        """Record a new mtime for a file whose content did not change."""
        self.conn.execute("UPDATE note_index SET mtime_ns = ?, size = ? WHERE rowid = ?", (mtime_ns, size, rowid))

    def move(self, rowid: int, path: str, mtime_ns: int, size: int) -> None:
        self.conn.execute(
            "UPDATE note_index SET path = ?, mtime_ns = ?, size = ? WHERE rowid = ?", (path, mtime_ns, size, rowid)
        )

    def delete(self, rowid: int, *, rewrite: bool = False, moved: bool = False) -> None:
        """Drop a note's rows; its vectors too unless *rewrite* (the new text replaces them
        once embedded; until then the old ones still find it), and its older revisions unless
        *rewrite* or *moved* (the note comes back under another path)."""
        c = self.conn
        if not rewrite:
            gone = c.execute("SELECT id FROM note_index WHERE rowid = ?", (rowid,)).fetchone()
            if gone is not None:
                if c.execute("DELETE FROM note_vectors WHERE note_id = ?", gone).rowcount:
                    self.log_vectors([gone[0]])
                c.execute("DELETE FROM embed_queue WHERE note_id = ?", gone)
                if not moved:
                    forget_old_revisions(c, gone[0])
        delete_fts(c, rowid)  # from the rows below, so before them
        c.execute("DELETE FROM note_index WHERE rowid = ?", (rowid,))
        c.execute("DELETE FROM note_text WHERE rowid = ?", (rowid,))
        c.execute("DELETE FROM note_tags WHERE note = ?", (rowid,))
        c.execute("DELETE FROM note_links WHERE note = ?", (rowid,))
        c.execute("DELETE FROM note_supersedes WHERE note = ?", (rowid,))

    # -- problems -----------------------------------------------------------

    def set_problem(self, path: str, error: str, mtime_ns: int, size: int) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO problems(path, error, mtime_ns, size) VALUES (?, ?, ?, ?)",
            (path, error, mtime_ns, size),
        )

    def problem_states(self) -> dict[str, tuple[int, int]]:
        return {p: (m, s) for p, m, s in self.conn.execute("SELECT path, mtime_ns, size FROM problems")}

    def clear_problem(self, path: str) -> None:
        self.conn.execute("DELETE FROM problems WHERE path = ?", (path,))

    def problems(self) -> list[dict[str, str]]:
        return [{"path": p, "error": e} for p, e in self.conn.execute("SELECT path, error FROM problems ORDER BY path")]


def schema_outdated(index_dir: Path) -> bool:
    """Whether *index_dir* holds an index of another schema version (a rebuild is due), read
    without changing anything; False for none, or one that cannot be read (opening repairs it)."""
    path = index_dir / "index.db"
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, isolation_level=None)
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return version not in (0, SCHEMA_VERSION)
