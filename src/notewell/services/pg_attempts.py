"""Attempts on PostgreSQL: start, end (which freezes their notes), show and list.

Freezing is atomic across servers: writing a note on an attempt takes a share lock on the
attempt's row and checks that it runs; ending it takes the row's update lock, so a note
either lands before the end (and is frozen with the rest) or is refused as frozen.
An edit or delete of a note locks the note's row and its attempt's row the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FrozenError, InvalidArgumentError, NotFoundError
from ..model.attempt import Attempt, check_attempt_id, check_outcome, check_project
from ..model.header import compose_note, parse_note
from ..model.ids import new_attempt_id
from ..model.note import AUTHOR_MAX, MODEL_MAX, check_label, check_text, derive_title
from ..model.timestamps import now_iso
from ..search.keyword import check_limit
from ..storage.pg import PgDatabase

__all__ = ["PgAttemptsMixin", "check_running", "check_unfrozen"]

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


class PgAttemptsMixin:
    """Attempts, for :class:`PgStore`."""

    _db: PgDatabase

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
        text = check_text(summary)[0] if summary is not None else None
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
                if derive_title(parse_note(text), "") == "":
                    text = compose_note(text, title=f"Summary: {project}, {outcome}")
                summary_id = self._insert_summary(conn, text, attempt_id, author, model)
            conn.execute(
                "UPDATE attempts SET ended_at = %s, outcome = %s, summary_note = %s WHERE id = %s",
                (now_iso(), outcome, summary_id, attempt_id),
            )
        return self.get_attempt(attempt_id)

    def get_attempt(self, attempt_id: str) -> Attempt:
        """An attempt: who ran it on what, when, how it ended, how many notes it wrote."""
        attempt_id = check_attempt_id(attempt_id)
        with self._db.transaction() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM attempts WHERE id = %s", (attempt_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no attempt {attempt_id}")
            (count,) = conn.execute("SELECT count(*) FROM notes WHERE attempt_id = %s", (attempt_id,)).fetchone()
        return Attempt(*row, notes=count)

    def list_attempts(
        self, *, project: str | None = None, running: bool | None = None, limit: int = 50
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
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT {', '.join('a.' + c.strip() for c in _COLUMNS.split(','))},"
                " (SELECT count(*) FROM notes n WHERE n.attempt_id = a.id)"
                f" FROM attempts a{where} ORDER BY a.started_at DESC, a.id LIMIT %s",
                [*params, limit],
            ).fetchall()
        return [Attempt(*r[:9], notes=r[9]) for r in rows]
