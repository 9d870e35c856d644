"""A backend that keeps everything in memory: the note service's policy, tested without SQLite.

:class:`MemoryBackend` is a :class:`~notewell.backends.backend.Backend` over plain dicts and
lists (:mod:`.memory_records`), searched by :mod:`.memory_search`. One re-entrant lock is the
write turn and every read's snapshot (reads wait for a write, as a fake may); a write turn
that fails is rolled back (its tables restored), as on PostgreSQL (SQLite commits each write
of a turn as it comes). Every revision's text is kept, as on PostgreSQL, so the older-revision
engines search them all (:mod:`.memory_search`). A note's path is ``<id>.md``, as both real
stores name a note they write; there is no folder, so :meth:`note_at` knows only those paths
(an absolute one is not found).

For tests: :meth:`MemoryBackend.tables` hands a test the tables to set up a state directly.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from notewell.backends.backend import NoteLoader
from notewell.backends.records import Snapshot, WriteTurn
from notewell.errors import NotFoundError, StorageError
from notewell.model.access_tokens import (
    Token,
    name_taken_error,
    namespace_holder,
    new_token,
    secret_digest,
    unknown_token_error,
    well_formed,
)
from notewell.model.attempt import Attempt, require_running, require_unfrozen
from notewell.model.ids import new_note_ids, used_id_error
from notewell.model.note import DEFAULT_MAX_BYTES, Note, check_text, note_from_text
from notewell.model.progress import Progress
from notewell.model.timestamps import now_iso
from notewell.search.embedder_slot import EmbedderSlot, EmbedderSpec
from notewell.search.embedders import Embedder
from notewell.search.plan import Engines
from notewell.search.request import SearchRequest

from .memory_records import MemorySnapshot, MemoryState, MemoryWriteTurn
from .memory_search import MemoryEngines, Vectors

__all__ = ["MemoryBackend", "MemoryTokens"]

T = TypeVar("T")
_EMBED_STEP = 64  # notes the background thread embeds at a time


class MemoryBackend:
    """Notes, attempts, projects and reads in dicts, as the note service's backend."""

    def __init__(
        self, *, max_bytes: int = DEFAULT_MAX_BYTES, embedder: EmbedderSpec = None, name: str = "memory"
    ) -> None:
        self.max_bytes = max_bytes
        self.embedders = EmbedderSlot(embedder)
        self.state = MemoryState()
        self.vectors = Vectors()
        self.closed = False
        self._name = name
        self.lock = threading.RLock()
        self.tokens = MemoryTokens()

    @property
    def name(self) -> str:
        return self._name

    @property
    def location(self) -> str:
        return f"memory:{self._name}"

    def __repr__(self) -> str:
        return f"<MemoryBackend {self._name}: {len(self.state.notes)} notes>"

    def token_book(self) -> MemoryTokens:
        return self.tokens

    def close(self) -> None:
        self.closed = True

    @contextlib.contextmanager
    def _turn(self) -> Iterator[MemoryState]:
        """The lock, on an open store."""
        with self.lock:
            if self.closed:
                raise StorageError("the memory store is closed")
            yield self.state

    # -- what the note service runs on -----------------------------------------

    def guarded(self, call: Callable[[], T]) -> T:
        return call()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        with self._turn() as state:
            yield MemorySnapshot(state)

    @contextlib.contextmanager
    def write_turn(self) -> Iterator[WriteTurn]:
        with self._turn() as state:
            before = copy.deepcopy(state)
            try:
                yield MemoryWriteTurn(state, self._add_summary)
            except BaseException:
                self.state.__dict__.update(before.__dict__)  # rolled back: the tables as they were
                raise

    def opened_again(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> MemoryBackend:
        """Another backend on these tables, lock and tokens: the store opened a second time, as
        one folder or database may be (with other options)."""
        other = MemoryBackend(max_bytes=max_bytes, embedder=self.embedders.spec, name=self._name)
        other.state, other.vectors, other.lock, other.tokens = self.state, self.vectors, self.lock, self.tokens
        return other

    def tables(self) -> AbstractContextManager[MemoryState]:
        """The tables themselves, inside the lock: for a test to set up a state directly."""
        return self._turn()

    def _add_summary(self, text: str, attempt: Attempt) -> str:
        checked = [check_text(text, max_bytes=self.max_bytes)]
        return self.insert_notes(checked, None, None, attempt.id, "summary", None, 1)[0].id

    # -- writes -------------------------------------------------------------------

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
        ids: list[str] = []
        for start in range(0, len(checked), batch):
            chunk = checked[start : start + batch]
            with self._turn() as state:
                who, what = author, model
                if attempt_id is not None:
                    running = require_running(state.attempts.get(attempt_id), attempt_id)
                    who, what = running.credits(author, model)
                wanted = chosen[start : start + batch] if chosen is not None else None
                for nid in wanted or ():
                    if state.used(nid):
                        raise used_id_error(nid)  # before any note of the batch is written
                fresh = wanted or [i for i in new_note_ids(len(chunk)) if not state.used(i)]
                for (text, _data), nid in zip(chunk, fresh, strict=True):
                    at = now_iso()
                    state.put(nid, text, author=who, model=what, at=at, attempt_id=attempt_id, note_kind=note_kind)
                ids += fresh
            if progress is not None:
                progress(len(ids), len(checked))
        return [self._load(nid, None) for nid in ids]

    def _live(self, state: MemoryState, note_id: str) -> Note:
        """A live note that may change: NotFoundError, or FrozenError when its attempt ended."""
        note = state.notes.get(note_id)
        if note is None:
            raise NotFoundError(f"no note {note_id}")
        require_unfrozen(note_id, state.attempts.get(note.attempt_id) if note.attempt_id else None)
        return note

    def edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        with self._turn() as state:
            current = self._live(state, note_id).text
            made = make(current)
            text, _data = made if isinstance(made, tuple) else check_text(made, max_bytes=self.max_bytes)
            if text != current:
                state.put(note_id, text, author=author, at=now_iso())
            return self._load(note_id, None)

    def delete(self, note_id: str) -> dict[str, Any]:
        with self._turn() as state:
            note = self._live(state, note_id)
            del state.notes[note_id]
            state.gone[note_id] = (note, now_iso())
            self.vectors.current.pop(note_id, None)
        return {"id": note_id, "title": note.title, "path": note.path, "deleted": True, "revision": note.revision}

    # -- reads ----------------------------------------------------------------------

    def note_at(self, ref: str) -> str:
        if os.path.isabs(ref):
            raise NotFoundError(f"{ref}: a store in memory has no folder; give a note id or its relative path")
        rel = ref.replace(os.sep, "/").removeprefix("./")
        with self._turn() as state:
            found = next((n.id for n in state.notes.values() if n.path == rel), None)
        if found is None:
            raise NotFoundError(f"no note at {ref}")
        return found

    def reading_note(self, body: Callable[[Snapshot, NoteLoader], T]) -> T:
        with self._turn() as state:
            return body(MemorySnapshot(state), self._load)

    def _load(self, note_id: str, revision: int | None) -> Note:
        """The note (or one of its revisions by number), with its backlinks and its attempt."""
        with self._turn() as state:
            live, gone = state.notes.get(note_id), state.gone.get(note_id)
            if live is None and (gone is None or revision is None):
                hint = " (deleted; its revisions can be read by number)" if gone else ""
                raise NotFoundError(f"no note {note_id}{hint}")
            current = live or gone[0]  # type: ignore[index]
            if revision is not None and revision > current.revision:
                raise NotFoundError(f"{note_id} has {current.revision} revision(s); there is no revision {revision}")
            if revision is None or (live is not None and revision == current.revision):
                note = copy.deepcopy(current)
            else:
                kept = state.revisions[note_id][revision - 1]
                note = note_from_text(
                    kept.text,
                    path=current.path,
                    model=current.model,
                    id=note_id,
                    author=current.author if kept.author is None else kept.author,
                    created_at=current.created_at,
                    updated_at=kept.at,
                    revision=revision,
                    revisions=current.revision,
                    attempt_id=current.attempt_id,
                    note_kind=current.note_kind,
                )
            builders = state.newest_first(n for n in state.notes.values() if note_id in n.builds_on)
            note.backlinks = [
                {"id": n.id, "title": n.title, "kind": n.kind, "updated_at": n.updated_at} for n in builders
            ]
            attempt = state.attempt_of(note.attempt_id)
            note.attempt = attempt.to_dict() if attempt else None
            return note

    @contextlib.contextmanager
    def searching(self, request: SearchRequest) -> Iterator[tuple[Snapshot, Engines]]:
        with self._turn() as state:
            yield MemorySnapshot(state), MemoryEngines(state, self.vectors, self.embedders)

    # -- embedding ----------------------------------------------------------------

    def embedding_turn(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def embed_some(self, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        with self._turn() as state:
            return self.vectors.embed(state, embedder, limit, progress)

    def embed_older(self, embedder: Embedder, limit: int | None) -> int:
        with self._turn() as state:
            return self.vectors.embed_older(state, embedder, limit)

    def pending_count(self, model_id: str) -> int:
        with self._turn() as state:
            return len(self.vectors.pending(state, model_id))

    @contextlib.contextmanager
    def embedding_steps(self, embedder: Embedder) -> Iterator[Callable[[Callable[[], bool]], int]]:
        def step(should_stop: Callable[[], bool]) -> int:
            del should_stop  # one batch in memory is quick
            done = self.embed_some(embedder, _EMBED_STEP, None)
            return done + (self.embed_older(embedder, _EMBED_STEP - done) if done < _EMBED_STEP else 0)

        yield step


class MemoryTokens:
    """The servers' bearer tokens in a dict (:class:`~notewell.model.access_tokens.Tokens`)."""

    def __init__(self) -> None:
        self._by_digest: dict[str, Token] = {}
        self._lock = threading.Lock()

    def create(
        self, name: str, *, read_only: bool = False, owner: bool = False, expires: str | None = None
    ) -> tuple[Token, str]:
        token, secret, digest = new_token(name, read_only=read_only, owner=owner, expires=expires)
        with self._lock:
            held_by = namespace_holder(name, (t.name for t in self._by_digest.values()))
            if held_by is not None:
                raise name_taken_error(name, held_by)
            self._by_digest[digest] = token
        return token, secret

    def verify(self, secret: str | None) -> Token | None:
        return self._by_digest.get(secret_digest(secret)) if well_formed(secret) else None

    def list(self) -> list[Token]:
        return sorted(self._by_digest.values(), key=lambda t: t.name)

    def revoke(self, name: str) -> Token:
        with self._lock:
            digest = next((d for d, t in self._by_digest.items() if t.name == name), None)
            if digest is None:
                raise unknown_token_error(name)
            return self._by_digest.pop(digest)
