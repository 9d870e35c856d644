"""The SQLite backend: a folder of notes and the index beside it, for the note service.

A store is a folder of Markdown notes (the source of truth) plus a derived
SQLite index under ``.notewell/``. Every write is an atomic file write and, in
the same index transaction, the journal line and the index rows for that note.
Outside changes are picked up before every read.

In a server the store is called from many threads. Writes hold the store's lock, one at a
time. Reads hold no lock: each runs on its thread's own read connection in one snapshot
(WAL), beside other reads (as many at once as there are cores, two at least) and a write,
inside a gate that only a swap of the index (a rebuild, a reopen, closing) shuts. A read
takes the lock only to catch up with changes found in the folder, and only when it is free
(see :meth:`SqliteBackend._catch_up`).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ...errors import (
    InvalidArgumentError,
    NotewellError,
    NotFoundError,
    StorageError,
)
from ...model.attempt import Attempt, require_running, require_unfrozen
from ...model.ids import check_note_id
from ...model.note import (
    DEFAULT_MAX_BYTES,
    Card,
    Note,
    check_text,
)
from ...model.numbers import whole_number
from ...model.progress import Progress
from ...search.embedder_slot import EmbedderSlot
from ...search.embedders import Embedder
from ...search.filters import Filters
from ...search.old_passages import OldPassages
from ...search.passages import feedback_notes
from ...search.plan import Engines
from ...search.request import SearchRequest
from ..backend import EmbeddingStep, NoteLoader
from ..records import Snapshot, WriteTurn
from .ann import ANN_MIN
from .embedding import embed_pending, pending_count
from .files import NoteFolder, printable_name
from .guard import ReadGate, StoreLock, run_guarded
from .guard import guarded as guarded_call
from .history import History
from .index import INDEX_DIR, Index, LockHeld, schema_outdated, translated
from .inotify import Watcher
from .keyword import keyword_ids, keyword_search
from .note_writes import (
    Prepared,
    chosen_ids,
    delete_note_file,
    drop_kept,
    drop_staged,
    edit_note_file,
    fresh_ids,
    place_batch,
    prepare_batch,
)
from .notes import (
    StaleRow,
    load_note,
    note_from_row,
    note_text,
    queued_count,
)
from .old_revisions import older_keyword_search, older_semantic_search
from .old_vectors import embed_old_revisions
from .quick_check import FolderLook, dir_times_json, parse_dir_times, quick_look, trusted_times
from .rebuild import Rebuild
from .records import SqliteSnapshot, SqliteWriteTurn
from .semantic import VectorMatrix, opening_vectors, semantic_search
from .sync import Syncer, SyncReport
from .tokens import TokenBook
from .transfer import transfer_rows
from .unfinished_adds import finish_unplaced_adds
from .vector_reuse import carry_old_vectors, carry_vectors
from .watching import FolderWatching, folder_identity

__all__ = ["SqliteBackend"]

T = TypeVar("T")

_EMBED_STEP = 64  # notes the background thread embeds between looks at the queue...
_EMBED_STEP_PASSAGES = 256  # ...or fewer, once it embedded this many passages
_PLACE_BESIDE = 64  # a batch of at least this many notes names its files on a second thread
_OPTIMIZE_AFTER = 5000  # a bulk add this large ends by merging the keyword index


_DIR_TIMES = "dir_times"  # the folders' mtimes at the last look at them (see quick_check)
_MAX_DEFER = 2.0  # seconds a read may go on without the changes another writer's lock holds back
_CLOSE_WAIT = 30.0  # seconds closing waits for the reads in flight to end
# Reads running at once. More than the cores is slower, not faster: every row SQLite returns
# hands the GIL back and forth between the reading threads (measured with 4 clients on 2
# cores: 26% fewer searches a second unbounded, as many as one at a time with 2). Two at
# least, so that one slow read always leaves room for the others.
_READ_SLOTS = max(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class SqliteBackend:
    """A notes folder and its SQLite index, as the note service's backend."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        watch: bool = True,
        busy_timeout: float = 60.0,
        create: bool = True,
        embedder: Embedder | Callable[[], Embedder] | str | None = "default",
        ann: bool | int = False,
        progress: Progress | None = None,
        quick_check_from: int | None = None,
    ) -> None:
        whole_number("max_bytes", max_bytes)
        if quick_check_from is not None:
            whole_number("quick_check_from", quick_check_from)
        root = Path(path).expanduser()
        if root.exists() and not root.is_dir():
            raise StorageError(f"{root} is not a folder")
        if not root.exists():
            if not create:
                raise NotFoundError(f"no store at {root} (run `notewell init` first)")
            try:
                root.mkdir(mode=0o700, parents=True)  # a new store is its owner's alone (docs/folder.md)
            except OSError as exc:
                raise StorageError(f"cannot create the store folder {root}: {exc.strerror}") from exc
        self.root = root.resolve()
        self._root_id = folder_identity(self.root)  # a folder put in its place is not this store
        self.max_bytes = max_bytes
        self.gate = ReadGate()  # reads pass it at once; a swap of the index shuts it
        self.lock = StoreLock(self.gate)  # writes, catching up, swapping: one thread at a time
        self._held_back = False  # changes inotify gave that a refresh could not apply yet
        self._checked = False  # a refresh has applied the folder's changes since the store opened
        # From this many notes, reads look only at the folders that changed (quick_check); a full
        # check is then owed (full_check_owed) and is the caller's to arrange (refresh()).
        self._quick_from = quick_check_from
        self.full_check_owed = False
        self._quick_ok = False  # set while a read refreshes (see _read_refresh)
        self._owed_stop = threading.Event()  # set by close(): the owed check's thread gives up
        self._owed_failed = False  # that thread failed: reads check every file again
        self._refresh_turn = threading.Condition(threading.Lock())
        self._refreshes = 0  # catch-ups running (under the lock: at most one at a time)
        self._read_slots = threading.BoundedSemaphore(_READ_SLOTS)
        self.folder = NoteFolder(self.root)
        self._history = History(self.root)
        self._busy_timeout = busy_timeout
        # An index of another schema version is rebuilt as reindex does (set aside, made anew,
        # its vectors taken over), not dropped in place: a new version costs no re-embedding.
        upgrading = Rebuild(self.root / INDEX_DIR) if schema_outdated(self.root / INDEX_DIR) else None
        old = upgrading.begin(only_if=lambda: schema_outdated(self.root / INDEX_DIR)) if upgrading else None
        try:
            self.index = Index(self.root, busy_timeout=busy_timeout)
        except BaseException:
            if upgrading is not None:
                upgrading.abandon()
            raise
        self.syncer = Syncer(self.folder, self._history, self.index, max_bytes=max_bytes)
        self.inotify = Watcher(str(self.root)) if watch else None
        self.watching = FolderWatching(self)  # notewell watch, and asking a running one
        self._scanned = False  # the first read compares the whole folder (and sets the watches)
        self.last_check = "none"  # how the last read was brought up to date: scan, inotify, watcher or deferred
        self._deferred_since: float | None = None  # when a read first found the lock held
        self.last_scan_size = 0  # files seen by the last whole-folder check
        self.embedders = EmbedderSlot(embedder)
        if not isinstance(ann, bool) and (not isinstance(ann, int) or ann < 1):
            raise InvalidArgumentError(f"ann must be True, False or a number of passages, got {ann!r}")
        # An approximate index (usearch) from ANN_MIN passages, or from the number given.
        self.old_vectors = OldPassages()  # older revisions' passages (search.old_passages)
        self.vectors = VectorMatrix(ann_min=(ANN_MIN if ann is True else ann) if ann else None)
        self.last_sync = SyncReport()
        # True when this open made the index (none was there, or it was another version's):
        # a reindex right after would only make it again.
        self.built_on_open = bool(self.index.rebuilt)
        if upgrading is None:
            if self.index.rebuilt:
                self.last_sync = self.full_sync(progress)  # a new or repaired index: fill it now
                self._checked = True
            return
        try:
            if self.index.rebuilt:
                self.last_sync = self.full_sync(progress)
                self._checked = True
            self.last_sync.vectors_kept, self.last_sync.to_embed = self._carry_vectors(old)
        except BaseException:
            self.index.close()
            upgrading.abandon()
            raise
        upgrading.finish()

    @property
    def location(self) -> str:
        """Where the store lives, to show a person: its folder."""
        return str(self.root)

    @property
    def name(self) -> str:
        """A short name for the store: its folder's."""
        return self.root.name

    # -- lifecycle ----------------------------------------------------------

    def close(self) -> None:
        """Release the index connection and the watcher."""
        self._owed_stop.set()
        with self.lock, self.gate.exclusive(timeout=_CLOSE_WAIT):
            if self.inotify is not None:
                self.inotify.close()
            self.index.close()

    @contextlib.contextmanager
    def embedding_steps(self, embedder: Embedder) -> Iterator[EmbeddingStep]:
        # On the embedding thread: a connection of its own, so that reads and writes never
        # wait for the model.
        index: Index | None = None

        def step(should_stop: Callable[[], bool]) -> int:
            nonlocal index
            # Inside the gate, as a read is: a rebuild waits for the batch in hand, and the
            # batch never works on a database being moved aside. The connection is opened
            # inside it too: opened beside a rebuild, it could hold the old database while
            # noting the new one's inode, and so never see that it was replaced.
            with self.gate.shared():
                if index is None or index.replaced():  # a reindex put a new database in place
                    if index is not None:
                        index.close()
                    index = Index(self.root, busy_timeout=self._busy_timeout)
                with translated():
                    done = embed_pending(
                        index,
                        embedder,
                        lambda nid: note_text(index, nid),
                        limit=_EMBED_STEP,
                        passages_limit=_EMBED_STEP_PASSAGES,
                        # A reindex, or the store closing, waits for one call of the model.
                        should_stop=lambda: should_stop() or self.gate.swap_waiting(),
                    )
                    if done >= _EMBED_STEP or should_stop():
                        return done
                    return done + embed_old_revisions(index, embedder, _EMBED_STEP - done)

        try:
            yield step
        finally:
            if index is not None:
                index.close()

    def __repr__(self) -> str:
        return f"<notewell.SqliteBackend {str(self.root)!r}>"

    def token_book(self) -> TokenBook:
        """The servers' bearer tokens: ``.notewell/tokens.json`` beside the index, never among the notes."""
        return TokenBook(self.root / ".notewell")

    # -- what the note service runs on ---------------------------------------

    def guarded(self, call: Callable[[], T]) -> T:
        return run_guarded(self, call)

    def _rec(self) -> SqliteSnapshot:
        """The records of the index this thread reads now (inside a read or the lock)."""
        return SqliteSnapshot(self.index, self._history)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        with self._read() as index:
            yield SqliteSnapshot(index, self._history)

    @contextlib.contextmanager
    def write_turn(self) -> Iterator[WriteTurn]:
        with self.lock:
            self.refresh()
            yield SqliteWriteTurn(self.index, self._history, self.syncer, self._add_summary)

    def _add_summary(self, text: str, attempt: Attempt) -> str:
        checked = [check_text(text, max_bytes=self.max_bytes)]
        return self.insert_notes(checked, None, None, attempt.id, "summary", None, 1000)[0].id

    def _attempt_dict(self, attempt_id: str | None) -> dict[str, Any] | None:
        found = self._rec().attempt(attempt_id) if attempt_id else None
        return found.to_dict() if found else None

    def _check_unfrozen(self, note_id: str) -> None:
        """FrozenError when the note was written on an attempt that has ended."""
        rec = self._rec()
        attempt_id = rec.note_attempt(note_id)
        require_unfrozen(note_id, rec.attempt(attempt_id) if attempt_id else None)

    # -- keeping up with the folder ----------------------------------------

    def full_sync(self, progress: Progress | None = None, *, wait: bool = True, serves: bool = True) -> SyncReport:
        """Check every file. *serves*: for a read (last_check says how reads were brought up to date)."""
        self._scanned = True
        if serves:
            self.last_check = "scan"
        looked = time.time_ns()
        fs, dirs = self.folder.scan()
        leftovers = self.folder.leftovers
        for path in finish_unplaced_adds(
            self.folder, self.index, self.syncer.catch_up, leftovers, fs, self.max_bytes, wait=wait
        ):
            if (state := self.folder.state(path)) is not None:
                fs[path] = (state[0], state[1])
        self.last_scan_size = len(fs)
        if self.inotify is not None:
            self.inotify.watch(dirs)
            self.inotify.let_go_of_moved()
        report = self.syncer.paths(fs, None, progress=progress, wait=wait)
        self.full_check_owed = self._owed_failed = False
        self._keep_dir_times(trusted_times(self.folder.dir_times, looked))
        self.folder.sweep()
        return report

    def _keep_dir_times(self, times: dict[str, int | None]) -> None:
        """Keep the folders' mtimes for the next quick look (a cache: not if the lock is taken)."""
        raw = dir_times_json(times)
        if raw != self.index.get_state(_DIR_TIMES):
            self.index.remember(_DIR_TIMES, raw)

    def _quick_look(self) -> FolderLook | None:
        """A read's look at the folder when it may be quick (see quick_check), or None. A
        watched store sets its watches first, so that nothing changed after the look is missed."""
        if self._quick_from is None or (self.inotify is not None and not self.inotify.active):
            return None
        recorded = parse_dir_times(self.index.get_state(_DIR_TIMES))
        if recorded is None or self.index.note_count() < self._quick_from or self._owed_failed:
            return None
        watcher = self.inotify
        watch = (lambda rel: watcher.watch({rel})) if watcher is not None else None
        return quick_look(self.folder, recorded, self.index.paths_in, watch, self.index.count_in)

    def _check_owed(self) -> None:
        """The full check a watched store's quick first look owes, on a thread of its own: reads
        go on meanwhile (from the index, and inotify for what changes now); a write or refresh()
        that comes first makes it itself. Another process's write lock is not waited for (close()
        would wait with it): it tries again until the store closes. A failure leaves the check to
        the reads, which then check every file."""
        pause = 0.5
        while not self._owed_stop.is_set():
            try:
                with self.lock:
                    if not self.full_check_owed or self.index.closed:
                        return
                    run_guarded(self, lambda: self.full_sync(wait=False, serves=False))
                return
            except LockHeld:  # each try scans the folder: back off, up to 8 s between them
                self._owed_stop.wait(pause)
                pause = min(pause * 2, 8.0)
            except Exception:  # noqa: BLE001 - on its own thread, with nobody to raise to
                self._owed_failed = True  # no more quick looks: the next read checks in full, and fails aloud
                self._scanned = False
                return

    @guarded_call
    def refresh(self, *, wait: bool = True) -> SyncReport:
        """Pick up changes made outside notewell (runs before every read).

        With ``wait=False`` (reads do this) a write lock held by another process is not
        waited for: the read is served from the index as last committed (every note in it
        whole) and the changes are applied by a later call. Not for longer than
        _MAX_DEFER seconds: then the read waits its turn.
        """
        with self.lock, self._refreshing():
            if not wait and self._deferred_since is not None:
                wait = time.monotonic() - self._deferred_since > _MAX_DEFER
            changes = self.inotify.changes() if self.inotify is not None and self._scanned else None
            try:
                report = self._apply_changes(changes, wait)
            except BaseException as exc:
                # Not applied: keep the changes for the next call (a failure must not drop them).
                if changes is not None and self.inotify is not None:
                    self.inotify.hand_back(*changes)
                    self._held_back = True
                else:
                    self._scanned = False  # the next read compares the whole folder again
                if not isinstance(exc, LockHeld):
                    raise
                if self._deferred_since is None:
                    self._deferred_since = time.monotonic()
                self.last_check = "deferred"
                return SyncReport()
            self._deferred_since = None
            self._held_back = False
            self._checked = True
            return report

    @contextlib.contextmanager
    def _refreshing(self) -> Iterator[None]:
        """Mark a catch-up in progress, for the reads that wait for it (see :meth:`_catch_up`)."""
        with self._refresh_turn:
            self._refreshes += 1
        try:
            yield
        finally:
            with self._refresh_turn:
                self._refreshes -= 1
                self._refresh_turn.notify_all()

    @contextlib.contextmanager
    def _read(self) -> Iterator[Index]:
        """Around a read: catch up with the folder as far as that needs no waiting, then
        read on this thread's own connection, in one snapshot, inside the gate (so the index
        is not swapped meanwhile). Inside a write or another read: that one's."""
        if self.gate.depth():
            yield self.index
            return
        if self.lock.held():
            self.refresh(wait=False)
            yield self.index
            return
        with self.gate.shared():
            self._catch_up()
            index = self.index
            with self._read_slots, index.reading(), index.snapshot():
                yield index

    def _catch_up(self) -> None:
        """Before a read: apply what changed in the folder, unless nothing can have changed
        (then take no lock at all). Applying writes the index and needs the lock. When
        another thread holds it:

        - catching up (applying the changes this read should see): wait for that to end, for
          at most _MAX_DEFER seconds, and look again;
        - writing: serve the index as last committed, as when another process holds the write
          lock (see :meth:`refresh`); after _MAX_DEFER seconds of that, wait for the lock.

        Until the folder has been checked once since the store opened, a read waits its turn.
        """
        patience = time.monotonic() + _MAX_DEFER
        while True:
            with self.index.reading():
                if self._caught_up():
                    self.last_check = "inotify"
                    self._deferred_since = None  # nothing held back: a deferral, if any, is over
                    return
                if self.lock.acquire(blocking=False):
                    try:
                        self._read_refresh()
                    finally:
                        self.lock.release()
                    return
            if not self._checked:
                break
            if self._refreshes and time.monotonic() < patience:
                with self.gate.stepped_out(), self._refresh_turn:  # out of the gate: a swap may come
                    if self._refreshes:
                        self._refresh_turn.wait(max(0.0, patience - time.monotonic()))
                continue
            since = self._deferred_since
            if since is None or time.monotonic() - since <= _MAX_DEFER:
                if since is None:
                    self._deferred_since = time.monotonic()
                self.last_check = "deferred"
                return
            break
        with self.lock:  # steps out of the gate while it waits: a swap may hold the lock
            self._read_refresh()

    def _read_refresh(self) -> None:
        """refresh(wait=False) for a read (the lock held), which may look quickly (_quick_look)."""
        self._quick_ok = True
        try:
            self.refresh(wait=False)
        finally:
            self._quick_ok = False

    def _caught_up(self) -> bool:
        """True when nothing can have changed since the last refresh: the folder was
        checked, inotify has queued nothing (asked without reading the queue), no refresh
        is applying what it took from the queue, no change was handed back, and no other
        process wrote the journal. Needs no lock."""
        watcher = self.inotify
        if not self._scanned or watcher is None or not watcher.active:
            return False
        # Cookies need no look of their own: a cookie file's creation is an event in the queue.
        poller = select.poll()
        try:
            poller.register(watcher.fileno(), select.POLLIN)
            if poller.poll(0):
                return False
        except (OSError, ValueError):  # closed meanwhile: refresh() finds out why
            return False
        # In this order: a refresh counts itself before it empties the queue, and marks what it
        # hands back before it stops counting, so an empty queue seen above is never missed here.
        if self._refreshes or self._held_back:
            return False
        return not self.syncer.journal_behind()

    def _apply_changes(self, changes: tuple[set[str], bool] | None, wait: bool) -> SyncReport:
        if changes is not None and self.full_check_owed and not self._quick_ok:
            # refresh() or a write on a watched store before the owed check's thread: made here.
            self.last_sync = self.full_sync(wait=wait)
            return self.last_sync
        if changes is None:
            if self.inotify is None and self.watching.synced_by_watcher():
                self.last_check = "watcher"
                return SyncReport()
            look = self._quick_look() if self._quick_ok else None
            journaled = self.syncer.journaled_paths() if look is not None else None
            if look is not None and journaled is not None:
                look.read_again(self.folder, journaled)  # what the journal says changed
                self.last_check = "quick"
                self.last_scan_size = self.index.note_count()
                self.last_sync = self.syncer.paths(look.fs, look.paths, wait=wait)
                if look.paths:  # the index moved without a full check: the next one compares every file
                    self.index.remember("folder_digest", "")
                self.full_check_owed = True
                self._keep_dir_times(look.times)
                if self.inotify is not None:  # inotify from now on; the full check owed, beside
                    self._scanned = True
                    threading.Thread(target=self._check_owed, name="notewell-check", daemon=True).start()
                return self.last_sync
            self.last_sync = self.full_sync(wait=wait)
            return self.last_sync
        self.last_check = "inotify"
        paths, rescan = changes
        if rescan:
            self.last_sync = self.full_sync(wait=wait)
        elif paths:
            paths = {p if printable_name(p) is None else str(printable_name(p)) for p in paths}
            fs = {p: (st[0], st[1]) for p in paths if (st := self.folder.state(p)) is not None}
            self.last_sync = self.syncer.paths(fs, paths, wait=wait)
        elif self.syncer.journal_behind():
            self.last_sync = self.syncer.paths({}, [], wait=wait)
        else:
            return SyncReport()
        return self.last_sync

    @guarded_call
    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Rebuild the index from the folder (ids, times and authors come back from the
        journal). Vectors whose passage and model are unchanged are kept; the report says
        how many notes kept theirs (vectors_kept) and how many wait for embedding (to_embed)."""
        with self.lock:
            self.reopen_index(rebuild=True, progress=progress)
            return self.last_sync

    def reopen_index(self, *, rebuild: bool, progress: Progress | None = None) -> None:
        """Open the index again (replaced by another process), or rebuild it from the folder."""
        # The lock keeps writers out; the shut gate waits for the reads on the old index to
        # end, so none reads a database being closed or moved aside.
        with self.lock, self.gate.exclusive():
            if not rebuild and not self.index.closed and not self.index.replaced():
                return  # another thread reopened it meanwhile
            if folder_identity(self.root) != self._root_id:  # never make an index in a folder not this store's
                raise StorageError(f"the store's folder {self.root} was removed or replaced: open it again")
            self.index.close()
            if not rebuild:
                self.index = Index(self.root, busy_timeout=self._busy_timeout)
                self.syncer = Syncer(self.folder, self._history, self.index, max_bytes=self.max_bytes)
                self._scanned = False
                if self.index.rebuilt:
                    self.last_sync = self.full_sync()
                return
            # The old database is set aside until the new one is complete and has taken over its
            # vectors; a rebuild cut short puts it back (storage.rebuild).
            rebuilding = Rebuild(self.index.dir)
            try:
                old = rebuilding.begin()
                self.index = Index(self.root, busy_timeout=self._busy_timeout)
                self.syncer = Syncer(self.folder, self._history, self.index, max_bytes=self.max_bytes)
                report = self.full_sync(progress)
                report.vectors_kept, report.to_embed = self._carry_vectors(old)
            except BaseException:
                self.index.close()
                rebuilding.abandon()
                with contextlib.suppress(NotewellError):
                    self.reopen_index(rebuild=False)
                raise
            rebuilding.finish()
            self.last_sync = report

    def _carry_vectors(self, old: Path | None) -> tuple[int, int]:
        """Take over the *old* index's vectors of unchanged passages; returns how many notes
        kept theirs and how many wait for embedding, for this store's model when it is known
        without loading one (for any model otherwise)."""
        carried = carry_vectors(self.index, old)
        carry_old_vectors(self.index, old)
        model = self.embedders.model_id()
        if model is None:
            return sum(carried.values()), queued_count(self.index)
        return carried[model], pending_count(self.index, model)

    @guarded_call
    def problems(self) -> list[dict[str, str]]:
        """Files in the folder that could not be indexed, with the reason."""
        with self._read():
            return self.index.problems()

    # -- writes -------------------------------------------------------------

    def insert_notes(
        self,
        checked: Sequence[tuple[str, bytes]],
        author: str | None,
        model: str | None,
        attempt_id: str | None,
        note_kind: str,
        progress: Progress | None,
        batch: int,
        chosen: list[str] | None = None,
    ) -> list[Note]:
        """Each file is on disk (synced) before the transaction that indexes it commits."""
        origin: dict[str, Any] = {"attempt": None, "note_kind": note_kind}
        if attempt_id is not None:
            with self.snapshot() as records:  # before any file is written
                running = require_running(records.attempt(attempt_id), attempt_id)
            origin["attempt"] = running.id
            author, model = running.credits(author, model)
        starts = range(0, len(checked), batch)

        def chunk(k: int) -> Sequence[tuple[str, bytes]]:
            return checked[starts[k] : starts[k] + batch]  # made when its batch comes (see _Checked)

        durable = len(checked) == 1
        notes: list[Note] = []
        with self.lock:
            if chosen is not None:
                for k, start in enumerate(starts):
                    ids = chosen_ids(self.index, self.folder, chosen[start : start + batch])
                    ready = [prepare_batch(self.folder, chunk(k), ids, durable, author, model, origin, chosen=True)]
                    self._index_batches(iter(ready).__next__, 1, notes, progress, len(checked))
                return notes
            if len(starts) < 2:
                ready = [
                    prepare_batch(self.folder, c, fresh_ids(self.index, len(c)), durable, author, model, origin)
                    for c in map(chunk, range(len(starts)))
                ]
                self._index_batches(iter(ready).__next__, len(starts), notes, progress, len(checked))
                return notes
            # A second thread writes the next batch's files and parses its notes while this
            # one indexes the current batch (SQLite and file system calls release the GIL).
            with ThreadPoolExecutor(max_workers=1) as pool:

                def submit(k: int) -> Future[Prepared]:
                    c = chunk(k)
                    return pool.submit(
                        prepare_batch, self.folder, c, fresh_ids(self.index, len(c)), False, author, model, origin
                    )

                ahead = [submit(0)]  # the batches staged and not yet indexed (the one in hand first)
                submitted = 1

                def next_ready() -> Prepared:
                    nonlocal submitted
                    if submitted < len(starts):
                        ahead.append(submit(submitted))
                        submitted += 1
                    return ahead.pop(0).result()  # indexed batches are let go: memory stays one batch or two

                try:
                    self._index_batches(next_ready, len(starts), notes, progress, len(checked))
                except BaseException:
                    for future in ahead:  # staged ahead for a batch that never ran
                        if future.exception() is None:
                            drop_staged(future.result()[2])
                    raise
            if len(checked) >= _OPTIMIZE_AFTER and len(checked) * 4 >= self.index.note_count():
                # A merge rewrites the whole keyword index: worth it after a load that is a good
                # part of the store, not after each of many batches (that made imports quadratic).
                self.index.optimize()
        return notes

    def _index_batches(
        self,
        next_ready: Callable[[], Prepared],
        count: int,
        notes: list[Note],
        progress: Progress | None,
        total: int,
    ) -> None:
        for _ in range(count):
            records, rows, staged = next_ready()
            try:
                with self.index.write():
                    self.syncer.catch_up()
                    self.syncer.commit_records(records)
                    # Named only once journaled; a big batch is named while its rows are written.
                    placed = place_batch(self.index, self.folder, staged, beside=len(staged) >= _PLACE_BESIDE)
                    try:
                        # Not new=True: a reader in another process may have indexed the file
                        # from its journal record already (after a writer killed before its commit).
                        self.index.upsert_many(rows)
                    finally:
                        placed()
            except BaseException:
                drop_staged(staged)
                raise
            notes.extend(note_from_row(row, self._attempt_dict(row.attempt_id)) for row in rows)
            if progress is not None:
                progress(len(notes), total)

    def edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        """Write the text *make* returns for the note's current text, inside the write
        lock, so that no edit made meanwhile by another process is lost."""
        with self.lock:
            self.refresh()
            with self.index.write():
                self.syncer.catch_up()
                kept = edit_note_file(
                    self.index,
                    self.folder,
                    self._history,
                    self.syncer,
                    note_id,
                    make,
                    author,
                    max_bytes=self.max_bytes,
                    check_unfrozen=self._check_unfrozen,
                )
            drop_kept(kept)
            return self._get_caught_up(note_id, None)

    def delete(self, note_id: str) -> dict[str, Any]:
        """Remove a note's file; its last text stays in the history folder."""
        with self.lock:
            self.refresh()
            with self.index.write():
                self.syncer.catch_up()
                return delete_note_file(
                    self.index, self.folder, self._history, self.syncer, note_id, check_unfrozen=self._check_unfrozen
                )

    # -- reads --------------------------------------------------------------

    def reading_note(self, body: Callable[[Snapshot, NoteLoader], T]) -> T:
        try:
            with self._read():
                return body(self._rec(), lambda nid, rev: self._get(nid, rev, checked=True))
        except (FileNotFoundError, StaleRow):
            # The index is behind the file: a delete, rename or edit by another thread, another
            # process or an editor. Read it as a write does, under the lock, caught up; each note
            # the body loads catches up again if its file moved meanwhile. The records read the
            # live index here, so the caller's checks after a load see what the catch-up applied.
            with self.lock:
                self.refresh(wait=False)
                return body(self._rec(), self._get_caught_up)

    def _get_caught_up(self, note_id: str, revision: int | None) -> Note:
        try:
            return self._get(note_id, revision)
        except FileNotFoundError:
            self.refresh()  # behind a delete or rename made meanwhile: catch up, look again
            try:
                return self._get(note_id, revision)
            except FileNotFoundError as exc:
                raise StorageError(f"cannot read {os.path.basename(exc.filename or '')}: {exc.strerror}") from exc

    def _get(self, note_id: str, revision: int | None, *, checked: bool = False) -> Note:
        return load_note(self.index, self.folder, self._history, note_id, revision, self._attempt_dict, checked=checked)

    @contextlib.contextmanager
    def searching(self, request: SearchRequest) -> Iterator[tuple[Snapshot, Engines]]:
        # A search that embeds the waiting notes first writes: it runs as a write does.
        with self.lock if request.wait else contextlib.nullcontext(), self._read() as index:
            yield SqliteSnapshot(index, self._history), _Engines(self)

    @contextlib.contextmanager
    def embedding_turn(self) -> Iterator[None]:
        with self.lock:
            self.refresh()
            yield

    def embed_some(self, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        return self._embed(limit, progress)

    def embed_older(self, embedder: Embedder, limit: int | None) -> int:
        return embed_old_revisions(self.index, embedder, limit)

    def pending_count(self, model_id: str) -> int:
        with self._read() as index:
            return pending_count(index, model_id)

    def _embed(self, limit: int | None, progress: Progress | None) -> int:
        index = self.index
        return embed_pending(
            index, self.embedders.get(), lambda nid: note_text(index, nid), limit=limit, progress=progress
        )

    @guarded_call
    def transfer_rows(self) -> dict[str, list[dict[str, Any]]]:
        """What moving the store elsewhere needs: every live note (its text byte for byte, as
        a string, with its metadata), every deleted one the journal remembers, the attempts,
        the project settings and the reads recorded on attempts."""
        with self.lock:
            self.refresh()
            return transfer_rows(self.index, self.folder, self._history)

    @guarded_call
    def kept_revision(self, note_id: str, revision: int) -> bytes | None:
        """The kept text of an earlier revision of a note (None when it was not kept)."""
        return self._history.load_revision(check_note_id(note_id), revision)

    def note_at(self, ref: str) -> str:
        with self._read():
            rel = ref.replace(os.sep, "/")
            if os.path.isabs(ref):
                try:
                    rel = Path(ref).resolve().relative_to(self.root).as_posix()
                except ValueError:
                    raise NotFoundError(f"{ref} is not inside the store {self.root}") from None
            row = self.index.row_for_path(rel.removeprefix("./"))
            if row is None:
                raise NotFoundError(f"no note at {ref}")
            return str(row[1])


class _Engines:
    """The embedded store's search engines, for :func:`~notewell.search.plan.run_search` (called
    inside a read, or with the store's lock held for a search that embeds first)."""

    def __init__(self, store: SqliteBackend) -> None:
        self._store = store

    def keyword(
        self,
        query: str,
        limit: int,
        filters: Filters,
        coverage: dict[str, float] | None = None,
        snippets: dict[str, Callable[[], str]] | None = None,
    ) -> list[Card]:
        return keyword_search(
            self._store.index, query, limit=limit, filters=filters, partial=coverage, snippets=snippets
        )

    def feedback_ids(self, query: str, limit: int, filters: Filters) -> list[str]:
        return keyword_ids(self._store.index, query, limit=limit, filters=filters)

    def semantic(self, query: str, limit: int, filters: Filters, feedback: list[str]) -> list[Card]:
        store = self._store
        return semantic_search(
            store.index, store.embedders.get(), store.vectors, query, limit=limit, filters=filters, feedback=feedback
        )

    def older_keyword(self, query: str, limit: int, filters: Filters, exclude: set[str]) -> list[Card]:
        return older_keyword_search(self._store.index, query, limit=limit, filters=filters, exclude=exclude)

    def older_semantic(
        self, query: str, limit: int, filters: Filters, exclude: set[str], feedback: list[str]
    ) -> list[Card]:
        store = self._store
        embedder = store.embedders.get()
        return older_semantic_search(
            store.index,
            embedder,
            store.old_vectors,
            query,
            limit=limit,
            filters=filters,
            exclude=exclude,
            openings=lambda: opening_vectors(store.index, embedder, feedback_notes(feedback)),
        )

    def require_model(self) -> None:
        self._store.embedders.get()

    def embed_waiting(self) -> None:
        self._store._embed(None, None)  # the current texts; older revisions are the background's
