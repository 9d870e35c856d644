"""Attempts and projects on PostgreSQL: start, end (which freezes their notes), show and
list attempts, the notes read while working on one; project settings, and which private
projects a viewer may not see.

Freezing is atomic across servers: writing a note on an attempt takes a share lock on the
attempt's row and checks that it runs; ending it takes the row's update lock, so a note
either lands before the end (and is frozen with the rest) or is refused as frozen.
An edit or delete of a note locks the note's row and its attempt's row the same way, and
so does recording a read (it lands before the end, or the ended attempt takes no record).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FrozenError, InvalidArgumentError, NotFoundError
from ..model.attempt import Attempt, check_attempt_id, check_outcome, check_project, titled_summary
from ..model.ids import new_attempt_id
from ..model.note import AUTHOR_MAX, MODEL_MAX, check_label, check_text
from ..model.timestamps import now_iso
from ..model.visibility import Viewer, may_see
from ..model.visibility import hidden_projects as viewer_hidden_projects
from ..search.filters import Filters
from ..search.request import check_limit
from ..storage.pg import PgDatabase

__all__ = [
    "PgAttemptsMixin",
    "PgProjectsMixin",
    "check_running",
    "check_unfrozen",
    "check_visible",
    "hidden_projects",
    "load_attempt",
    "record_read",
    "scoped",
]

_COLUMNS = "id, project, campaign, author, model, started_at, ended_at, outcome, summary_note"


def _frozen(attempt_id: str, outcome: str, ended_at: str) -> FrozenError:
    return FrozenError(f"attempt {attempt_id} ended ({outcome}) at {ended_at}; it takes no more notes")


def check_running(conn: Any, attempt_id: str) -> tuple[str, str | None, str | None]:
    """Lock a running attempt's row against ending (until the transaction ends); returns
    its author, model and project. NotFoundError or FrozenError otherwise."""
    row = conn.execute(
        "SELECT author, model, project, ended_at, outcome FROM attempts WHERE id = %s FOR SHARE", (attempt_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no attempt {attempt_id}")
    if row[3] is not None:
        raise _frozen(attempt_id, row[4], row[3])
    return row[0], row[1], row[2]


def check_unfrozen(conn: Any, note_id: str, attempt_id: str | None) -> None:
    """FrozenError when the note was written on an attempt that has ended (locking the
    attempt's row so that it cannot end while this transaction changes the note)."""
    if attempt_id is None:
        return
    row = conn.execute("SELECT ended_at, outcome FROM attempts WHERE id = %s FOR SHARE", (attempt_id,)).fetchone()
    if row is not None and row[0] is not None:
        raise FrozenError(f"{note_id} is frozen: its attempt {attempt_id} ended ({row[1]}) at {row[0]}")


def load_attempt(conn: Any, attempt_id: str) -> Attempt | None:
    """The attempt with its count of notes, or None when there is none by that id."""
    row = conn.execute(
        f"SELECT {_COLUMNS}, (SELECT count(*) FROM notes WHERE attempt_id = %s) FROM attempts WHERE id = %s",
        (attempt_id, attempt_id),
    ).fetchone()
    return Attempt(*row[:9], notes=row[9]) if row else None


def record_read(conn: Any, attempt_id: str, note_id: str, viewer: Viewer | None) -> None:
    """Note, inside the caller's transaction, that *note_id* was read while working on a
    running attempt. NotFoundError when *viewer* may not see the attempt; an attempt that
    has ended takes no more records (the read is served, not recorded), as on a folder."""
    row = conn.execute("SELECT project, ended_at FROM attempts WHERE id = %s FOR SHARE", (attempt_id,)).fetchone()
    if row is None or row[0] in hidden_projects(conn, viewer):
        raise NotFoundError(f"no attempt {attempt_id}")
    if row[1] is not None:
        return
    conn.execute(
        "INSERT INTO attempt_reads(attempt, note, at) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        (attempt_id, note_id, now_iso()),
    )


class PgAttemptsMixin:
    """Attempts, for :class:`PgStore`."""

    _db: PgDatabase
    max_bytes: int

    if TYPE_CHECKING:

        def _insert_summary(
            self, conn: Any, text: str, attempt_id: str, author: str | None, model: str | None
        ) -> str: ...

    def start_attempt(
        self, project: str, *, author: str, model: str | None = None, campaign: str | None = None
    ) -> Attempt:
        """Start a run on *project*; notes written with its id land on it until it ends."""
        project = check_project(project)
        campaign = check_project(campaign, "campaign") if campaign is not None else None
        who = check_label(author, "author", AUTHOR_MAX)
        if who is None:
            raise InvalidArgumentError("an attempt needs an author (an agent's or a person's name)")
        model = check_label(model, "model", MODEL_MAX)
        with self._db.transaction() as conn:
            while True:
                attempt_id = new_attempt_id()
                inserted = conn.execute(
                    "INSERT INTO attempts(id, project, campaign, author, model, started_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
                    (attempt_id, project, campaign, who, model, now_iso()),
                ).fetchone()
                if inserted:
                    break
            conn.execute("INSERT INTO projects(name) VALUES (%s) ON CONFLICT DO NOTHING", (project,))
        return self.get_attempt(attempt_id)

    def end_attempt(self, attempt_id: str, *, outcome: str, summary: str | bytes | None = None) -> Attempt:
        """End a running attempt with an outcome, writing *summary* (a note of ``note_kind``
        summary) in the same transaction. Its notes are frozen from then on."""
        attempt_id = check_attempt_id(attempt_id)
        outcome = check_outcome(outcome)
        text = check_text(summary, max_bytes=self.max_bytes)[0] if summary is not None else None
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT project, author, model, ended_at, outcome FROM attempts WHERE id = %s FOR UPDATE",
                (attempt_id,),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no attempt {attempt_id}")
            project, author, model, ended_at, ended_how = row
            if ended_at is not None:
                raise _frozen(attempt_id, ended_how, ended_at)
            summary_id = None
            if text is not None:
                text = titled_summary(text, project, outcome)
                summary_id = self._insert_summary(conn, text, attempt_id, author, model)
            conn.execute(
                "UPDATE attempts SET ended_at = %s, outcome = %s, summary_note = %s WHERE id = %s",
                (now_iso(), outcome, summary_id, attempt_id),
            )
        return self.get_attempt(attempt_id)

    def get_attempt(self, attempt_id: str, *, viewer: Viewer | None = None) -> Attempt:
        """An attempt: who ran it on what, when, how it ended, how many notes it wrote."""
        attempt_id = check_attempt_id(attempt_id)
        with self._db.transaction() as conn:
            attempt = load_attempt(conn, attempt_id)
            if attempt is None or attempt.project in hidden_projects(conn, viewer):
                raise NotFoundError(f"no attempt {attempt_id}")
        return attempt

    def list_attempts(
        self,
        *,
        project: str | None = None,
        running: bool | None = None,
        limit: int = 50,
        viewer: Viewer | None = None,
    ) -> list[Attempt]:
        """Attempts, the most recently started first; optionally one project's, or only the
        running (or only the ended) ones."""
        check_limit(limit)
        clauses, params = [], []
        if project is not None:
            clauses.append("a.project = %s")
            params.append(check_project(project))
        if running is not None:
            clauses.append("a.ended_at IS NULL" if running else "a.ended_at IS NOT NULL")
        with self._db.transaction() as conn:
            hidden = hidden_projects(conn, viewer)
            if hidden:
                clauses.append("NOT (a.project = ANY(%s))")
                params.append(list(hidden))
            where = " WHERE " + " AND ".join(clauses) if clauses else ""
            rows = conn.execute(
                f"SELECT {', '.join('a.' + c.strip() for c in _COLUMNS.split(','))},"
                " (SELECT count(*) FROM notes n WHERE n.attempt_id = a.id)"
                f" FROM attempts a{where} ORDER BY a.started_at DESC, a.id LIMIT %s",
                [*params, limit],
            ).fetchall()
        return [Attempt(*r[:9], notes=r[9]) for r in rows]

    def attempt_reads(self, attempt_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """The notes read while working on an attempt (get_note with working_attempt_id), oldest
        first: ``note_id``, ``title`` (None once the note is deleted) and ``at``. Notes in
        projects *viewer* may not see are left out."""
        attempt_id = check_attempt_id(attempt_id)
        with self._db.transaction() as conn:
            attempt = load_attempt(conn, attempt_id)
            hidden = list(hidden_projects(conn, viewer))
            if attempt is None or attempt.project in hidden:
                raise NotFoundError(f"no attempt {attempt_id}")
            rows = conn.execute(
                "SELECT r.note, n.title, r.at FROM attempt_reads r LEFT JOIN notes n ON n.id = r.note"
                " WHERE r.attempt = %s AND NOT EXISTS (SELECT 1 FROM (SELECT attempt_id FROM notes WHERE id = r.note"
                " UNION ALL SELECT attempt_id FROM gone WHERE id = r.note) x JOIN attempts a ON a.id = x.attempt_id"
                " WHERE a.project = ANY(%s)) ORDER BY r.at, r.note",
                (attempt_id, hidden),
            ).fetchall()
        return [{"note_id": n, "title": t, "at": a} for n, t, a in rows]


class PgProjectsMixin:
    """Projects (settings, private ones) and what a viewer may see, for :class:`PgStore`."""

    _db: PgDatabase

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
        changes: dict[str, Any] = {}
        if private is not None:
            if not isinstance(private, bool):
                raise InvalidArgumentError("private must be true or false")
            changes["private"] = private
        if owner is not None:
            changes["owner"] = check_label(owner, "owner", AUTHOR_MAX)
        if campaign is not None:
            changes["campaign"] = check_project(campaign, "campaign")
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO projects(name) VALUES (%s) ON CONFLICT DO NOTHING", (name,))
            for column, value in changes.items():  # column names come from the fixed set above
                conn.execute(f"UPDATE projects SET {column} = %s WHERE name = %s", (value, name))
            return _project(conn, name)

    def get_project(self, project: str, *, viewer: Viewer | None = None) -> dict[str, Any]:
        """A project: its settings and how many attempts and notes it has."""
        name = check_project(project)
        with self._db.transaction() as conn:
            found = _project(conn, name)
            known = conn.execute("SELECT 1 FROM projects WHERE name = %s", (name,)).fetchone()
        if not (known or found["attempts"]) or not may_see(viewer, private=found["private"], owner=found["owner"]):
            raise NotFoundError(f"no project {name}")
        return found

    def list_projects(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every project *viewer* may see (settings, counts, last activity), most recently active first."""
        with self._db.transaction() as conn:
            hidden = set(hidden_projects(conn, viewer))
            rows = conn.execute(
                "SELECT name, max(at) FROM (SELECT name, NULL AS at FROM projects"
                " UNION ALL SELECT project, started_at FROM attempts) AS x GROUP BY name"
            ).fetchall()
            out = [{**_project(conn, name), "last_activity": last} for name, last in rows if name not in hidden]
        out.sort(key=lambda p: (p["last_activity"] or "", p["name"]), reverse=True)
        return out

    def hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]:
        """The private projects *viewer* may not see (their names)."""
        with self._db.transaction() as conn:
            return hidden_projects(conn, viewer)


_PRIVATE_PROJECTS = "SELECT name, owner FROM projects WHERE private"


def hidden_projects(conn: Any, viewer: Viewer | None) -> tuple[str, ...]:
    """Private projects *viewer* may not see."""
    return viewer_hidden_projects(
        viewer, lambda: conn.execute("SELECT name, owner FROM projects WHERE private").fetchall()
    )


def scoped(conn: Any, filters: Filters, viewer: Viewer | None) -> Filters:
    """*filters* scoped to what *viewer* may see (:meth:`Filters.scoped`)."""
    return filters.scoped(
        viewer,
        private_projects=lambda: conn.execute(_PRIVATE_PROJECTS).fetchall(),
        campaign_members=lambda campaign: (
            name
            for (name,) in conn.execute(
                "SELECT DISTINCT a.project FROM attempts a LEFT JOIN projects p ON p.name = a.project"
                " WHERE coalesce(p.campaign, a.campaign) = %s UNION SELECT name FROM projects WHERE campaign = %s",
                (campaign, campaign),
            )
        ),
    )


def check_visible(conn: Any, note_id: str, viewer: Viewer | None) -> None:
    """NotFoundError when the note (live or deleted) belongs to a project *viewer* may not see."""
    hidden = hidden_projects(conn, viewer)
    if not hidden:
        return
    row = conn.execute(
        "SELECT a.project FROM (SELECT attempt_id FROM notes WHERE id = %s"
        " UNION ALL SELECT attempt_id FROM gone WHERE id = %s) x JOIN attempts a ON a.id = x.attempt_id",
        (note_id, note_id),
    ).fetchone()
    if row is not None and row[0] in hidden:
        raise NotFoundError(f"no note {note_id}")


def _project(conn: Any, name: str) -> dict[str, Any]:
    row = conn.execute("SELECT private, owner, campaign FROM projects WHERE name = %s", (name,)).fetchone()
    private, owner, campaign = row if row else (False, None, None)
    (attempts,) = conn.execute("SELECT count(*) FROM attempts WHERE project = %s", (name,)).fetchone()
    (notes,) = conn.execute(
        "SELECT count(*) FROM notes WHERE attempt_id IN (SELECT id FROM attempts WHERE project = %s)", (name,)
    ).fetchone()
    if campaign is None:
        got = conn.execute(
            "SELECT campaign FROM attempts WHERE project = %s AND campaign IS NOT NULL"
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
