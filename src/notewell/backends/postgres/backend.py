"""The PostgreSQL backend: the same note service as on a folder, for many notewell servers
sharing one database.

The database is canonical (each note's text exactly as written, its metadata and its
earlier revisions). Every write is one transaction; an edit locks the note's row
(``SELECT … FOR UPDATE``) and builds on the text it finds there, so two servers editing
one note at once both land, one after the other, and neither edit is lost. Every write
that changes a note's text queues it for embedding in that transaction (triggers of
schema version 3); semantic search is :class:`~.meaning.PgMeaning`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from ...errors import ConflictError, NotFoundError
from ...model.attempt import Attempt, require_running, require_unfrozen
from ...model.ids import new_note_id, new_note_ids, used_id_error
from ...model.note import (
    DEFAULT_MAX_BYTES,
    Note,
    check_text,
)
from ...model.progress import Progress
from ...model.timestamps import now_iso
from ...search.embedder_slot import EmbedderSpec
from ...search.embedders import Embedder
from ...search.plan import Engines
from ...search.request import SearchRequest
from ..backend import EmbeddingStep, NoteLoader
from ..records import Snapshot, WriteTurn
from .db import PgDatabase
from .meaning import PgMeaning
from .notes import (
    added_notes,
    delete_note,
    enable_pgvector_if_possible,
    id_was_used,
    insert_rows,
    load_note,
    lock_note,
    new_row,
    note_id_at,
    update_note,
)
from .rank import TermRarity
from .records import PgPooledSnapshot, PgSnapshot, PgWriteTurn
from .tokens import PgTokenBook
from .transfer import TransferSource, check_empty, export_folder, import_folder

__all__ = ["PostgresBackend"]

T = TypeVar("T")


class PostgresBackend:
    """Notes in a PostgreSQL database, as the note service's backend."""

    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        pool_size: int = 8,
        create: bool = True,
        embedder: EmbedderSpec = "default",
    ) -> None:
        self.url = url
        self.max_bytes = max_bytes
        self._rarity = TermRarity()  # how many notes hold each searched term, for ranking
        self.db = PgDatabase(url, max_size=pool_size)
        self.meaning = PgMeaning(self.db, embedder, self._rarity)
        self.embedders = self.meaning.embedders
        try:
            if create and self.db.schema_version() == 0:
                self.db.upgrade()  # a new, empty database: make the schema
                enable_pgvector_if_possible(self.db)
            self.db.check_schema()
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        """Close the connections."""
        self.db.close()

    @property
    def address(self) -> str:
        """Where the database is, ``user@host:port/dbname``: never the password."""
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(self.url)
        return f"{info.get('user', '')}@{info.get('host', '')}:{info.get('port', '')}/{info.get('dbname', '')}"

    @property
    def location(self) -> str:
        """Where the store lives, to show a person: the database's address (never its password)."""
        return self.address

    @property
    def name(self) -> str:
        """A short name for the store: its database's."""
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(self.url).get("dbname") or "notewell")

    def __repr__(self) -> str:
        return f"<notewell.PostgresBackend {self.address}>"

    def token_book(self) -> PgTokenBook:
        """The servers' bearer tokens, in this database (shared by every server of it)."""
        return PgTokenBook(self.db)

    # -- what the note service runs on -----------------------------------------

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        with self.db.transaction() as conn:
            yield PgSnapshot(conn)

    @contextlib.contextmanager
    def write_turn(self) -> Iterator[WriteTurn]:
        with self.db.transaction() as conn:
            yield PgWriteTurn(conn, self._insert_summary)

    # -- writes ---------------------------------------------------------------

    def insert_notes(
        self,
        checked: Sequence[tuple[str, bytes]],
        author: str | None,
        model: str | None,
        attempt: str | None,
        note_kind: str,
        progress: Progress | None,
        batch: int,
        chosen: list[str] | None = None,
    ) -> list[Note]:
        """Each batch in one transaction, holding the attempt against ending while it lands."""
        ids: list[str] = []
        for start in range(0, len(checked), batch):
            wanted = chosen[start : start + batch] if chosen is not None else None
            try:
                rows = self._insert_batch(checked[start : start + batch], author, model, attempt, note_kind, wanted)
            except ConflictError as exc:
                if wanted is None or "has used the id" in exc.message:
                    raise
                raise used_id_error(wanted[0]) from None  # another writer took a chosen id just now
            ids += [r["id"] for r in rows]
            if progress is not None:
                progress(len(ids), len(checked))
        with self.db.transaction() as conn:
            return added_notes(conn, ids, attempt)

    def _insert_batch(
        self,
        chunk: Sequence[tuple[str, bytes]],
        author: str | None,
        model: str | None,
        attempt: str | None,
        note_kind: str,
        chosen: list[str] | None,
    ) -> list[dict[str, Any]]:
        """One transaction of new notes; their rows."""
        with self.db.transaction() as conn:
            who, what = author, model
            if attempt is not None:
                running = require_running(
                    PgWriteTurn(conn, self._insert_summary).lock_attempt(attempt, "share"), attempt
                )
                who, what = running.credits(who, what)
            for nid in chosen or ():
                if id_was_used(conn, nid):
                    raise used_id_error(nid)
            rows = []
            ids = chosen if chosen is not None else new_note_ids(len(chunk))
            for k, (text, _data) in enumerate(chunk):
                nid, at = ids[k], now_iso()
                rows.append(new_row(nid, f"{nid}.md", text, author=who, model=what, created=at, updated=at))
                rows[-1]["attempt_id"], rows[-1]["note_kind"] = attempt, note_kind
            insert_rows(conn, rows)
        return rows

    def _insert_summary(self, conn: Any, text: str, attempt: Attempt) -> str:
        nid, at = new_note_id(), now_iso()
        row = new_row(nid, f"{nid}.md", text, author=attempt.author, model=attempt.model, created=at, updated=at)
        row["attempt_id"], row["note_kind"] = attempt.id, "summary"
        insert_rows(conn, [row])
        return nid

    def edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        with self.db.transaction() as conn:
            found = lock_note(conn, note_id)
            if found is None:
                raise NotFoundError(f"no note {note_id}")
            current, revision, path, created, model, attempt_id = found
            self._check_unfrozen(conn, note_id, attempt_id)
            made = make(current)
            text, _data = made if isinstance(made, tuple) else check_text(made, max_bytes=self.max_bytes)
            if text != current:
                at = now_iso()
                row = new_row(
                    note_id, path, text, author=author, model=model, created=created, updated=at, revision=revision + 1
                )
                update_note(conn, row, had_supersedes="supersedes" in current)
        return self.reading_note(lambda _records, load: load(note_id, None))

    def _check_unfrozen(self, conn: Any, note_id: str, attempt_id: str | None) -> None:
        """FrozenError when the note's attempt ended (its row held so it cannot end meanwhile)."""
        if attempt_id is not None:
            require_unfrozen(note_id, PgWriteTurn(conn, self._insert_summary).lock_attempt(attempt_id, "share"))

    def delete(self, note_id: str) -> dict[str, Any]:
        """Remove a note; its texts stay readable by revision number."""
        with self.db.transaction() as conn:
            found = lock_note(conn, note_id)
            if found is None:
                raise NotFoundError(f"no note {note_id}")
            self._check_unfrozen(conn, note_id, found[5])
            title, path, revision = delete_note(conn, note_id, now_iso())
        return {"id": note_id, "title": title, "path": path, "deleted": True, "revision": revision}

    # -- reads ----------------------------------------------------------------

    def note_at(self, ref: str) -> str:
        """The note at the path it has in the store's folder form (``notes/x.md``, as
        ``notewell export`` writes it and ``import`` read it)."""
        if os.path.isabs(ref):
            raise NotFoundError(f"{ref}: a store in a database has no folder; give a note id or its relative path")
        rel = ref.replace(os.sep, "/").removeprefix("./")
        if "\x00" in rel or rel.encode("utf-8", "replace").decode("utf-8") != rel:
            raise NotFoundError(f"no note at {ref!r}")  # no stored path holds a NUL or a lone surrogate
        with self.db.transaction() as conn:
            found = note_id_at(conn, rel)
        if found is None:
            raise NotFoundError(f"no note at {ref}")
        return found

    def reading_note(self, body: Callable[[Snapshot, NoteLoader], T]) -> T:
        with self.db.transaction() as conn:
            return body(PgSnapshot(conn), lambda nid, rev: load_note(conn, nid, rev))

    @contextlib.contextmanager
    def searching(self, request: SearchRequest) -> Iterator[tuple[Snapshot, Engines]]:
        # No transaction held across the search: each engine takes a connection of its own.
        yield PgPooledSnapshot(self.db), self.meaning.engines()

    # -- embedding ------------------------------------------------------------

    def embedding_turn(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def embed_some(self, embedder: Embedder, limit: int | None, progress: Progress | None) -> int:
        return self.meaning.embed_some(embedder, limit, progress)

    def embed_older(self, embedder: Embedder, limit: int | None) -> int:
        return self.meaning.embed_older(embedder, limit)

    def pending_count(self, model_id: str) -> int:
        return self.meaning.pending_count(model_id)

    def embedding_steps(self, embedder: Embedder) -> AbstractContextManager[EmbeddingStep]:
        return self.meaning.embedding_steps(embedder)

    def guarded(self, call: Callable[[], T]) -> T:
        return call()

    # -- moving between a folder and the database -----------------------------

    def export_folder(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Write the store into a new or empty *folder* as the embedded store keeps one (notes,
        journal, earlier revisions): ids, authors, times and revisions survive."""
        return export_folder(self.db, folder)

    def check_empty(self) -> None:
        """InvalidArgumentError unless the database holds no notes, live or deleted."""
        check_empty(self.db)

    def import_folder(self, source: TransferSource) -> dict[str, int]:
        """Load a folder store (opened by the caller) into this empty database, history and all."""
        check_empty(self.db)
        return import_folder(self.db, source)
