"""Keeping the index in step with the folder.

The cheap check compares each file's mtime and size with the index; only a
file that differs is read and hashed. Outside edits, new files, renames and
deletions become journal records (so they survive a rebuild) and index rows.
The same code rebuilds an empty index: the journal is applied first, so ids,
timestamps and authors come back.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import StorageError
from ...model.ids import derived_note_id, is_note_id, new_note_id
from ...model.progress import Progress
from ...model.timestamps import iso_from_ns, now_iso
from .files import BAD_NAME, BAD_NAME_SIZE, LINKED, LINKED_SIZE, OUTSIDE, OUTSIDE_SIZE, FileState, NoteFolder
from .history import History
from .index import Index, IndexRow, PathRow
from .old_revision_rows import fill_old_revisions, keep_old_revision
from .prepare import Prepared, Preparer, build_row, prepare_files

__all__ = ["SyncReport", "Syncer", "build_row", "folder_digest"]

_BATCH = 2000
_NAMES_A_FILE = ("add", "adopt", "edit", "change", "move", "delete", "gone")  # journal ops that touch a file
_OPTIMIZE_AFTER = 5000  # notes indexed in one pass before the keyword index is merged


@dataclass(slots=True)
class SyncReport:
    """What one pass found; after a rebuild also how many notes kept their vectors and how
    many wait for embedding (None: not counted, not a rebuild)."""

    added: int = 0
    changed: int = 0
    moved: int = 0
    removed: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)
    vectors_kept: int | None = None
    to_embed: int | None = None

    @property
    def total(self) -> int:
        return self.added + self.changed + self.moved + self.removed

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": self.changed,
            "moved": self.moved,
            "removed": self.removed,
            "problems": list(self.problems),
            "vectors_kept": self.vectors_kept,
            "to_embed": self.to_embed,
        }


def folder_digest(fs: dict[str, tuple[int, int]]) -> str:
    """An order-free fingerprint of a folder scan (every path with its mtime and size).

    The index keeps the fingerprint of the last scan it was brought in line with; a scan
    with the same fingerprint needs no comparison row by row. Two independent 32-bit
    checksums per file, summed, make an unnoticed change about a 1-in-2^64 event.
    """
    total_a = total_b = 0
    for path, (mtime, size) in fs.items():
        item = f"{path}\0{mtime}\0{size}".encode("utf-8", "surrogateescape")
        total_a += zlib.crc32(item)
        total_b += zlib.adler32(item)
    return f"{len(fs)}:{total_a:x}:{total_b:x}"


@dataclass(slots=True)
class _Pass:
    """State carried across the batches of one reconcile pass."""

    fresh: bool  # the index held no note when the pass began (a rebuild): no row to replace
    missing: list[str] = field(default_factory=list)  # indexed paths the scan did not find
    missing_rows: dict[str, list[PathRow]] | None = None
    assigned: set[str] = field(default_factory=set)  # ids handed out in this pass
    inserted: int = 0


class Syncer:
    """Reconciles one folder with its index."""

    def __init__(self, folder: NoteFolder, history: History, index: Index, *, max_bytes: int) -> None:
        self.folder = folder
        self.history = history
        self.index = index
        self.max_bytes = max_bytes

    # -- journal ------------------------------------------------------------

    def journal_behind(self) -> bool:
        """True when the journal changed since the index last read it."""
        return str(self.history.journal_size()) != self.index.get_state("journal_size", "0")

    def _mark(self, offset: int) -> None:
        self.index.set_state("journal_offset", str(offset))
        self.index.set_state("journal_size", str(self.history.journal_size()))
        self.index.set_state("journal_tail", self.history.tail_digest(offset))

    def catch_up(self) -> None:
        """Apply journal lines not yet in the index (inside a write transaction)."""
        if not self.journal_behind():
            return
        offset = int(self.index.get_state("journal_offset", "0") or 0)
        if offset > self.history.journal_size() or self.history.tail_digest(offset) != self.index.get_state(
            "journal_tail", self.history.tail_digest(0)
        ):
            offset = 0  # the journal was replaced (a checkout, a merge, a restore): read it all again
        records, end = self.history.read(offset)
        self.index.apply_records(records)
        self._mark(end)

    def journaled_paths(self) -> set[str] | None:
        """The paths of the notes that journal lines not yet applied add, change, move or delete
        (their files may hold a text the index has not read, or be gone: a pull of another
        machine's edits); None when the journal was replaced (only a full check can tell what
        changed)."""
        if not self.journal_behind():
            return set()
        offset = int(self.index.get_state("journal_offset", "0") or 0)
        if offset > self.history.journal_size() or self.history.tail_digest(offset) != self.index.get_state(
            "journal_tail", self.history.tail_digest(0)
        ):
            return None
        paths: set[str] = set()
        for r in self.history.read(offset)[0]:
            if not isinstance(r, dict) or r.get("op") not in _NAMES_A_FILE:
                continue
            path = r.get("path")
            if not isinstance(path, str):
                row = self.index.row_for_id(r["id"]) if isinstance(r.get("id"), str) else None
                path = row[2] if row else None
            if isinstance(path, str) and path.endswith(".md"):
                try:
                    self.folder.abspath(path)  # refuses a path that leaves the folder
                except StorageError:
                    continue
                paths.add(path)
        return paths

    def commit_records(self, records: list[dict[str, Any]], *, durable: bool = True) -> None:
        """Append records to the journal and apply them (inside a write transaction)."""
        if not records:
            return
        before = self.history.journal_size()
        self.index.on_abort(lambda: self.history.truncate(before))
        end = self.history.append(records, durable=durable)
        self.index.apply_records(records)
        self._mark(end)

    # -- reconcile ----------------------------------------------------------

    def paths(
        self,
        fs: dict[str, tuple[int, int]],
        only: Iterable[str] | None,
        progress: Progress | None = None,
        *,
        wait: bool = True,
    ) -> SyncReport:
        """Reconcile the files in *fs* (path -> (mtime_ns, size)); with *only*, just those
        paths (others are untouched). With ``wait=False``, raises LockHeld before changing
        anything when another writer holds the store."""
        problems = self.index.problem_states()
        if only is not None:
            scope = set(only)
            indexed = {p: (r.mtime_ns, r.size) for p in scope if (r := self.index.row_for_path(p)) is not None}
            problems = {p: v for p, v in problems.items() if p in scope}
            fs = {p: s for p, s in fs.items() if p in scope}
            changed = [p for p, st in fs.items() if indexed.get(p, st) != st]
            missing = [p for p in indexed if p not in fs]
            new = [p for p in fs if p not in indexed]
            indexed_count = len(indexed)
        else:
            digest = folder_digest(fs)
            if digest == self.index.get_state("folder_digest") and not self.journal_behind():
                return SyncReport(problems=self.index.problems())
            changed, missing, new, indexed_count = self.index.compare_files(fs)
        get_problem = problems.get
        todo = [(p, FileState(*fs[p])) for p in (*changed, *new) if get_problem(p) != fs[p]]
        gone_problems = list(problems.keys() - fs.keys())
        report = SyncReport()
        if not todo and not missing and not gone_problems and not self.journal_behind():
            if only is None:
                self.index.remember("folder_digest", digest)  # a cache: not worth waiting for
            return report
        todo.sort(key=lambda item: (item[1].mtime_ns, item[0]))  # rowids follow write order
        total = len(todo)
        run = _Pass(fresh=only is None and not indexed_count and not problems, missing=missing)
        batches = [todo[i : i + _BATCH] for i in range(0, len(todo), _BATCH)] or [[]]
        # Batches keep any one hold on the write lock short during a big rebuild; the
        # next batch's files are read on a second thread while this one is indexed.
        bulk = run.fresh and total >= _OPTIMIZE_AFTER
        rebuilding = run.fresh
        preparer = Preparer(self.folder, self.max_bytes)
        done = 0
        prepared = preparer.run(batches)
        try:
            for number, batch in enumerate(batches):
                data = next(prepared)
                last = number == len(batches) - 1
                with self.index.write(wait=wait or number > 0):
                    if bulk and number == 0:
                        self.index.drop_note_indexes()
                    self.catch_up()
                    self._batch(batch, report, data, run)
                    if last:
                        self._finish(gone_problems, report, run)
                        if rebuilding:
                            fill_old_revisions(self.index.conn, self.history)  # the kept revision files
                        if bulk:
                            self.index.make_note_indexes()
                done += len(batch)
                if progress is not None:
                    progress(done, total)
        finally:
            prepared.close()
        if run.inserted >= _OPTIMIZE_AFTER and run.inserted * 4 >= self.index.note_count():
            self.index.optimize()
        if only is None:
            self.index.remember("folder_digest", digest)
        report.problems = self.index.problems()
        return report

    def _prepared(self, path: str, state: FileState, ahead: dict[str, Prepared]) -> Prepared:
        """What was prepared for *path* ahead, or the same made now."""
        done = ahead.get(path)
        if done is None:
            return prepare_files(self.folder, self.max_bytes, [(path, state)])[path]
        return done

    def _missing_by_sha(self, run: _Pass) -> dict[str, list[PathRow]]:
        """Indexed notes whose files are gone, by content hash (to recognise renames).

        Built once a pass, inside its first transaction, and shared by every batch, so
        a rename is recognised whichever batch the new path falls in.
        """
        if run.missing_rows is None:
            run.missing_rows = {}
            for p in run.missing:
                row = self.index.row_for_path(p)
                if row is not None and self.folder.state(p) is None:
                    run.missing_rows.setdefault(row.sha256, []).append(row)
        return run.missing_rows

    def _retire(self, row: PathRow, op: str, records: list[dict[str, Any]]) -> None:
        """Drop a note's index row, keeping the text last seen as a revision (the index is
        the only place that still has it)."""
        rowid, nid, path, _m, _s, _sha, revision = row
        self.history.save_revision(nid, revision, self.index.text_of(rowid).encode("utf-8"))
        if op:
            records.append({"op": op, "id": nid, "path": path, "at": now_iso()})
        self.index.delete(rowid)

    def _batch(self, items: list[tuple[str, FileState]], report: SyncReport, ahead: dict, run: _Pass) -> None:
        """Index one batch within the write transaction."""
        index = self.index
        if run.fresh and index.note_count() != run.inserted:
            run.fresh = False  # another process indexed notes meanwhile: check every row
        fresh = run.fresh
        missing_rows = self._missing_by_sha(run)
        records: list[dict[str, Any]] = []
        rows: list[IndexRow] = []
        for path, state in items:
            # Rows and files are looked at again inside the transaction: notewell writers change
            # files only while they hold it, so what is there now is what their index rows say.
            # A text read before the transaction may be older than a writer's commit since, and
            # indexing it would roll that note back.
            row = None if fresh else index.row_for_path(path)
            now = self.folder.state(path) if state.size >= 0 else state
            if now is None:
                continue  # gone since the scan: a later pass sees it missing
            stale = (now.mtime_ns, now.size) != (state.mtime_ns, state.size)
            if stale:
                state = now  # and the text read ahead was of the file as it was: read it again
            if state.size < 0:
                reasons = {BAD_NAME_SIZE: BAD_NAME, OUTSIDE_SIZE: OUTSIDE, LINKED_SIZE: LINKED}
                reason = reasons.get(state.size, "cannot be read (a dangling link?)")
                index.set_problem(path, reason, state.mtime_ns, state.size)
                if row is not None:
                    self._retire(row, "", records)  # it was a note: stop serving the old text
                    report.changed += 1
                continue
            if row is not None and (row.mtime_ns, row.size) == (state.mtime_ns, state.size):
                continue
            got = self._prepared(path, state, {} if stale else ahead)
            prepared, sha = got.row, got.sha
            if got.text is not None and got.nbytes != state.size:
                # Written to (outside notewell) while being read: take the state that goes with it.
                now = self.folder.state(path)
                if now is None:
                    continue
                state = now
                prepared = None
            if got.text is None:
                index.set_problem(path, got.error or "cannot be read", state.mtime_ns, state.size)
                if row is not None:
                    # It was a note and cannot be read now: stop serving the old text.
                    self._retire(row, "", records)
                    report.changed += 1
                continue
            if not fresh:
                index.clear_problem(path)
            text = got.text
            if row is not None:
                if row.sha256 == sha:
                    index.touch(row.rowid, state.mtime_ns, state.size)
                    continue
                self._changed(row, path, text, sha, state, records, report)
                nid = row.id
            else:
                nid = self._placed(path, sha, state, missing_rows, records, report, run)
            rows.append(self._named(prepared, nid, path, text, sha, state))
        self.commit_records(records)
        self._with_journal(rows)
        index.upsert_many(rows, new=fresh)
        run.inserted += len(rows)
        if not fresh:
            for written in rows:
                if written.revision > 1:
                    # Revisions that came with the text (a pull, another notewell's edit not yet indexed).
                    fill_old_revisions(index.conn, self.history, written.id)

    def _changed(
        self, row: PathRow, path: str, text: str, sha: str, state: FileState, records: list[dict[str, Any]],
        report: SyncReport,
    ) -> None:  # fmt: skip
        """A note's file holds another text than its index row: the change journaled (unless the
        journal has it already), the text last seen kept as a revision."""
        meta = self.index.meta_for_id(row.id)
        if meta is not None and meta.sha256 == sha:
            return  # written by a notewell that had not indexed it (killed before its commit): it stands
        # Edited outside notewell: keep the text we last saw as a revision.
        old_text = self.index.text_of(row.rowid)
        self.history.save_revision(row.id, row.revision, old_text.encode("utf-8"))
        keep_old_revision(self.index.conn, row.id, row.revision, old_text, path, then=text)
        at = iso_from_ns(state.mtime_ns)
        records.append(
            {"op": "change", "id": row.id, "at": at, "rev": row.revision + 1, "sha256": sha, "size": state.size}
        )
        report.changed += 1

    def _placed(
        self, path: str, sha: str, state: FileState, missing_rows: dict[str, list[PathRow]],
        records: list[dict[str, Any]], report: SyncReport, run: _Pass,
    ) -> str:  # fmt: skip
        """The id of a file the index has no row for: a note moved here (its text gone from
        another path), or one the journal or its header names, or a new one."""
        candidates = missing_rows.get(sha)
        if candidates:
            moved = candidates.pop()
            records.append({"op": "move", "id": moved.id, "path": path, "at": now_iso()})
            self.index.delete(moved.rowid, moved=True)
            report.moved += 1
            return moved.id
        nid, record = self._identify(path, sha, state, iso_from_ns(state.mtime_ns), run.assigned)
        run.assigned.add(nid)
        if record is not None:
            records.append(record)
            if record["op"] == "adopt":
                report.added += 1
            elif record["op"] == "move":
                report.moved += 1
        return nid

    def _with_journal(self, rows: list[IndexRow]) -> None:
        """Each row's author, times, revision, attempt and kind as the journal has them."""
        metas = self.index.metas_for_ids([row.id for row in rows])
        for row in rows:
            meta = metas.get(row.id)
            if meta is not None:
                row.author, row.created_at, row.updated_at = meta.author, meta.created_at, meta.updated_at
                row.revision, row.attempt_id, row.note_kind = meta.revision, meta.attempt, meta.note_kind or "note"
                if not (row.header or {}).get("model"):
                    row.model = meta.model

    def _finish(self, gone_problems: list[str], report: SyncReport, run: _Pass) -> None:
        """After the last batch: notes whose files are gone and were not renamed."""
        records: list[dict[str, Any]] = []
        for row in (r for same in self._missing_by_sha(run).values() for r in same):
            current = self.index.row_for_path(row.path)
            if current is None or current.rowid != row.rowid or self.folder.state(row.path) is not None:
                continue
            # Deleted outside notewell: the last text we saw is kept as a revision.
            self._retire(row, "gone", records)
            report.removed += 1
        for p in gone_problems:
            self.index.clear_problem(p)
        self.commit_records(records)

    def _named(self, prepared: IndexRow | None, nid: str, path: str, text: str, sha: str, state: FileState) -> IndexRow:
        if prepared is None:
            return self._row(nid, path, text, sha, state)
        prepared.id = nid
        return prepared

    def _row(self, nid: str, path: str, text: str, sha: str, state: FileState) -> IndexRow:
        # Timestamps and authors are filled from journal_meta once the records are applied.
        at = iso_from_ns(state.mtime_ns)
        return build_row(
            note_id=nid,
            path=path,
            text=text,
            sha256=sha,
            state=state,
            meta={"created_at": at, "updated_at": at, "revision": 1},
        )

    def _identify(
        self, path: str, sha: str, state: FileState, at: str, assigned: set[str]
    ) -> tuple[str, dict[str, Any] | None]:
        """The id of a file the index does not know, and the journal record that says so.

        Never an id in *assigned* (handed out earlier in this pass, not yet journaled).
        """
        index = self.index
        meta = index.meta_for_path(path)
        if meta is not None and meta.id not in assigned:
            nid = meta.id
            if meta.sha256 and meta.sha256 != sha:
                # Changed after the journal's last word on it (e.g. a crash before indexing).
                return nid, {
                    "op": "change",
                    "id": nid,
                    "path": path,
                    "at": at,
                    "rev": meta.revision + 1,
                    "sha256": sha,
                    "size": state.size,
                }
            return nid, None
        stem = path.rsplit("/", 1)[-1][:-3]
        if is_note_id(stem) and stem not in assigned:
            known = index.meta_for_id(stem)
            if known is None:
                return stem, self._adopt(stem, path, sha, state, at)
            other = known[1]
            if known[8] or other is None or self.folder.state(other) is None:
                # Our note, moved by hand (or brought back): it keeps its id.
                rev = known[6] if known[7] == sha else known[6] + 1
                op = "move" if known[7] == sha else "change"
                return stem, {
                    "op": op,
                    "id": stem,
                    "path": path,
                    "at": at,
                    "rev": rev,
                    "sha256": sha,
                    "size": state.size,
                }
        gone = index.deleted_with(sha)
        if gone is not None and gone not in assigned:
            # The text of a deleted note is back (an undo, a restore from a backup, the bin):
            # it is that note again, with its id and history.
            return gone, {"op": "move", "id": gone, "path": path, "at": at}
        nid = derived_note_id(path)
        while nid in assigned or index.id_known(nid):
            known = index.meta_for_id(nid)
            if nid not in assigned and known is not None and known[8] and known[7] == sha:
                # The same text is back where a deleted note was: it is that note again.
                return nid, {"op": "move", "id": nid, "path": path, "at": at}
            # Never hand a used id to a different text: its history belongs to another note.
            nid = new_note_id()
        return nid, self._adopt(nid, path, sha, state, at)

    @staticmethod
    def _adopt(nid: str, path: str, sha: str, state: FileState, at: str) -> dict[str, Any]:
        return {"op": "adopt", "id": nid, "path": path, "at": at, "rev": 1, "sha256": sha, "size": state.size}
