"""The memory backend's tables (:class:`MemoryState`) and the service's reads and writes over
them (:class:`MemorySnapshot`, :class:`MemoryWriteTurn`): what the SQL of the real backends
says, as loops over dicts."""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from notewell.backends.records import LinkedNote, Lock, ProjectRow, RevisionRow
from notewell.model.attempt import Attempt
from notewell.model.note import Card, Note, note_from_text, preview
from notewell.search.filters import Filters, check_offset
from notewell.search.request import check_limit

__all__ = ["MemoryWriteTurn", "MemorySnapshot", "MemoryState", "Revision", "Settings"]

_COMPARE = {">=": operator.ge, "<": operator.lt}


@dataclass(slots=True)
class Revision:
    """One text of a note, every one kept."""

    revision: int
    op: str
    at: str
    author: str | None
    text: str


@dataclass(slots=True)
class Settings:
    """A project's settings row."""

    private: bool = False
    owner: str | None = None
    campaign: str | None = None


@dataclass
class MemoryState:
    """Every table of the store. A live note is its parsed :class:`Note` (no backlinks, no
    attempt: those are read when it is loaded); a deleted one moves to *gone* with when."""

    notes: dict[str, Note] = field(default_factory=dict)
    gone: dict[str, tuple[Note, str]] = field(default_factory=dict)
    revisions: dict[str, list[Revision]] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)  # insertion order, newest last: ties of updated_at
    attempts: dict[str, Attempt] = field(default_factory=dict)
    projects: dict[str, Settings] = field(default_factory=dict)
    reads: dict[tuple[str, str], str] = field(default_factory=dict)  # (attempt, note) -> at, the first

    def used(self, note_id: str) -> bool:
        """Whether a note, live or deleted, has had *note_id* (its revisions outlive it)."""
        return note_id in self.notes or note_id in self.revisions

    def put(
        self,
        note_id: str,
        text: str,
        *,
        author: str | None,
        at: str,
        model: str | None = None,
        attempt_id: str | None = None,
        note_kind: str = "note",
    ) -> Note:
        """Store a new text of a note (a new note, or the next revision of a live one)."""
        old = self.notes.get(note_id)
        revision = old.revision + 1 if old else 1
        note = note_from_text(
            text,
            path=old.path if old else f"{note_id}.md",
            model=old.model if old else model,
            id=note_id,
            author=old.author if old else author,
            created_at=old.created_at if old else at,
            updated_at=at,
            revision=revision,
            revisions=revision,
            attempt_id=old.attempt_id if old else attempt_id,
            note_kind=old.note_kind if old else note_kind,
        )
        self.notes[note_id] = note
        self.order.setdefault(note_id, len(self.order))
        self.revisions.setdefault(note_id, []).append(Revision(revision, "edit" if old else "add", at, author, text))
        return note

    def attempt_of(self, attempt_id: str | None) -> Attempt | None:
        """An attempt with its count of live notes."""
        found = self.attempts.get(attempt_id) if attempt_id else None
        if found is None:
            return None
        return replace(found, notes=self.count_on(found.id))

    def count_on(self, attempt_id: str) -> int:
        return sum(1 for n in self.notes.values() if n.attempt_id == attempt_id)

    def project_of(self, note: Note) -> str | None:
        attempt = self.attempts.get(note.attempt_id) if note.attempt_id else None
        return attempt.project if attempt else None

    def campaign_of(self, attempt: Attempt) -> str | None:
        """The attempt's project's campaign, else the attempt's own."""
        settings = self.projects.get(attempt.project)
        return (settings.campaign if settings else None) or attempt.campaign

    def any_note(self, note_id: str) -> Note | None:
        """A note live or deleted."""
        return self.notes.get(note_id) or (self.gone[note_id][0] if note_id in self.gone else None)

    def newest_first(self, notes: Iterable[Note]) -> list[Note]:
        return sorted(notes, key=lambda n: (n.updated_at, self.order[n.id]), reverse=True)

    def passes(self, note: Note, filters: Filters) -> bool:
        """Whether *note* is under *filters* (what filter_sql says in SQL)."""
        c, project = filters.criteria, self.project_of(note)
        return (
            not (project is not None and project in c.hidden_projects)
            and (c.project is None or project == c.project)
            and (c.campaign_projects is None or project in c.campaign_projects)
            and (c.attempt_id is None or note.attempt_id == c.attempt_id)
            and (not c.kinds or note.kind in c.kinds)
            and (not c.tags or (all if c.all_tags else any)(t in note.tags for t in c.tags))
            and (c.author is None or note.author == c.author)
            and (c.model is None or note.model == c.model)
            and (c.builds_on is None or c.builds_on in note.builds_on)
            and all(_COMPARE[op](getattr(note, column), value) for column, op, value in c.dates)
        )

    def under(self, filters: Filters) -> list[Note]:
        """The live notes under *filters*, most recently updated first."""
        return self.newest_first(n for n in self.notes.values() if self.passes(n, filters))

    def card(self, note: Note, snippet: str, score: float | None) -> Card:
        attempt = self.attempts.get(note.attempt_id) if note.attempt_id else None
        campaign = self.campaign_of(attempt) if attempt else None
        return Card(
            id=note.id,
            title=note.title,
            kind=note.kind,
            tags=list(note.tags),
            builds_on=list(note.builds_on),
            model=note.model,
            author=note.author,
            created_at=note.created_at,
            updated_at=note.updated_at,
            snippet=snippet,
            score=score,
            attempt_id=note.attempt_id,
            project=attempt.project if attempt else None,
            campaign=campaign,
            note_kind=note.note_kind,
            attempt_outcome=attempt.outcome if attempt else None,
            attempt_ended_at=attempt.ended_at if attempt else None,
        )


class MemorySnapshot:
    """Reads (:class:`~notewell.backends.records.Snapshot`), inside the backend's lock."""

    def __init__(self, state: MemoryState) -> None:
        self.state = state

    def private_projects(self) -> list[tuple[str, str | None]]:
        return [(name, row.owner) for name, row in self.state.projects.items() if row.private]

    def campaign_members(self, campaign: str) -> Iterable[str]:
        s = self.state
        by_attempt = {a.project for a in s.attempts.values() if s.campaign_of(a) == campaign}
        return sorted(by_attempt | {name for name, row in s.projects.items() if row.campaign == campaign})

    def attempt(self, attempt_id: str) -> Attempt | None:
        return self.state.attempt_of(attempt_id)

    def attempts(
        self, *, project: str | None, running: bool | None, hidden: tuple[str, ...], limit: int
    ) -> list[Attempt]:
        found = [
            a
            for a in self.state.attempts.values()
            if (project is None or a.project == project)
            and (running is None or a.running == running)
            and a.project not in hidden
        ]
        found.sort(key=lambda a: a.id)
        found.sort(key=lambda a: a.started_at, reverse=True)
        return [replace(a, notes=self.state.count_on(a.id)) for a in found[:limit]]

    def project(self, name: str) -> ProjectRow:
        s = self.state
        row = s.projects.get(name)
        attempts = [a for a in s.attempts.values() if a.project == name]
        notes = sum(1 for n in s.notes.values() if s.project_of(n) == name)
        settings = row or Settings()
        campaign = settings.campaign
        if campaign is None:
            latest = sorted((a for a in attempts if a.campaign), key=lambda a: a.started_at)
            campaign = latest[-1].campaign if latest else None
        return ProjectRow(name, row is not None, settings.private, settings.owner, campaign, len(attempts), notes)

    def notes_named(self, name: str, limit: int, hidden: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        s = self.state
        found = [
            (n.id, n.path)
            for n in s.notes.values()
            if (n.path == name or n.path.endswith("/" + name)) and s.project_of(n) not in hidden
        ]
        return sorted(found, key=lambda f: f[1])[:limit]

    def project_activity(self) -> list[tuple[str, str | None]]:
        last: dict[str, str | None] = dict.fromkeys(self.state.projects)
        for a in self.state.attempts.values():
            last[a.project] = max(a.started_at, last.get(a.project) or "")
        return list(last.items())

    def note_project(self, note_id: str) -> str | None:
        note = self.state.any_note(note_id)
        return self.state.project_of(note) if note else None

    def note_attempt(self, note_id: str) -> str | None:
        note = self.state.any_note(note_id)
        return note.attempt_id if note else None

    def notes_in(self, projects: tuple[str, ...], note_ids: list[str]) -> set[str]:
        return {nid for nid in note_ids if projects and self.note_project(nid) in projects}

    def reads(self, attempt_id: str) -> list[tuple[str, str | None, str]]:
        notes = self.state.notes
        found = [
            (n, notes[n].title if n in notes else None, at)
            for (a, n), at in self.state.reads.items()
            if a == attempt_id
        ]
        return sorted(found, key=lambda r: (r[2], r[0]))

    def linked_note(self, note_id: str) -> LinkedNote | None:
        note = self.state.notes.get(note_id)
        return LinkedNote(note.id, note.title, note.kind, self.state.project_of(note)) if note else None

    def attempt_link(self, attempt_id: str) -> tuple[str, str | None] | None:
        found = self.state.attempts.get(attempt_id)
        return (found.project, found.author) if found else None

    def builds_on(self, note_id: str) -> list[str]:
        note = self.state.notes.get(note_id)
        return list(note.builds_on) if note else []

    def built_on_by(self, note_id: str) -> list[str]:
        return [n.id for n in self.state.newest_first(n for n in self.state.notes.values() if note_id in n.builds_on)]

    def supersedes(self, note_id: str) -> list[str]:
        note = self.state.notes.get(note_id)
        return sorted(set(note.supersedes) - {note_id}) if note else []

    def superseded_by(self, note_ids: Iterable[str]) -> dict[str, list[str]]:
        notes = self.state.notes
        found: dict[str, list[str]] = {}
        for target in dict.fromkeys(note_ids):
            old = notes.get(target)
            later = [
                n
                for n in notes.values()
                if old is not None and target in n.supersedes and (n.created_at, n.id) > (old.created_at, old.id)
            ]
            if later:
                later.sort(key=lambda n: n.id)
                later.sort(key=lambda n: n.updated_at, reverse=True)
                found[target] = [n.id for n in later]
        return found

    def cards(self, *, limit: int, offset: int, filters: Filters) -> list[Card]:
        check_limit(limit)
        check_offset(offset)
        return [self.state.card(n, preview(n.body), None) for n in self.state.under(filters)[offset : offset + limit]]

    def count(self, filters: Filters) -> int:
        return len(self.state.under(filters))

    def kind_counts(self, filters: Filters) -> list[tuple[str | None, int]]:
        counts: dict[str | None, int] = {}
        for n in self.state.under(filters):
            counts[n.kind] = counts.get(n.kind, 0) + 1
        return sorted(counts.items(), key=lambda kc: (-kc[1], kc[0] is not None, kc[0] or ""))

    def tag_counts(self, filters: Filters) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for n in self.state.under(filters):
            for tag in n.tags:
                counts[tag] = counts.get(tag, 0) + 1
        return sorted(counts.items(), key=lambda tc: (-tc[1], tc[0]))

    def tags_and_summaries(self, filters: Filters) -> list[tuple[str, str | None, list[str], str | None]]:
        return [(n.id, n.title, list(n.tags), n.summary) for n in self.state.under(filters)]

    def problems(self) -> list[dict[str, str]]:
        return []  # no files it could not read

    def live_revision(self, note_id: str) -> int | None:
        note = self.state.notes.get(note_id)
        return note.revision if note else None

    def revisions(self, note_id: str, live: int | None) -> list[RevisionRow]:
        out = []
        for r in self.state.revisions.get(note_id, []):
            data = r.text.encode("utf-8")
            out.append(RevisionRow(r.revision, r.op, r.at, r.author, hashlib.sha256(data).hexdigest(), len(data), True))
        return out

    def deleted_at(self, note_id: str) -> str | None:
        return self.state.gone[note_id][1] if note_id in self.state.gone else None


class MemoryWriteTurn(MemorySnapshot):
    """Writes (:class:`~notewell.backends.records.WriteTurn`), inside the backend's write turn."""

    def __init__(self, state: MemoryState, add_summary: Callable[[str, Attempt], str]) -> None:
        super().__init__(state)
        self._add_summary = add_summary

    def lock_attempt(self, attempt_id: str, lock: Lock) -> Attempt | None:
        return self.attempt(attempt_id)  # one write turn at a time: no row locks

    def insert_attempt(
        self, attempt_id: str, *, project: str, campaign: str | None, author: str, model: str | None, at: str
    ) -> bool:
        if attempt_id in self.state.attempts:
            return False
        self.state.attempts[attempt_id] = Attempt(attempt_id, project, campaign, author, model, at, None, None, None)
        return True

    def add_summary(self, text: str, attempt: Attempt) -> str:
        return self._add_summary(text, attempt)

    def end_attempt(self, attempt_id: str, *, outcome: str, at: str, summary_id: str | None) -> None:
        found = self.state.attempts[attempt_id]
        self.state.attempts[attempt_id] = replace(found, ended_at=at, outcome=outcome, summary_note_id=summary_id)

    def update_project(self, name: str, changes: dict[str, object], at: str) -> None:
        row = self.state.projects.setdefault(name, Settings())
        for key, value in changes.items():
            if key not in ("private", "owner", "campaign"):
                raise ValueError(f"not a project setting: {key}")
            setattr(row, key, value)

    def record_read(self, attempt_id: str, note_id: str, at: str) -> None:
        self.state.reads.setdefault((attempt_id, note_id), at)
