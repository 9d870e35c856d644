"""Attempts on the store: start, end (which freezes their notes), show and list.

An attempt lives in the journal (``attempt`` and ``attempt_end`` records), so it
survives a rebuild of the index like every note does.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..errors import FrozenError, InvalidArgumentError, NotFoundError
from ..model.attempt import Attempt, check_attempt_id, check_outcome, check_project
from ..model.header import compose_note, parse_note
from ..model.ids import new_attempt_id
from ..model.note import AUTHOR_MAX, MODEL_MAX, Note, check_label, derive_title
from ..model.timestamps import now_iso
from ..storage.index import Index
from ..storage.sync import Syncer
from .guard import guarded

__all__ = ["AttemptsMixin"]

_ATTEMPT_COLUMNS = "id, project, campaign, author, model, started_at, ended_at, outcome, summary_note"


class AttemptsMixin:
    """Attempts, for :class:`Store`."""

    _index: Index
    _sync: Syncer
    _lock: threading.RLock

    if TYPE_CHECKING:

        def refresh(self) -> Any: ...

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
        with self._lock:
            self.refresh()
            running = self._running_attempt(attempt_id)
            summary_id = None
            if summary is not None:
                text = summary.decode("utf-8") if isinstance(summary, bytes) else summary
                if isinstance(text, str) and text.strip():
                    parsed = parse_note(text)
                    if derive_title(parsed, "") == "":
                        # Untitled prose: a title says what it is on every card.
                        text = compose_note(text, title=f"Summary: {running.project}, {outcome}")
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
    def get_attempt(self, attempt_id: str) -> Attempt:
        """An attempt: who ran it on what, when, how it ended, how many notes it wrote."""
        attempt_id = check_attempt_id(attempt_id)
        with self._lock:
            self.refresh()
            return self._attempt(attempt_id)

    @guarded
    def list_attempts(
        self, *, project: str | None = None, running: bool | None = None, limit: int = 50
    ) -> list[Attempt]:
        """Attempts, the most recently started first; optionally one project's, or only
        the running (or only the ended) ones."""
        from ..search.keyword import check_limit

        check_limit(limit)
        clauses, params = [], []
        if project is not None:
            clauses.append("project = ?")
            params.append(check_project(project))
        if running is not None:
            clauses.append("ended_at IS NULL" if running else "ended_at IS NOT NULL")
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        with self._lock:
            self.refresh()
            rows = self._index.query(
                f"SELECT {_ATTEMPT_COLUMNS} FROM attempts{where} ORDER BY started_at DESC, id LIMIT ?",
                [*params, limit],
            )
            return [self._from_row(r) for r in rows]

    # -- helpers for the store ----------------------------------------------

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
