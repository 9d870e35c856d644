"""What a backend gives the note service: plain reads and writes, no policy.

The service (:class:`~notewell.services.service.NoteService`) decides who may see what,
which attempt may take a note, when a project exists, and how a link tree or a brief is
built; a backend only answers these questions in its own SQL. Each read runs inside one
snapshot of the store (:class:`Snapshot`), each write inside the store's write turn
(:class:`WriteTurn`): both come from the backend (:class:`~.backend.Backend`).
`tests/services/test_backends.py` runs the service on every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ..model.attempt import Attempt
from ..model.note import Card
from ..search.filters import Filters

__all__ = ["WriteTurn", "LinkedNote", "ProjectRow", "Snapshot", "RevisionRow"]


@dataclass(frozen=True, slots=True)
class ProjectRow:
    """A project's settings as stored and its counts. ``known``: it has a settings row (PostgreSQL
    makes one when an attempt starts, SQLite only when settings are set: the service asks for
    ``known or attempts``)."""

    name: str
    known: bool
    private: bool
    owner: str | None
    campaign: str | None  # its own, else that of its latest attempt on a campaign
    attempts: int
    notes: int


@dataclass(frozen=True, slots=True)
class LinkedNote:
    """One end of a builds_on link that is a note: its card fields and its project."""

    id: str
    title: str | None
    kind: str | None
    project: str | None


@dataclass(frozen=True, slots=True)
class RevisionRow:
    """One revision of a note as its backend keeps it."""

    revision: int
    op: str
    at: str | None
    author: str | None
    sha256: str | None
    size: int | None
    kept: bool


class Snapshot(Protocol):
    """Reads, all inside one snapshot of the store."""

    def private_projects(self) -> list[tuple[str, str | None]]:
        """Every private project's (name, owner)."""
        ...

    def campaign_members(self, campaign: str) -> Iterable[str]:
        """The projects in *campaign* (by their own setting or their attempts')."""
        ...

    def attempt(self, attempt_id: str) -> Attempt | None:
        """An attempt with its count of notes (None: no such attempt)."""
        ...

    def attempts(
        self, *, project: str | None, running: bool | None, hidden: tuple[str, ...], limit: int
    ) -> list[Attempt]:
        """Attempts newest first: of *project* if given, running or ended if asked, none of *hidden*."""
        ...

    def project(self, name: str) -> ProjectRow:
        """A project's row (zeros and defaults when nothing names it)."""
        ...

    def notes_named(self, name: str, limit: int, hidden: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """(id, path) of up to *limit* live notes whose file is named *name* (``go-tips.md``:
        the path itself, or its last part), by path, leaving out notes in the *hidden* projects."""
        ...

    def project_activity(self) -> list[tuple[str, str | None]]:
        """Every project anything names, with the start of its latest attempt."""
        ...

    def note_project(self, note_id: str) -> str | None:
        """The project of the attempt a note (live or deleted) was written on."""
        ...

    def note_attempt(self, note_id: str) -> str | None:
        """The attempt a note (live or deleted) was written on, if any."""
        ...

    def notes_in(self, projects: tuple[str, ...], note_ids: list[str]) -> set[str]:
        """Which of *note_ids* (live or deleted) were written on attempts of *projects*."""
        ...

    def reads(self, attempt_id: str) -> list[tuple[str, str | None, str]]:
        """The reads recorded on an attempt, oldest first: (note id, its title or None, at)."""
        ...

    def linked_note(self, note_id: str) -> LinkedNote | None:
        """A live note as a link end (None: no such note)."""
        ...

    def attempt_link(self, attempt_id: str) -> tuple[str, str | None] | None:
        """An attempt as a link end: its (project, author); None when there is none."""
        ...

    def builds_on(self, note_id: str) -> list[str]:
        """The ids a note's header lists in builds_on, in order."""
        ...

    def built_on_by(self, note_id: str) -> list[str]:
        """The live notes that build on *note_id*, most recently updated first."""
        ...

    def supersedes(self, note_id: str) -> list[str]:
        """The ids a live note's header lists in supersedes (itself left out), by id."""
        ...

    def superseded_by(self, note_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of the live *note_ids* that a later live note names in its supersedes (later:
        created after it, ties broken by id, so that no two notes supersede each other), those
        notes, most recently updated first. Ids no later note names are left out."""
        ...

    def cards(self, *, limit: int, offset: int, filters: Filters) -> list[Card]:
        """Notes under *filters*, most recently updated first."""
        ...

    def count(self, filters: Filters) -> int:
        """How many notes are under *filters*."""
        ...

    def kind_counts(self, filters: Filters) -> list[tuple[str | None, int]]:
        """How many notes under *filters* have each kind, most first (no kind first among equals)."""
        ...

    def tag_counts(self, filters: Filters) -> list[tuple[str, int]]:
        """How many notes under *filters* carry each tag, most first."""
        ...

    def tags_and_summaries(self, filters: Filters) -> list[tuple[str, str | None, list[str], str | None]]:
        """(id, title, tags, summary) of the notes under *filters*, most recently updated first."""
        ...

    def problems(self) -> list[dict[str, str]]:
        """What the backend could not index (files it could not read), with the reason."""
        ...

    def live_revision(self, note_id: str) -> int | None:
        """A live note's revision number (None: no live note)."""
        ...

    def revisions(self, note_id: str, live: int | None) -> list[RevisionRow]:
        """Every revision the store remembers of a note, oldest first."""
        ...

    def deleted_at(self, note_id: str) -> str | None:
        """When a deleted note was deleted (None: not deleted, or not known)."""
        ...


Lock = Literal["share", "update"]


class WriteTurn(Snapshot, Protocol):
    """Writes, inside the store's write turn (and reads that see them)."""

    def lock_attempt(self, attempt_id: str, lock: Lock) -> Attempt | None:
        """The attempt, held against ending (``share``) or against any other change
        (``update``) until the write turn ends, where the backend has row locks."""
        ...

    def insert_attempt(
        self, attempt_id: str, *, project: str, campaign: str | None, author: str, model: str | None, at: str
    ) -> bool:
        """Record a new attempt; False when *attempt_id* is taken."""
        ...

    def add_summary(self, text: str, attempt: Attempt) -> str:
        """Store an attempt's summary note (``note_kind`` summary) and return its id."""
        ...

    def end_attempt(self, attempt_id: str, *, outcome: str, at: str, summary_id: str | None) -> None:
        """Mark a running attempt ended (FrozenError when another writer ended it meanwhile)."""
        ...

    def update_project(self, name: str, changes: dict[str, object], at: str) -> None:
        """Write the given settings of a project (private, owner, campaign), making its row."""
        ...

    def record_read(self, attempt_id: str, note_id: str, at: str) -> None:
        """Record that *note_id* was read while working on a running attempt."""
        ...
