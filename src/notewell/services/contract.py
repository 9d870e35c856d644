"""What every store is: the operations the interfaces and the agent toolkit may call.

:class:`~.opening.Store` (a folder with SQLite beside it) and :class:`~.opening.PgStore`
(PostgreSQL) both are a :class:`NoteStore`; code above the stores is written against this
Protocol and never asks which one it has (only :func:`~.opening.open_store` does). A test
(`tests/services/test_contract.py`) holds both classes to every signature here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..model.access_tokens import Tokens
from ..model.attempt import Attempt
from ..model.note import Card, Note
from ..model.progress import Progress
from ..model.redaction import Redacted
from ..model.visibility import Viewer

__all__ = ["NoteStore", "Progress"]


@runtime_checkable
class NoteStore(Protocol):
    """A store of notes, their index, attempts and projects, as every interface sees it."""

    @property
    def name(self) -> str:
        """A short name for the store (a folder's name, a database's)."""
        ...

    @property
    def location(self) -> str:
        """Where it lives (a folder's path, a database URL without its password)."""
        ...

    @property
    def redaction(self) -> str:
        """What a write does with a secret or personal data: ``mask``, ``refuse`` or ``off``."""
        ...

    def redacted(self, text: str) -> Redacted:
        """*text* as the store keeps it (SensitiveDataError when it refuses it)."""
        ...

    # -- notes ----------------------------------------------------------------

    def add_note(
        self,
        text: str | bytes,
        *,
        author: str | None = None,
        model: str | None = None,
        attempt: str | None = None,
        note_id: str | None = None,
    ) -> Note:
        """Store a new note, on a running *attempt* if given; its text is kept byte for byte
        but what :meth:`redacted` takes out. *note_id*: an id chosen beforehand (ConflictError
        when the store has used it)."""
        ...

    def add_notes(
        self,
        texts: Iterable[str | bytes],
        *,
        author: str | None = None,
        model: str | None = None,
        attempt: str | None = None,
        progress: Progress | None = None,
        batch: int = 1000,
        note_ids: Sequence[str] | None = None,
    ) -> list[Note]:
        """Store many notes, a batch per transaction (the bulk import path); *note_ids*:
        ids chosen beforehand, one per text."""
        ...

    def get_note(
        self,
        note_id: str,
        *,
        revision: int | None = None,
        viewer: Viewer | None = None,
        working_attempt_id: str | None = None,
    ) -> Note:
        """The whole note (a past *revision* if given); the read is recorded on a working attempt."""
        ...

    def edit_note(
        self,
        note_id: str,
        text: str | bytes,
        *,
        author: str | None = None,
        keep_header: bool = False,
        base_revision: int | None = None,
    ) -> Note:
        """Replace a note's text (with *keep_header*: its body); the previous text stays as an
        earlier revision; with *base_revision*, ConflictError if the text changed since then."""
        ...

    def delete_note(self, note_id: str) -> dict[str, Any]:
        """Remove a note; its last text stays in the history."""
        ...

    def add_tag(self, note_id: str, *tags: str, author: str | None = None) -> Note:
        """Add tags to a note's header (slugged; ones it has are skipped)."""
        ...

    def set_summary(self, note_id: str, summary: str, *, author: str | None = None) -> Note:
        """Write ``summary:`` into a note's header, changing nothing else."""
        ...

    def history(self, note_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every revision of a note, oldest first, and whether its text was kept."""
        ...

    def resolve(self, ref: str, *, viewer: Viewer | None = None) -> str:
        """A note id from an id, a path inside the store (``notes/x.md``) or a file name one
        visible note has (``x.md``)."""
        ...

    # -- reading many ---------------------------------------------------------

    def search_notes(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: str = "keyword",
        wait: bool = False,
        viewer: Viewer | None = None,
        **filters: Any,
    ) -> list[Card]:
        """The best *limit* notes for *query* as cards, by keyword, semantic, both or hybrid."""
        ...

    def list_notes(
        self, *, limit: int = 20, offset: int = 0, viewer: Viewer | None = None, **filters: Any
    ) -> list[Card]:
        """Notes, most recently updated first, as cards (same filters as search)."""
        ...

    def summary(self, *, recent: int = 5, viewer: Viewer | None = None) -> dict[str, Any]:
        """Counts by kind and the most recent notes."""
        ...

    def note_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Each note's tags and summary, most recently updated first."""
        ...

    def list_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every tag with the number of notes carrying it, most used first."""
        ...

    def links(self, note_id: str, *, depth: int = 1, viewer: Viewer | None = None) -> dict[str, Any]:
        """What a note builds on and what builds on it, *depth* steps out."""
        ...

    def similar_notes(
        self, text: str, *, exclude: Iterable[str] = (), limit: int = 3, viewer: Viewer | None = None
    ) -> list[dict[str, Any]]:
        """The notes that say much what *text* says (near-duplicates), most alike first."""
        ...

    def brief(self, project: str, *, recent: int = 10, viewer: Viewer | None = None) -> dict[str, Any]:
        """The one thing to read first on a project."""
        ...

    def stale(
        self, *, older_than: str = "14d", project: str | None = None, limit: int = 20, viewer: Viewer | None = None
    ) -> list[Card]:
        """Open blockers and actions not updated for *older_than* that no later note is about."""
        ...

    # -- attempts and projects ------------------------------------------------

    def start_attempt(
        self, project: str, *, author: str, model: str | None = None, campaign: str | None = None
    ) -> Attempt:
        """Start a run on *project*; notes written with its id belong to it."""
        ...

    def end_attempt(self, attempt_id: str, *, outcome: str, summary: str | bytes | None = None) -> Attempt:
        """End a running attempt with an outcome (and a summary note)."""
        ...

    def get_attempt(self, attempt_id: str, *, viewer: Viewer | None = None) -> Attempt:
        """An attempt: who ran it on what, when, how it ended."""
        ...

    def list_attempts(
        self,
        *,
        project: str | None = None,
        running: bool | None = None,
        limit: int = 50,
        viewer: Viewer | None = None,
    ) -> list[Attempt]:
        """Attempts, the most recently started first."""
        ...

    def attempt_reads(self, attempt_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """The notes read while working on an attempt, oldest first."""
        ...

    def set_project(
        self, project: str, *, private: bool | None = None, owner: str | None = None, campaign: str | None = None
    ) -> dict[str, Any]:
        """Change a project's settings (private, owner, campaign)."""
        ...

    def get_project(self, project: str, *, viewer: Viewer | None = None) -> dict[str, Any]:
        """A project: its settings and how many attempts and notes it has."""
        ...

    def list_projects(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every project *viewer* may see, most recently active first."""
        ...

    def hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]:
        """The private projects *viewer* may not see (their names)."""
        ...

    # -- embedding, tokens, life ----------------------------------------------

    def embed_pending(self, *, limit: int | None = None, progress: Progress | None = None) -> dict[str, Any]:
        """Embed the notes waiting for it; how many were embedded and how many still wait."""
        ...

    def pending_embeddings(self) -> int:
        """How many notes semantic search does not know yet."""
        ...

    def start_embedding(self, *, idle: float = 2.0) -> bool:
        """Embed queued notes on a background thread; False when one runs already."""
        ...

    def stop_embedding(self) -> None:
        """Stop the background embedding thread."""
        ...

    def token_book(self) -> Tokens:
        """The servers' bearer tokens."""
        ...

    def close(self) -> None:
        """Release connections, the watcher and the embedding thread."""
        ...

    def __enter__(self) -> NoteStore: ...

    def __exit__(self, *exc: object) -> None: ...
