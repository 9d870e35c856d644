"""Attempts on the store: start, end (which freezes their notes), show and list.

An attempt lives in the journal (``attempt`` and ``attempt_end`` records), so it
survives a rebuild of the index like every note does.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import FrozenError, InvalidArgumentError, NotFoundError
from ..model.attempt import Attempt, check_attempt_id, check_outcome, check_project, titled_summary
from ..model.ids import new_attempt_id
from ..model.note import AUTHOR_MAX, MODEL_MAX, Note, check_label, check_text
from ..model.timestamps import now_iso
from ..model.visibility import Viewer, may_see
from ..model.visibility import hidden_projects as viewer_hidden_projects
from ..search.filters import Filters
from ..storage.index import Index
from ..storage.sync import Syncer
from .guard import StoreLock, guarded

__all__ = ["AttemptsMixin"]

_ATTEMPT_COLUMNS = "id, project, campaign, author, model, started_at, ended_at, outcome, summary_note"


class AttemptsMixin:
    """Attempts, for :class:`Store`."""

    _index: Index
    _sync: Syncer
    _lock: StoreLock

    if TYPE_CHECKING:

        def refresh(self, *, wait: bool = True) -> Any: ...

        def _read(self) -> AbstractContextManager[Index]: ...

        def add_notes(self, texts: Any, **options: Any) -> list[Note]: ...

    @guarded
    def start_attempt(
        self, project: str, *, author: str, model: str | None = None, campaign: str | None = None
    ) -> Attempt:
        """Start a run on *project* (a name, kept as its slug); notes written with its id
        land on it and can change until :meth:`end_attempt`."""
        project = check_project(project)
        campaign = check_project(campaign, "campaign") if campaign is not None else None
        who = check_label(author, "author", AUTHOR_MAX)
        if who is None:
            raise InvalidArgumentError("an attempt needs an author (an agent's or a person's name)")
        model = check_label(model, "model", MODEL_MAX)
        with self._lock:
            self.refresh()
            with self._index.write():
                self._sync.catch_up()
                attempt_id = new_attempt_id()
                while self._index.conn.execute("SELECT 1 FROM attempts WHERE id = ?", (attempt_id,)).fetchone():
                    attempt_id = new_attempt_id()
                record = {
                    "op": "attempt",
                    "id": attempt_id,
                    "project": project,
                    "campaign": campaign,
                    "author": who,
                    "model": model,
                    "at": now_iso(),
                }
                self._sync.commit_records([record])
            return self._attempt(attempt_id)

    @guarded
    def end_attempt(self, attempt_id: str, *, outcome: str, summary: str | bytes | None = None) -> Attempt:
        """End a running attempt with an outcome (succeeded, failed, abandoned, or another
        short word). A *summary* is written first, as a note of ``note_kind`` summary on it.
        Its notes are frozen from then on."""
        attempt_id = check_attempt_id(attempt_id)
        outcome = check_outcome(outcome)
        # Bad text fails before anything changes.
        text = check_text(summary, max_bytes=self.max_bytes)[0] if summary is not None else None
        with self._lock:
            self.refresh()
            running = self._running_attempt(attempt_id)
            summary_id = None
            if text is not None:
                text = titled_summary(text, running.project, outcome)
                summary_id = self.add_notes([text], attempt=attempt_id, _note_kind="summary")[0].id
            with self._index.write():
                self._sync.catch_up()
                self._running_attempt(attempt_id)  # not ended meanwhile by another process
                record = {"op": "attempt_end", "id": attempt_id, "outcome": outcome, "at": now_iso()}
                if summary_id:
                    record["summary"] = summary_id
                self._sync.commit_records([record])
            return self._attempt(attempt_id)

    @guarded
    def get_attempt(self, attempt_id: str, *, viewer: Viewer | None = None) -> Attempt:
        """An attempt: who ran it on what, when, how it ended, how many notes it wrote."""
        attempt_id = check_attempt_id(attempt_id)
        with self._read():
            attempt = self._attempt(attempt_id)
            if attempt.project in self._hidden_projects(viewer):
                raise NotFoundError(f"no attempt {attempt_id}")
            return attempt

    @guarded
    def list_attempts(
        self,
        *,
        project: str | None = None,
        running: bool | None = None,
        limit: int = 50,
        viewer: Viewer | None = None,
    ) -> list[Attempt]:
        """Attempts, the most recently started first; optionally one project's, or only
        the running (or only the ended) ones."""
        from ..search.request import check_limit

        check_limit(limit)
        clauses, params = [], []
        if project is not None:
            clauses.append("project = ?")
            params.append(check_project(project))
        if running is not None:
            clauses.append("ended_at IS NULL" if running else "ended_at IS NOT NULL")
        with self._read():
            hidden = self._hidden_projects(viewer)
            if hidden:
                clauses.append(f"project NOT IN ({','.join('?' * len(hidden))})")
                params.extend(hidden)
            where = " WHERE " + " AND ".join(clauses) if clauses else ""
            rows = self._index.query(
                f"SELECT {_ATTEMPT_COLUMNS} FROM attempts{where} ORDER BY started_at DESC, id LIMIT ?",
                [*params, limit],
            )
            return [self._from_row(r) for r in rows]

    @guarded
    def set_project(
        self,
        project: str,
        *,
        private: bool | None = None,
        owner: str | None = None,
        campaign: str | None = None,
    ) -> dict[str, Any]:
        """Settings of a project: private (seen by its owner and administrators only), its
        owner, its campaign. Only what is given changes. Returns the project."""
        name = check_project(project)
        record: dict[str, Any] = {"op": "project", "id": name, "at": now_iso()}
        if private is not None:
            if not isinstance(private, bool):
                raise InvalidArgumentError("private must be true or false")
            record["private"] = private
        if owner is not None:
            record["owner"] = check_label(owner, "owner", AUTHOR_MAX)
        if campaign is not None:
            record["campaign"] = check_project(campaign, "campaign")
        with self._lock:
            self.refresh()
            with self._index.write():
                self._sync.catch_up()
                self._sync.commit_records([record])
            return self._project(name)

    @guarded
    def get_project(self, project: str, *, viewer: Viewer | None = None) -> dict[str, Any]:
        """A project: its settings and how many attempts and notes it has."""
        name = check_project(project)
        with self._read():
            found = self._project(name)
            known = self._index.conn.execute("SELECT 1 FROM projects WHERE name = ?", (name,)).fetchone()
            if not (known or found["attempts"]) or not may_see(viewer, private=found["private"], owner=found["owner"]):
                raise NotFoundError(f"no project {name}")
            return found

    @guarded
    def list_projects(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every project *viewer* may see (settings, counts, last activity), most recently active first."""
        with self._read():
            hidden = set(self._hidden_projects(viewer))
            rows = self._index.conn.execute(
                "SELECT name, max(at) FROM (SELECT name, NULL AS at FROM projects"
                " UNION ALL SELECT project, started_at FROM attempts) GROUP BY name"
            ).fetchall()
            out = []
            for name, last in rows:
                if name in hidden:
                    continue
                found = self._project(name)
                out.append({**found, "last_activity": last})
            out.sort(key=lambda p: (p["last_activity"] or "", p["name"]), reverse=True)
            return out

    @guarded
    def attempt_reads(self, attempt_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """The notes read while working on an attempt (get_note with working_attempt_id), oldest first."""
        attempt_id = check_attempt_id(attempt_id)
        with self._read():
            hidden = self._hidden_projects(viewer)
            if self._attempt(attempt_id).project in hidden:
                raise NotFoundError(f"no attempt {attempt_id}")
            rows = self._index.query(
                "SELECT r.note, r.at, n.title FROM attempt_reads r LEFT JOIN note_index n ON n.id = r.note"
                " WHERE r.attempt = ? ORDER BY r.at, r.note",
                (attempt_id,),
            )
            secret = self._notes_in(hidden, list({n for n, _a, _t in rows}))
            return [{"note_id": n, "title": t, "at": a} for n, a, t in rows if n not in secret]

    # -- helpers for the store ----------------------------------------------

    def _project(self, name: str) -> dict[str, Any]:
        row = self._index.conn.execute(
            "SELECT private, owner, campaign FROM projects WHERE name = ?", (name,)
        ).fetchone()
        private, owner, campaign = row if row else (0, None, None)
        (attempts,) = self._index.conn.execute("SELECT count(*) FROM attempts WHERE project = ?", (name,)).fetchone()
        (notes,) = self._index.conn.execute(
            "SELECT count(*) FROM note_index WHERE attempt_id IN (SELECT id FROM attempts WHERE project = ?)", (name,)
        ).fetchone()
        if campaign is None:
            got = self._index.conn.execute(
                "SELECT campaign FROM attempts WHERE project = ? AND campaign IS NOT NULL"
                " ORDER BY started_at DESC LIMIT 1",
                (name,),
            ).fetchone()
            campaign = got[0] if got else None
        return {
            "name": name,
            "private": bool(private),
            "owner": owner,
            "campaign": campaign,
            "attempts": attempts,
            "notes": notes,
        }

    def _scoped(self, filters: Filters, viewer: Viewer | None) -> Filters:
        """*filters* scoped to what *viewer* may see (:meth:`Filters.scoped`)."""
        conn = self._index.conn
        return filters.scoped(
            viewer,
            private_projects=lambda: conn.execute("SELECT name, owner FROM projects WHERE private = 1").fetchall(),
            campaign_members=lambda campaign: (
                name
                for (name,) in conn.execute(
                    "SELECT DISTINCT a.project FROM attempts a LEFT JOIN projects p ON p.name = a.project"
                    " WHERE coalesce(p.campaign, a.campaign) = ?"
                    " UNION SELECT name FROM projects WHERE campaign = ?",
                    (campaign, campaign),
                )
            ),
        )

    @guarded
    def hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]:
        """The private projects *viewer* may not see (their names)."""
        with self._read():
            return self._hidden_projects(viewer)

    def _hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]:
        return viewer_hidden_projects(
            viewer, lambda: self._index.conn.execute("SELECT name, owner FROM projects WHERE private = 1").fetchall()
        )

    def _check_visible(self, note_id: str, viewer: Viewer | None) -> None:
        """NotFoundError when the note (live or deleted) belongs to a project *viewer* may not see."""
        hidden = self._hidden_projects(viewer)
        if not hidden:
            return
        row = self._index.conn.execute(
            "SELECT a.project FROM journal_meta j JOIN attempts a ON a.id = j.attempt WHERE j.id = ?", (note_id,)
        ).fetchone()
        if row is not None and row[0] in hidden:
            raise NotFoundError(f"no note {note_id}")

    def _notes_in(self, projects: tuple[str, ...], note_ids: list[str]) -> set[str]:
        """Which of *note_ids* were written on attempts of *projects*."""
        if not projects or not note_ids:
            return set()
        marks_p, marks_n = ",".join("?" * len(projects)), ",".join("?" * len(note_ids))
        return {
            nid
            for (nid,) in self._index.conn.execute(
                f"SELECT j.id FROM journal_meta j JOIN attempts a ON a.id = j.attempt"
                f" WHERE a.project IN ({marks_p}) AND j.id IN ({marks_n})",
                [*projects, *note_ids],
            )
        }

    def _record_read(self, attempt_id: str, note_id: str, viewer: Viewer | None = None) -> None:
        """Note that *note_id* was read while working on an attempt (with the store's lock
        held: a write). An attempt that has ended takes no more records: the read is served,
        not recorded."""
        attempt = self._attempt(check_attempt_id(attempt_id))
        if attempt.project in self._hidden_projects(viewer):
            raise NotFoundError(f"no attempt {attempt.id}")
        if not attempt.running:
            return
        with self._index.write():
            self._sync.catch_up()
            self._sync.commit_records([{"op": "read", "id": note_id, "attempt": attempt_id, "at": now_iso()}])

    def _from_row(self, row: Any) -> Attempt:
        (count,) = self._index.conn.execute(
            "SELECT count(*) FROM note_index WHERE attempt_id = ?", (row[0],)
        ).fetchone()
        return Attempt(*row, notes=count)

    def _attempt(self, attempt_id: str) -> Attempt:
        rows = self._index.query(f"SELECT {_ATTEMPT_COLUMNS} FROM attempts WHERE id = ?", (attempt_id,))
        if not rows:
            raise NotFoundError(f"no attempt {attempt_id}")
        return self._from_row(rows[0])

    def _running_attempt(self, attempt_id: str) -> Attempt:
        attempt = self._attempt(check_attempt_id(attempt_id))
        if not attempt.running:
            raise FrozenError(
                f"attempt {attempt.id} ended ({attempt.outcome}) at {attempt.ended_at}; it takes no more notes"
            )
        return attempt

    def _check_unfrozen(self, note_id: str) -> None:
        """FrozenError when the note was written on an attempt that has ended."""
        row = self._index.conn.execute(
            "SELECT a.id, a.ended_at, a.outcome FROM journal_meta j JOIN attempts a ON a.id = j.attempt WHERE j.id = ?",
            (note_id,),
        ).fetchone()
        if row is not None and row[1] is not None:
            raise FrozenError(f"{note_id} is frozen: its attempt {row[0]} ended ({row[2]}) at {row[1]}")
