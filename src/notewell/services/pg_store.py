"""The store on PostgreSQL: the same note API as the embedded :class:`Store`, for many
notewell servers sharing one database.

The database is canonical (each note's text exactly as written, its metadata and its
earlier revisions). Every write is one transaction; an edit locks the note's row
(``SELECT … FOR UPDATE``) and builds on the text it finds there, so two servers editing
one note at once both land, one after the other, and neither edit is lost. Every write
that changes a note's text queues it for embedding in that transaction (triggers of
schema version 3); semantic search is :class:`.pg_semantic.PgSemanticMixin`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..backends.postgres.db import PgDatabase
from ..backends.postgres.rank import TermRarity
from ..backends.postgres.records import PgChanges, PgPooledRecords, PgRecords
from ..backends.postgres.vector_schema import enable_pgvector
from ..backends.records import Changes, Records
from ..backends.sqlite.sync import Progress
from ..errors import NotFoundError, StorageError
from ..model.attempt import Attempt, require_running, require_unfrozen
from ..model.header import parse_note
from ..model.ids import new_note_id
from ..model.note import (
    DEFAULT_MAX_BYTES,
    Note,
    check_text,
    derive_title,
    note_from_text,
)
from ..model.timestamps import now_iso
from ..search.embedder_slot import EmbedderSpec
from ..search.plan import Engines
from ..search.request import SearchRequest
from .pg_semantic import PgSemanticMixin
from .pg_tokens import PgTokenBook
from .pg_transfer import export_folder, import_folder
from .service import NoteLoader, NoteService

__all__ = ["PgStore"]

_NOTE_COLUMNS = "id, path, text, author, created_at, updated_at, revision, model, attempt_id, note_kind"


class PgStore(PgSemanticMixin, NoteService):
    """Notes in a PostgreSQL database (``notewell.open("postgresql://…")``)."""

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
        self._init_semantic(embedder)
        self._rarity = TermRarity()  # how many notes hold each searched term, for ranking
        self._db = PgDatabase(url, max_size=pool_size)
        try:
            if create and self._db.schema_version() == 0:
                self._db.upgrade()  # a new, empty database: make the schema
                _enable_pgvector_if_possible(self._db)
            self._db.check_schema()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        """Stop the embedding thread, then close the connections."""
        self.stop_embedding()
        self._db.close()

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
        return f"<notewell.PgStore {self.address}>"

    def token_book(self) -> PgTokenBook:
        """The servers' bearer tokens, in this database (shared by every server of it)."""
        return PgTokenBook(self._db)

    # -- what the note service runs on -----------------------------------------

    @contextlib.contextmanager
    def _records(self) -> Iterator[Records]:
        with self._db.transaction() as conn:
            yield PgRecords(conn)

    @contextlib.contextmanager
    def _changes(self) -> Iterator[Changes]:
        with self._db.transaction() as conn:
            yield PgChanges(conn, self._insert_summary)

    # -- writes ---------------------------------------------------------------

    def _insert_notes(
        self,
        checked: list[tuple[str, bytes]],
        author: str | None,
        model: str | None,
        attempt: str | None,
        note_kind: str,
        progress: Progress | None,
        batch: int,
    ) -> list[Note]:
        """Each batch in one transaction, holding the attempt against ending while it lands."""
        ids: list[str] = []
        for start in range(0, len(checked), batch):
            with self._db.transaction() as conn:
                who, what = author, model
                if attempt is not None:
                    running = require_running(
                        PgChanges(conn, self._insert_summary).lock_attempt(attempt, "share"), attempt
                    )
                    who, what = running.credits(who, what)
                rows = []
                for text, _data in checked[start : start + batch]:
                    nid, at = new_note_id(), now_iso()
                    rows.append(_row(nid, f"{nid}.md", text, author=who, model=what, created=at, updated=at))
                    rows[-1]["attempt_id"], rows[-1]["note_kind"] = attempt, note_kind
                _insert_rows(conn, rows)
            ids += [r["id"] for r in rows]
            if progress is not None:
                progress(len(ids), len(checked))
        with self._db.transaction() as conn:
            return _added_notes(conn, ids, attempt)

    def _insert_summary(self, conn: Any, text: str, attempt: Attempt) -> str:
        nid, at = new_note_id(), now_iso()
        row = _row(nid, f"{nid}.md", text, author=attempt.author, model=attempt.model, created=at, updated=at)
        row["attempt_id"], row["note_kind"] = attempt.id, "summary"
        _insert_rows(conn, [row])
        return nid

    def _edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        with self._db.transaction() as conn:
            found = conn.execute(
                "SELECT text, revision, path, created_at, model, attempt_id FROM notes WHERE id = %s FOR UPDATE",
                (note_id,),
            ).fetchone()
            if found is None:
                raise NotFoundError(f"no note {note_id}")
            current, revision, path, created, model, attempt_id = found
            self._check_unfrozen(conn, note_id, attempt_id)
            made = make(current)
            text, _data = made if isinstance(made, tuple) else check_text(made, max_bytes=self.max_bytes)
            if text != current:
                at = now_iso()
                row = _row(
                    note_id, path, text, author=author, model=model, created=created, updated=at, revision=revision + 1
                )
                conn.execute(
                    "UPDATE notes SET text = %(text)s, title = %(title)s, body = %(body)s, kind = %(kind)s,"
                    " tags = %(tags)s, builds_on = %(builds_on)s, summary = %(summary)s, model = %(model)s,"
                    " updated_at = %(updated)s, revision = %(revision)s WHERE id = %(id)s",
                    row,
                )
                conn.execute("DELETE FROM note_links WHERE source = %s", (note_id,))
                for target in row["builds_on"]:
                    conn.execute(
                        "INSERT INTO note_links(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                        (target, note_id),
                    )
                conn.execute(
                    "INSERT INTO revisions(id, revision, text, at, author, op) VALUES (%s, %s, %s, %s, %s, 'edit')",
                    (note_id, revision + 1, text, at, author),
                )
        return self.get_note(note_id)

    def _check_unfrozen(self, conn: Any, note_id: str, attempt_id: str | None) -> None:
        """FrozenError when the note's attempt ended (its row held so it cannot end meanwhile)."""
        if attempt_id is not None:
            require_unfrozen(note_id, PgChanges(conn, self._insert_summary).lock_attempt(attempt_id, "share"))

    def _delete(self, note_id: str) -> dict[str, Any]:
        """Remove a note; its texts stay readable by revision number."""
        with self._db.transaction() as conn:
            owner = conn.execute("SELECT attempt_id FROM notes WHERE id = %s FOR UPDATE", (note_id,)).fetchone()
            if owner is not None:
                self._check_unfrozen(conn, note_id, owner[0])
            found = conn.execute(
                "DELETE FROM notes WHERE id = %s RETURNING title, path, revision, author, model, created_at,"
                " attempt_id, note_kind",
                (note_id,),
            ).fetchone()
            if found is None:
                raise NotFoundError(f"no note {note_id}")
            title, path, revision, author, model, created, attempt_id, note_kind = found
            conn.execute(
                "INSERT INTO gone(id, path, deleted_at, revision, author, model, created_at, attempt_id, note_kind)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET"
                " deleted_at = EXCLUDED.deleted_at, revision = EXCLUDED.revision",
                (note_id, path, now_iso(), revision, author, model, created, attempt_id, note_kind),
            )
        return {"id": note_id, "title": title, "path": path, "deleted": True, "revision": revision}

    # -- reads ----------------------------------------------------------------

    def _note_at(self, ref: str) -> str:
        """The note at the path it has in the store's folder form (``notes/x.md``, as
        ``notewell export`` writes it and ``import`` read it)."""
        if os.path.isabs(ref):
            raise NotFoundError(f"{ref}: a store in a database has no folder; give a note id or its relative path")
        rel = ref.replace(os.sep, "/").removeprefix("./")
        if "\x00" in rel or rel.encode("utf-8", "replace").decode("utf-8") != rel:
            raise NotFoundError(f"no note at {ref!r}")  # no stored path holds a NUL or a lone surrogate
        with self._db.transaction() as conn:
            row = conn.execute("SELECT id FROM notes WHERE path = %s", (rel,)).fetchone()
        if row is None:
            raise NotFoundError(f"no note at {ref}")
        return str(row[0])

    def _reading_note(self, body: Callable[[Records, NoteLoader], Note]) -> Note:
        with self._db.transaction() as conn:
            return body(PgRecords(conn), lambda nid, rev, _viewer: _load_note(conn, nid, rev))

    @contextlib.contextmanager
    def _searching(self, request: SearchRequest) -> Iterator[tuple[Records, Engines]]:
        # No transaction held across the search: each engine takes a connection of its own.
        yield PgPooledRecords(self._db), self._engines()

    # -- moving between a folder and the database -----------------------------

    def export_folder(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Write the store into a new or empty *folder* as the embedded store keeps one (notes,
        journal, earlier revisions): ids, authors, times and revisions survive."""
        return export_folder(self._db, folder)

    def import_folder(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Load the embedded store in *folder* into this (empty) database, history and all."""
        return import_folder(self._db, folder, max_bytes=self.max_bytes)


_ROW_COLUMNS = (
    ("id", "id"),
    ("path", "path"),
    ("text", "text"),
    ("title", "title"),
    ("body", "body"),
    ("kind", "kind"),
    ("tags", "tags"),
    ("builds_on", "builds_on"),
    ("model", "model"),
    ("summary", "summary"),
    ("author", "author"),
    ("created_at", "created"),
    ("updated_at", "updated"),
    ("revision", "revision"),
    ("attempt_id", "attempt_id"),
    ("note_kind", "note_kind"),
)


def _enable_pgvector_if_possible(db: PgDatabase) -> None:
    """Search a new database with pgvector where its server has it: while the database is
    empty this costs nothing (on a full one it is ``notewell db upgrade``'s long job)."""
    try:
        with db.transaction() as conn:
            enable_pgvector(conn)
    except StorageError:
        pass  # the extension is there but this role may not create it: each server's matrix


def _insert_rows(conn: Any, rows: list[dict[str, Any]]) -> None:
    """Insert new notes with their links and first revisions (inside the caller's transaction)."""
    with conn.cursor() as cur:
        # COPY, not one INSERT per note: the rows stream in one statement (measured: a batch
        # of 2,000 notes went in about 30% faster). Row triggers (the embedding queue),
        # constraints and generated columns apply to COPY as to INSERT.
        with cur.copy(f"COPY notes({', '.join(c for c, _ in _ROW_COLUMNS)}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row([r[k] for _, k in _ROW_COLUMNS])
        cur.executemany(
            "INSERT INTO note_links(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(t, r["id"]) for r in rows for t in r["builds_on"]],
        )
        with cur.copy("COPY revisions(id, revision, text, at, author, op) FROM STDIN") as copy:
            for r in rows:
                copy.write_row((r["id"], r["revision"], r["text"], r["updated"], r["author"], "add"))


def _added_notes(conn: Any, ids: list[str], attempt: str | None) -> list[Note]:
    """The notes just added, as get_note gives them to a caller who may see everything, read
    together (one get_note per note was a third of a bulk add)."""
    found = {row[0]: row for row in conn.execute(f"SELECT {_NOTE_COLUMNS} FROM notes WHERE id = ANY(%s)", (ids,))}
    backlinks: dict[str, list[dict[str, Any]]] = {}
    for target, b, t, k, u in conn.execute(
        "SELECT l.target, n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN notes n ON n.id = l.source"
        " WHERE l.target = ANY(%s) ORDER BY n.updated_at DESC",
        (ids,),
    ):
        backlinks.setdefault(target, []).append({"id": b, "title": t, "kind": k, "updated_at": u})
    loaded = PgRecords(conn).attempt(attempt) if attempt is not None else None
    on_attempt = loaded.to_dict() if loaded else None
    notes = []
    for nid in ids:
        if nid not in found:
            raise NotFoundError(f"no note {nid}")  # deleted by another writer since its commit
        row = found[nid]
        notes.append(_note_of(row, backlinks.get(nid, []), on_attempt if row[8] == attempt else None))
    return notes


def _note_of(
    row: tuple, backlinks: list[dict[str, Any]], attempt: dict[str, Any] | None, revision: int | None = None
) -> Note:
    """A note from its _NOTE_COLUMNS *row* (its text that of *revision*, when given)."""
    nid, path, text, author, created, updated, current, model, attempt_id, note_kind = row
    return note_from_text(
        text,
        path=path,
        model=model,
        id=nid,
        author=author,
        created_at=created,
        updated_at=updated,
        revision=revision or current,
        revisions=current,
        backlinks=backlinks,
        attempt_id=attempt_id,
        note_kind=note_kind or "note",
        attempt=attempt,
    )


def _row(
    nid: str,
    path: str,
    text: str,
    *,
    author: str | None,
    model: str | None,
    created: str,
    updated: str,
    revision: int = 1,
) -> dict[str, Any]:
    parsed = parse_note(text)
    header = parsed.header or {}
    return {
        "id": nid,
        "path": path,
        "text": text,
        "title": derive_title(parsed, path),
        "body": parsed.body,
        "kind": header.get("kind"),
        "tags": list(header.get("tags", [])),
        "builds_on": list(header.get("builds_on", [])),
        "model": header.get("model") or model,
        "summary": header.get("summary"),
        "author": author,
        "created": created,
        "updated": updated,
        "revision": revision,
        "attempt_id": None,
        "note_kind": "note",
    }


def _load_note(conn: Any, note_id: str, revision: int | None) -> Note:
    """The note (or one of its revisions by number), with every note that builds on it and
    the attempt it was written on."""
    row = conn.execute(f"SELECT {_NOTE_COLUMNS} FROM notes WHERE id = %s", (note_id,)).fetchone()
    if row is None:
        gone = conn.execute(
            "SELECT id, path, '', author, created_at, deleted_at, revision, model, attempt_id, note_kind"
            " FROM gone WHERE id = %s",
            (note_id,),
        ).fetchone()
        if gone is None or revision is None:
            hint = " (deleted; its revisions can be read by number)" if gone else ""
            raise NotFoundError(f"no note {note_id}{hint}")
        row = gone
    nid, path, text, author, created, updated, current_rev, model, attempt_id, note_kind = row
    if revision is not None and (revision != current_rev or not text):
        if revision > current_rev:
            raise NotFoundError(f"{note_id} has {current_rev} revision(s); there is no revision {revision}")
        kept = conn.execute(
            "SELECT text, at, author FROM revisions WHERE id = %s AND revision = %s", (note_id, revision)
        ).fetchone()
        if kept is None:
            raise NotFoundError(f"revision {revision} of {note_id} was not kept")
        text, updated, author = kept
    backlinks = [
        {"id": b, "title": t, "kind": k, "updated_at": u}
        for b, t, k, u in conn.execute(
            "SELECT n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN notes n ON n.id = l.source"
            " WHERE l.target = %s ORDER BY n.updated_at DESC",
            (note_id,),
        )
    ]
    attempt = PgRecords(conn).attempt(attempt_id) if attempt_id else None
    shown = (nid, path, text, author, created, updated, current_rev, model, attempt_id, note_kind)
    return _note_of(shown, backlinks, attempt.to_dict() if attempt else None, revision)
