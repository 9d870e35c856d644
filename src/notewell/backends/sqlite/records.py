"""The service's reads and writes (:mod:`..records`) on the embedded index.

Reads run on the calling thread's connection inside the store's read; writes are journal
records (``attempt``, ``attempt_end``, ``project``, ``read``), each committed with the
index rows they make in one transaction, under the store's lock: the journal is the truth
and a rebuilt index gets them back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...model.attempt import ATTEMPT_COLUMNS, Attempt, attempt_from_row, require_running
from ...model.note import Card
from ...search.filters import Filters
from ..records import LinkedNote, Lock, ProjectRow, RevisionRow
from .filters_sql import filter_sql
from .history import History
from .index import Index
from .keyword import list_cards
from .sync import Syncer

__all__ = ["SqliteWriteTurn", "SqliteSnapshot"]


def _where(filters: Filters) -> tuple[str, list[Any]]:
    where, params = filter_sql(filters)
    return (f" WHERE {where}" if where else ""), params


class SqliteSnapshot:
    """Reads on the index the store's read holds (:class:`~..records.Snapshot`)."""

    def __init__(self, index: Index, history: History) -> None:
        self._index = index
        self._history = history

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._index.conn.execute(sql, params).fetchone()

    def private_projects(self) -> list[tuple[str, str | None]]:
        return [(n, o) for n, o in self._index.query("SELECT name, owner FROM projects WHERE private = 1")]

    def campaign_members(self, campaign: str) -> Iterable[str]:
        return [
            name
            for (name,) in self._index.query(
                "SELECT DISTINCT a.project FROM attempts a LEFT JOIN projects p ON p.name = a.project"
                " WHERE coalesce(p.campaign, a.campaign) = ? UNION SELECT name FROM projects WHERE campaign = ?",
                (campaign, campaign),
            )
        ]

    def _attempt_of(self, row: Any) -> Attempt:
        (count,) = self._one("SELECT count(*) FROM note_index WHERE attempt_id = ?", (row[0],))
        return attempt_from_row(row, count)

    def attempt(self, attempt_id: str) -> Attempt | None:
        row = self._one(f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE id = ?", (attempt_id,))
        return self._attempt_of(row) if row else None

    def attempts(
        self, *, project: str | None, running: bool | None, hidden: tuple[str, ...], limit: int
    ) -> list[Attempt]:
        clauses: list[str] = []
        params: list[Any] = []
        if project is not None:
            clauses.append("project = ?")
            params.append(project)
        if running is not None:
            clauses.append("ended_at IS NULL" if running else "ended_at IS NOT NULL")
        if hidden:
            clauses.append(f"project NOT IN ({','.join('?' * len(hidden))})")
            params.extend(hidden)
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        rows = self._index.query(
            f"SELECT {ATTEMPT_COLUMNS} FROM attempts{where} ORDER BY started_at DESC, id LIMIT ?", [*params, limit]
        )
        return [self._attempt_of(r) for r in rows]

    def project(self, name: str) -> ProjectRow:
        row = self._one("SELECT private, owner, campaign FROM projects WHERE name = ?", (name,))
        private, owner, campaign = row if row else (0, None, None)
        (attempts,) = self._one("SELECT count(*) FROM attempts WHERE project = ?", (name,))
        (notes,) = self._one(
            "SELECT count(*) FROM note_index WHERE attempt_id IN (SELECT id FROM attempts WHERE project = ?)", (name,)
        )
        if campaign is None:
            got = self._one(
                "SELECT campaign FROM attempts WHERE project = ? AND campaign IS NOT NULL"
                " ORDER BY started_at DESC LIMIT 1",
                (name,),
            )
            campaign = got[0] if got else None
        return ProjectRow(name, row is not None, bool(private), owner, campaign, attempts, notes)

    def project_activity(self) -> list[tuple[str, str | None]]:
        return [
            (name, last)
            for name, last in self._index.query(
                "SELECT name, max(at) FROM (SELECT name, NULL AS at FROM projects"
                " UNION ALL SELECT project, started_at FROM attempts) GROUP BY name"
            )
        ]

    def note_project(self, note_id: str) -> str | None:
        row = self._one(
            "SELECT a.project FROM journal_meta j JOIN attempts a ON a.id = j.attempt WHERE j.id = ?", (note_id,)
        )
        return row[0] if row else None

    def notes_named(self, name: str, limit: int, hidden: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        # substr from the end: '/' and the name, compared whole (no LIKE, whose % and _ a name may hold).
        marks = ",".join("?" * len(hidden))
        outside = (
            f" AND NOT EXISTS (SELECT 1 FROM journal_meta j JOIN attempts a ON a.id = j.attempt"
            f" WHERE j.id = n.id AND a.project IN ({marks}))"
            if hidden
            else ""
        )
        sql = (
            "SELECT n.id, n.path FROM note_index n WHERE (n.path = ? OR (length(n.path) > length(?)"
            f" AND substr(n.path, length(n.path) - length(?)) = '/' || ?)){outside} ORDER BY n.path LIMIT ?"
        )
        return [(str(i), str(p)) for i, p in self._index.query(sql, (name, name, name, name, *hidden, limit))]

    def note_attempt(self, note_id: str) -> str | None:
        row = self._one("SELECT attempt FROM journal_meta WHERE id = ?", (note_id,))
        return row[0] if row else None

    def notes_in(self, projects: tuple[str, ...], note_ids: list[str]) -> set[str]:
        if not projects or not note_ids:
            return set()
        marks_p = ",".join("?" * len(projects))
        found: set[str] = set()
        # In slices: SQLite allows a bounded number of variables in one statement.
        for at in range(0, len(note_ids), 500):
            part = note_ids[at : at + 500]
            found.update(
                nid
                for (nid,) in self._index.query(
                    f"SELECT j.id FROM journal_meta j JOIN attempts a ON a.id = j.attempt"
                    f" WHERE a.project IN ({marks_p}) AND j.id IN ({','.join('?' * len(part))})",
                    [*projects, *part],
                )
            )
        return found

    def reads(self, attempt_id: str) -> list[tuple[str, str | None, str]]:
        return [
            (n, t, at)
            for n, t, at in self._index.query(
                "SELECT r.note, n.title, r.at FROM attempt_reads r LEFT JOIN note_index n ON n.id = r.note"
                " WHERE r.attempt = ? ORDER BY r.at, r.note",
                (attempt_id,),
            )
        ]

    def linked_note(self, note_id: str) -> LinkedNote | None:
        row = self._one(
            "SELECT n.id, n.title, n.kind, a.project FROM note_index n LEFT JOIN attempts a ON a.id = n.attempt_id"
            " WHERE n.id = ?",
            (note_id,),
        )
        return LinkedNote(*row) if row else None

    def attempt_link(self, attempt_id: str) -> tuple[str, str | None] | None:
        row = self._one("SELECT project, author FROM attempts WHERE id = ?", (attempt_id,))
        return (row[0], row[1]) if row else None

    def builds_on(self, note_id: str) -> list[str]:
        row = self._one("SELECT builds_on FROM note_index WHERE id = ?", (note_id,))
        return list(json.loads(row[0])) if row else []

    def built_on_by(self, note_id: str) -> list[str]:
        return [
            r
            for (r,) in self._index.query(
                "SELECT n.id FROM note_links l JOIN note_index n ON n.rowid = l.note WHERE l.target = ?"
                " ORDER BY n.updated_at DESC",
                (note_id,),
            )
        ]

    def supersedes(self, note_id: str) -> list[str]:
        return [
            t
            for (t,) in self._index.query(
                "SELECT s.target FROM note_index n JOIN note_supersedes s ON s.note = n.rowid WHERE n.id = ?"
                " ORDER BY s.target",
                (note_id,),
            )
        ]

    def superseded_by(self, note_ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        ids = list(dict.fromkeys(note_ids))
        for at in range(0, len(ids), 500):  # SQLite allows a bounded number of variables
            part = ids[at : at + 500]
            for target, later in self._index.query(
                "SELECT t.id, n.id FROM note_supersedes s JOIN note_index t ON t.id = s.target"
                " JOIN note_index n ON n.rowid = s.note"
                f" WHERE s.target IN ({','.join('?' * len(part))}) AND (n.created_at, n.id) > (t.created_at, t.id)"
                " ORDER BY n.updated_at DESC, n.id",
                part,
            ):
                found.setdefault(target, []).append(later)
        return found

    def cards(self, *, limit: int, offset: int, filters: Filters) -> list[Card]:
        return list_cards(self._index, limit=limit, offset=offset, filters=filters)

    def count(self, filters: Filters) -> int:
        where, params = _where(filters)
        return int(self._index.query(f"SELECT count(*) FROM note_index n{where}", params)[0][0])

    def kind_counts(self, filters: Filters) -> list[tuple[str | None, int]]:
        where, params = _where(filters)
        return [
            (k, c)
            for k, c in self._index.query(
                f"SELECT n.kind, count(*) FROM note_index n{where} GROUP BY n.kind ORDER BY count(*) DESC, n.kind",
                params,
            )
        ]

    def tag_counts(self, filters: Filters) -> list[tuple[str, int]]:
        where, params = filter_sql(filters)
        join = f" JOIN note_index n ON n.rowid = t.note WHERE {where}" if where else ""
        rows = self._index.query(
            f"SELECT t.tag, count(*) FROM note_tags t{join} GROUP BY t.tag ORDER BY count(*) DESC, t.tag", params
        )
        return [(t, c) for t, c in rows]

    def tags_and_summaries(self, filters: Filters) -> list[tuple[str, str | None, list[str], str | None]]:
        where, params = _where(filters)
        rows = self._index.query(
            f"SELECT n.id, n.title, n.tags, n.summary FROM note_index n{where}"
            " ORDER BY n.updated_at DESC, n.rowid DESC",
            params,
        )
        return [(nid, title, json.loads(tags), summary) for nid, title, tags, summary in rows]

    def problems(self) -> list[dict[str, str]]:
        return self._index.problems()

    def live_revision(self, note_id: str) -> int | None:
        row = self._one("SELECT revision FROM note_index WHERE id = ?", (note_id,))
        return row[0] if row else None

    def deleted_at(self, note_id: str) -> str | None:
        row = self._one("SELECT deleted_at FROM journal_meta WHERE id = ? AND deleted = 1", (note_id,))
        return row[0] if row else None

    def revisions(self, note_id: str, live: int | None) -> list[RevisionRow]:
        rows = self._index.query(
            "SELECT revision, op, at, author, sha256, size FROM revisions WHERE id = ? ORDER BY revision", (note_id,)
        )
        return [
            RevisionRow(
                rev, op, at, author, sha, size, rev == live or self._history.load_revision(note_id, rev) is not None
            )
            for rev, op, at, author, sha, size in rows
        ]


class SqliteWriteTurn(SqliteSnapshot):
    """Writes under the store's lock (:class:`~..records.WriteTurn`): each one journal record
    committed in its own transaction, after catching up with other processes' records."""

    def __init__(
        self, index: Index, history: History, sync: Syncer, add_summary: Callable[[str, Attempt], str]
    ) -> None:
        super().__init__(index, history)
        self._sync = sync
        self._add_summary = add_summary

    def _commit(self, record: dict[str, Any], check: Callable[[], object] | None = None) -> None:
        with self._index.write():
            self._sync.catch_up()
            if check is not None:
                check()  # against what another process may have written meanwhile
            self._sync.commit_records([record])

    def lock_attempt(self, attempt_id: str, lock: Lock) -> Attempt | None:
        return self.attempt(attempt_id)  # the store's lock and the journal keep it: no row locks

    def insert_attempt(
        self, attempt_id: str, *, project: str, campaign: str | None, author: str, model: str | None, at: str
    ) -> bool:
        record = {
            "op": "attempt",
            "id": attempt_id,
            "project": project,
            "campaign": campaign,
            "author": author,
            "model": model,
            "at": at,
        }
        with self._index.write():
            self._sync.catch_up()
            if self._one("SELECT 1 FROM attempts WHERE id = ?", (attempt_id,)) is not None:
                return False
            self._sync.commit_records([record])
        return True

    def add_summary(self, text: str, attempt: Attempt) -> str:
        return self._add_summary(text, attempt)

    def end_attempt(self, attempt_id: str, *, outcome: str, at: str, summary_id: str | None) -> None:
        record: dict[str, Any] = {"op": "attempt_end", "id": attempt_id, "outcome": outcome, "at": at}
        if summary_id:
            record["summary"] = summary_id
        self._commit(record, lambda: require_running(self.attempt(attempt_id), attempt_id))

    def update_project(self, name: str, changes: dict[str, object], at: str) -> None:
        self._commit({"op": "project", "id": name, "at": at, **changes})

    def record_read(self, attempt_id: str, note_id: str, at: str) -> None:
        self._commit({"op": "read", "id": note_id, "attempt": attempt_id, "at": at})
