"""The service's reads and writes (:mod:`..records`) on PostgreSQL, inside one transaction.

Freezing is atomic across servers: writing on an attempt takes a share lock on its row
(``lock_attempt(…, "share")``) and ending it the row's update lock, so a note either lands
before the end (and is frozen with the rest) or is refused as frozen; recording a read
locks the attempt the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...model.attempt import ATTEMPT_COLUMNS, Attempt, attempt_from_row
from ...model.note import Card
from ...search.filters import Filters
from ..records import LinkedNote, Lock, ProjectRow, RevisionRow
from .db import PgDatabase
from .filters_sql import pg_filter_sql
from .keyword import pg_list_cards

__all__ = ["PgWriteTurn", "PgPooledSnapshot", "PgSnapshot"]

_LOCKS = {"share": " FOR SHARE", "update": " FOR UPDATE"}


def _where(filters: Filters) -> tuple[str, list[Any]]:
    where, params = pg_filter_sql(filters)
    return (f" WHERE {where}" if where else ""), list(params)


class PgSnapshot:
    """Reads in the caller's transaction *conn* (:class:`~..records.Snapshot`)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self._conn.execute(sql, params).fetchall())

    def private_projects(self) -> list[tuple[str, str | None]]:
        return [(n, o) for n, o in self._all("SELECT name, owner FROM projects WHERE private")]

    def campaign_members(self, campaign: str) -> Iterable[str]:
        return [
            name
            for (name,) in self._all(
                "SELECT DISTINCT a.project FROM attempts a LEFT JOIN projects p ON p.name = a.project"
                " WHERE coalesce(p.campaign, a.campaign) = %s UNION SELECT name FROM projects WHERE campaign = %s",
                (campaign, campaign),
            )
        ]

    def _load(self, attempt_id: str, lock: str = "") -> Attempt | None:
        row = self._one(f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE id = %s{lock}", (attempt_id,))
        if row is None:
            return None
        (count,) = self._one("SELECT count(*) FROM notes WHERE attempt_id = %s", (attempt_id,))
        return attempt_from_row(row, count)

    def attempt(self, attempt_id: str) -> Attempt | None:
        return self._load(attempt_id)

    def attempts(
        self, *, project: str | None, running: bool | None, hidden: tuple[str, ...], limit: int
    ) -> list[Attempt]:
        clauses: list[str] = []
        params: list[Any] = []
        if project is not None:
            clauses.append("a.project = %s")
            params.append(project)
        if running is not None:
            clauses.append("a.ended_at IS NULL" if running else "a.ended_at IS NOT NULL")
        if hidden:
            clauses.append("NOT (a.project = ANY(%s))")
            params.append(list(hidden))
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        rows = self._all(
            f"SELECT {', '.join('a.' + c.strip() for c in ATTEMPT_COLUMNS.split(','))},"
            " (SELECT count(*) FROM notes n WHERE n.attempt_id = a.id)"
            f" FROM attempts a{where} ORDER BY a.started_at DESC, a.id LIMIT %s",
            [*params, limit],
        )
        return [attempt_from_row(r, r[9]) for r in rows]

    def project(self, name: str) -> ProjectRow:
        row = self._one("SELECT private, owner, campaign FROM projects WHERE name = %s", (name,))
        private, owner, campaign = row if row else (False, None, None)
        (attempts,) = self._one("SELECT count(*) FROM attempts WHERE project = %s", (name,))
        (notes,) = self._one(
            "SELECT count(*) FROM notes WHERE attempt_id IN (SELECT id FROM attempts WHERE project = %s)", (name,)
        )
        if campaign is None:
            got = self._one(
                "SELECT campaign FROM attempts WHERE project = %s AND campaign IS NOT NULL"
                " ORDER BY started_at DESC LIMIT 1",
                (name,),
            )
            campaign = got[0] if got else None
        return ProjectRow(name, row is not None, bool(private), owner, campaign, attempts, notes)

    def project_activity(self) -> list[tuple[str, str | None]]:
        return [
            (name, last)
            for name, last in self._all(
                "SELECT name, max(at) FROM (SELECT name, NULL AS at FROM projects"
                " UNION ALL SELECT project, started_at FROM attempts) AS x GROUP BY name"
            )
        ]

    def note_project(self, note_id: str) -> str | None:
        row = self._one(
            "SELECT a.project FROM (SELECT attempt_id FROM notes WHERE id = %s"
            " UNION ALL SELECT attempt_id FROM gone WHERE id = %s) x JOIN attempts a ON a.id = x.attempt_id",
            (note_id, note_id),
        )
        return row[0] if row else None

    def notes_named(self, name: str, limit: int, hidden: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        rows = self._all(
            "SELECT n.id, n.path FROM notes n LEFT JOIN attempts a ON a.id = n.attempt_id"
            " WHERE (n.path = %s OR right(n.path, %s) = %s) AND (a.project IS NULL OR NOT a.project = ANY(%s))"
            " ORDER BY n.path LIMIT %s",
            (name, len(name) + 1, "/" + name, list(hidden), limit),
        )
        return [(str(i), str(p)) for i, p in rows]

    def note_attempt(self, note_id: str) -> str | None:
        row = self._one(
            "SELECT attempt_id FROM notes WHERE id = %s UNION ALL SELECT attempt_id FROM gone WHERE id = %s",
            (note_id, note_id),
        )
        return row[0] if row else None

    def notes_in(self, projects: tuple[str, ...], note_ids: list[str]) -> set[str]:
        if not projects or not note_ids:
            return set()
        return {
            nid
            for (nid,) in self._all(
                "SELECT x.id FROM (SELECT id, attempt_id FROM notes WHERE id = ANY(%s)"
                " UNION ALL SELECT id, attempt_id FROM gone WHERE id = ANY(%s)) x"
                " JOIN attempts a ON a.id = x.attempt_id WHERE a.project = ANY(%s)",
                (note_ids, note_ids, list(projects)),
            )
        }

    def reads(self, attempt_id: str) -> list[tuple[str, str | None, str]]:
        return [
            (n, t, at)
            for n, t, at in self._all(
                "SELECT r.note, n.title, r.at FROM attempt_reads r LEFT JOIN notes n ON n.id = r.note"
                " WHERE r.attempt = %s ORDER BY r.at, r.note",
                (attempt_id,),
            )
        ]

    def linked_note(self, note_id: str) -> LinkedNote | None:
        row = self._one(
            "SELECT n.id, n.title, n.kind, a.project FROM notes n LEFT JOIN attempts a ON a.id = n.attempt_id"
            " WHERE n.id = %s",
            (note_id,),
        )
        return LinkedNote(*row) if row else None

    def attempt_link(self, attempt_id: str) -> tuple[str, str | None] | None:
        row = self._one("SELECT project, author FROM attempts WHERE id = %s", (attempt_id,))
        return (row[0], row[1]) if row else None

    def builds_on(self, note_id: str) -> list[str]:
        row = self._one("SELECT builds_on FROM notes WHERE id = %s", (note_id,))
        return list(row[0]) if row else []

    def built_on_by(self, note_id: str) -> list[str]:
        return [
            r
            for (r,) in self._all(
                "SELECT n.id FROM note_links l JOIN notes n ON n.id = l.source WHERE l.target = %s"
                " ORDER BY n.updated_at DESC",
                (note_id,),
            )
        ]

    def supersedes(self, note_id: str) -> list[str]:
        return [
            t
            for (t,) in self._all(
                'SELECT target FROM note_supersedes WHERE source = %s ORDER BY target COLLATE "C"', (note_id,)
            )
        ]

    def superseded_by(self, note_ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        # Compared byte by byte, as SQLite compares them: the two stores agree on who is later.
        for target, later in self._all(
            "SELECT t.id, n.id FROM note_supersedes s JOIN notes t ON t.id = s.target JOIN notes n ON n.id = s.source"
            ' WHERE s.target = ANY(%s) AND (n.created_at COLLATE "C", n.id COLLATE "C")'
            ' > (t.created_at COLLATE "C", t.id COLLATE "C")'
            ' ORDER BY n.updated_at DESC, n.id COLLATE "C"',
            (list(dict.fromkeys(note_ids)),),
        ):
            found.setdefault(target, []).append(later)
        return found

    def cards(self, *, limit: int, offset: int, filters: Filters) -> list[Card]:
        return pg_list_cards(self._conn, limit=limit, offset=offset, filters=filters)

    def count(self, filters: Filters) -> int:
        where, params = _where(filters)
        return int(self._one(f"SELECT count(*) FROM notes n{where}", params)[0])

    def kind_counts(self, filters: Filters) -> list[tuple[str | None, int]]:
        where, params = _where(filters)
        return [
            (k, c)
            for k, c in self._all(
                f"SELECT n.kind, count(*) FROM notes n{where} GROUP BY n.kind"
                " ORDER BY count(*) DESC, n.kind NULLS FIRST",  # as SQLite orders NULL
                params,
            )
        ]

    def tag_counts(self, filters: Filters) -> list[tuple[str, int]]:
        where, params = _where(filters)
        return [
            (t, c)
            for t, c in self._all(
                f"SELECT t.tag, count(*) FROM notes n CROSS JOIN LATERAL unnest(n.tags) AS t(tag){where}"
                " GROUP BY t.tag ORDER BY count(*) DESC, t.tag",
                params,
            )
        ]

    def tags_and_summaries(self, filters: Filters) -> list[tuple[str, str | None, list[str], str | None]]:
        where, params = _where(filters)
        rows = self._all(
            f"SELECT n.id, n.title, n.tags, n.summary FROM notes n{where} ORDER BY n.updated_at DESC, n.seq DESC",
            params,
        )
        return [(n, title, list(tags), summary) for n, title, tags, summary in rows]

    def problems(self) -> list[dict[str, str]]:
        return []  # a database has no files it could not read

    def live_revision(self, note_id: str) -> int | None:
        row = self._one("SELECT revision FROM notes WHERE id = %s", (note_id,))
        return row[0] if row else None

    def deleted_at(self, note_id: str) -> str | None:
        row = self._one("SELECT deleted_at FROM gone WHERE id = %s", (note_id,))
        return row[0] if row else None

    def revisions(self, note_id: str, live: int | None) -> list[RevisionRow]:
        rows = self._all(
            "SELECT revision, op, at, author, text FROM revisions WHERE id = %s ORDER BY revision", (note_id,)
        )
        out = []
        for rev, op, at, author, text in rows:
            data = text.encode("utf-8")
            out.append(RevisionRow(rev, op, at, author, hashlib.sha256(data).hexdigest(), len(data), True))
        return out


class PgWriteTurn(PgSnapshot):
    """Writes in the caller's transaction (:class:`~..records.WriteTurn`)."""

    def __init__(self, conn: Any, add_summary: Callable[[Any, str, Attempt], str]) -> None:
        super().__init__(conn)
        self._add_summary = add_summary

    def lock_attempt(self, attempt_id: str, lock: Lock) -> Attempt | None:
        return self._load(attempt_id, _LOCKS[lock])

    def insert_attempt(
        self, attempt_id: str, *, project: str, campaign: str | None, author: str, model: str | None, at: str
    ) -> bool:
        inserted = self._one(
            "INSERT INTO attempts(id, project, campaign, author, model, started_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
            (attempt_id, project, campaign, author, model, at),
        )
        if inserted is None:
            return False
        self._conn.execute("INSERT INTO projects(name) VALUES (%s) ON CONFLICT DO NOTHING", (project,))
        return True

    def add_summary(self, text: str, attempt: Attempt) -> str:
        return self._add_summary(self._conn, text, attempt)

    def end_attempt(self, attempt_id: str, *, outcome: str, at: str, summary_id: str | None) -> None:
        # The caller holds the row's update lock (lock_attempt "update"): nobody ended it meanwhile.
        self._conn.execute(
            "UPDATE attempts SET ended_at = %s, outcome = %s, summary_note = %s WHERE id = %s",
            (at, outcome, summary_id, attempt_id),
        )

    def update_project(self, name: str, changes: dict[str, object], at: str) -> None:
        self._conn.execute("INSERT INTO projects(name) VALUES (%s) ON CONFLICT DO NOTHING", (name,))
        for column, value in changes.items():  # column names come from the service's fixed set
            if column not in ("private", "owner", "campaign"):
                raise ValueError(f"not a project setting: {column}")
            self._conn.execute(f"UPDATE projects SET {column} = %s WHERE name = %s", (value, name))

    def record_read(self, attempt_id: str, note_id: str, at: str) -> None:
        self._conn.execute(
            "INSERT INTO attempt_reads(attempt, note, at) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (attempt_id, note_id, at),
        )


class PgPooledSnapshot(PgSnapshot):
    """Reads that each take a pooled connection for one statement and give it back (no
    snapshot across them): for a search, which holds no connection while its engines run."""

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(None)
        self._db = db

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._db.transaction() as conn:
            return conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._db.transaction() as conn:
            return list(conn.execute(sql, params).fetchall())

    def cards(self, *, limit: int, offset: int, filters: Filters) -> list[Card]:
        with self._db.transaction() as conn:
            return pg_list_cards(conn, limit=limit, offset=offset, filters=filters)
