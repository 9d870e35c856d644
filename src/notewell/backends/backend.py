"""What a backend gives the note service: reads and writes in one snapshot or one write turn,
the search engines, the embedding queue, and the note writes that touch its storage.

The service (:class:`notewell.services.service.NoteService`) holds one backend and keeps all
the policy; each backend package (``backends/sqlite``, ``backends/postgres``) holds one
implementation, and a test holds each to this Protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ..model.access_tokens import Tokens
from ..model.note import Note
from ..model.progress import Progress
from ..search.embedder_slot import EmbedderSlot
from ..search.embedders import Embedder
from ..search.plan import Engines
from ..search.request import SearchRequest
from .records import Snapshot, WriteTurn

__all__ = ["Backend", "EmbeddingStep", "NoteLoader"]

T = TypeVar("T")
# How a backend loads a whole note: (note id, revision or None) -> the note.
NoteLoader = Callable[[str, "int | None"], Note]
# One step of the background embedding: given what says "stop now", embeds a batch, says how many.
EmbeddingStep = Callable[[Callable[[], bool]], int]


class Backend(Protocol):
    """Storage for the note service: every method is mechanism, none decides who may do what."""

    max_bytes: int
    embedders: EmbedderSlot  # the embedder, made on first use

    @property
    def name(self) -> str:
        """A short name for the store (a folder's name, a database's)."""
        ...

    @property
    def location(self) -> str:
        """Where it lives, to show a person (never a password)."""
        ...

    def snapshot(self) -> AbstractContextManager[Snapshot]:
        """Reads in one snapshot."""
        ...

    def write_turn(self) -> AbstractContextManager[WriteTurn]:
        """The write turn: one writer at a time, and reads that see its writes. PostgreSQL
        makes it one transaction; SQLite commits each write as it comes (the store's lock
        keeps other writers out), so a turn that fails half-way keeps what it wrote."""
        ...

    def guarded(self, call: Callable[[], T]) -> T:
        """Run one public call of the service (a backend may translate its errors or retry)."""
        ...

    def searching(self, request: SearchRequest) -> AbstractContextManager[tuple[Snapshot, Engines]]:
        """Where a search runs: the records that scope it, and the engines."""
        ...

    def reading_note(self, body: Callable[[Snapshot, NoteLoader], T]) -> T:
        """Run *body* on the records and a loader of whole notes (a backend may run it again,
        caught up, when its index was behind its files)."""
        ...

    def insert_notes(
        self,
        checked: Sequence[tuple[str, bytes]],
        author: str | None,
        model: str | None,
        attempt_id: str | None,
        note_kind: str,
        progress: Progress | None,
        batch: int,
        chosen: list[str] | None = None,
    ) -> list[Note]:
        """Store checked texts (text, bytes) as new notes, *batch* to a transaction, on a
        running attempt (its author and model where none are given) or none. *chosen*: the
        notes' ids, one per text (ConflictError when one was used: that batch is not written)."""
        ...

    def edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        """Write the text *make* returns for the note's current text (checked text, or a str
        that is checked then), atomically with that read, refusing a frozen note."""
        ...

    def delete(self, note_id: str) -> dict[str, Any]:
        """Remove a note (refusing a frozen one); its texts stay readable by revision number."""
        ...

    def note_at(self, ref: str) -> str:
        """The id of the note at *ref*, a path inside the store; NotFoundError otherwise."""
        ...

    def embedding_turn(self) -> AbstractContextManager[None]:
        """Around embedding on request (a backend may take its write turn)."""
        ...

    def embed_some(self, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        """Embed up to *limit* waiting notes (all when None); how many were embedded."""
        ...

    def embed_older(self, embedder: Embedder, limit: int | None) -> int:
        """Embed up to *limit* older revisions without vectors (all when None); how many."""
        ...

    def pending_count(self, model_id: str) -> int:
        """How many notes wait for embedding by *model_id*."""
        ...

    def embedding_steps(self, embedder: Embedder) -> AbstractContextManager[EmbeddingStep]:
        """Entered on the background thread: a step that embeds a batch and says how many,
        asking its argument between calls of the model whether to stop (the batch in hand then
        stays queued)."""
        ...

    def token_book(self) -> Tokens:
        """The servers' bearer tokens."""
        ...

    def close(self) -> None:
        """Stop the backend's threads and close its connections."""
        ...
