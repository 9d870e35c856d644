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

import hashlib
import os
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError, StorageError
from ..model.attempt import check_attempt_id, check_project
from ..model.header import parse_note
from ..model.header_edit import with_summary, with_tags
from ..model.ids import check_note_id, is_attempt_id, is_note_id, new_note_id
from ..model.note import (
    AUTHOR_MAX,
    DEFAULT_MAX_BYTES,
    MODEL_MAX,
    Card,
    Note,
    check_label,
    check_revision,
    check_text,
    derive_title,
    note_from_text,
)
from ..model.numbers import whole_number
from ..model.timestamps import now_iso
from ..model.visibility import Viewer
from ..search.embedder_slot import EmbedderSpec
from ..search.filters import Filters
from ..search.pg_rank import TermRarity
from ..search.pg_search import pg_list_cards
from ..search.plan import run_search
from ..search.request import SearchRequest
from ..storage.pg import PgDatabase
from ..storage.pg_vector_schema import enable_pgvector
from ..storage.sync import Progress
from .links import MAX_RECENT, check_link_args, link_tree, make_brief
from .pg_attempts import (
    PgAttemptsMixin,
    PgProjectsMixin,
    check_running,
    check_unfrozen,
    check_visible,
    hidden_projects,
    load_attempt,
    record_read,
    scoped,
)
from .pg_semantic import PgSemanticMixin
from .pg_tokens import PgTokenBook
from .pg_transfer import export_folder, import_folder

__all__ = ["PgStore"]

_NOTE_COLUMNS = "id, path, text, author, created_at, updated_at, revision, model, attempt_id, note_kind"


class PgStore(PgAttemptsMixin, PgProjectsMixin, PgSemanticMixin):
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

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    # -- writes ---------------------------------------------------------------

    def add_note(
        self, text: str | bytes, *, author: str | None = None, model: str | None = None, attempt: str | None = None
    ) -> Note:
        """Store a new note, on a running *attempt* if given; its text is kept byte for byte."""
        return self.add_notes([text], author=author, model=model, attempt=attempt)[0]

    def add_notes(
        self,
        texts: Iterable[str | bytes],
        *,
        author: str | None = None,
        model: str | None = None,
        attempt: str | None = None,
        progress: Progress | None = None,
        batch: int = 1000,
    ) -> list[Note]:
        """Store many notes, a batch per transaction (every text is checked first); *progress*
        is told (notes stored, notes in all) after each batch."""
        author = check_label(author, "author", AUTHOR_MAX)
        model = check_label(model, "model", MODEL_MAX)
        attempt = check_attempt_id(attempt) if attempt is not None else None
        checked = [check_text(t, max_bytes=self.max_bytes) for t in texts]
        ids: list[str] = []
        for start in range(0, len(checked), batch):
            with self._db.transaction() as conn:
                who, what = author, model
                if attempt is not None:
                    by, with_model, _project = check_running(conn, attempt)
                    who, what = who or by, what or with_model
                rows = []
                for text, _data in checked[start : start + batch]:
                    nid, at = new_note_id(), now_iso()
                    rows.append(_row(nid, f"{nid}.md", text, author=who, model=what, created=at, updated=at))
                    rows[-1]["attempt_id"] = attempt
                _insert_rows(conn, rows)
            ids += [r["id"] for r in rows]
            if progress is not None:
                progress(len(ids), len(checked))
        with self._db.transaction() as conn:
            return _added_notes(conn, ids, attempt)

    def _insert_summary(self, conn: Any, text: str, attempt_id: str, author: str | None, model: str | None) -> str:
        nid, at = new_note_id(), now_iso()
        row = _row(nid, f"{nid}.md", text, author=author, model=model, created=at, updated=at)
        row["attempt_id"], row["note_kind"] = attempt_id, "summary"
        _insert_rows(conn, [row])
        return nid

    def edit_note(self, note_id: str, text: str | bytes, *, author: str | None = None) -> Note:
        """Replace a note's text; the previous text stays as an earlier revision."""
        note_id = check_note_id(note_id)
        checked = check_text(text, max_bytes=self.max_bytes)
        return self._edit(note_id, lambda _current: checked, author)

    def add_tag(self, note_id: str, *tags: str, author: str | None = None) -> Note:
        """Add tags to a note's header (slugged; ones it has are skipped)."""
        note_id = check_note_id(note_id)
        if not tags:
            raise InvalidArgumentError("give at least one tag")
        with_tags("x", list(tags))  # bad tags fail before anything is read
        return self._edit(note_id, lambda current: with_tags(current, list(tags))[0], author)

    def set_summary(self, note_id: str, summary: str, *, author: str | None = None) -> Note:
        """Write ``summary:`` into a note's header (one line), changing nothing else."""
        note_id = check_note_id(note_id)
        with_summary("# x", summary)
        return self._edit(note_id, lambda current: with_summary(current, summary), author)

    def _edit(self, note_id: str, make: Callable[[str], str | tuple[str, bytes]], author: str | None) -> Note:
        author = check_label(author, "author", AUTHOR_MAX)
        with self._db.transaction() as conn:
            found = conn.execute(
                "SELECT text, revision, path, created_at, model, attempt_id FROM notes WHERE id = %s FOR UPDATE",
                (note_id,),
            ).fetchone()
            if found is None:
                raise NotFoundError(f"no note {note_id}")
            current, revision, path, created, model, attempt_id = found
            check_unfrozen(conn, note_id, attempt_id)
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

    def delete_note(self, note_id: str) -> dict[str, Any]:
        """Remove a note; its texts stay readable by revision number."""
        note_id = check_note_id(note_id)
        with self._db.transaction() as conn:
            owner = conn.execute("SELECT attempt_id FROM notes WHERE id = %s FOR UPDATE", (note_id,)).fetchone()
            if owner is not None:
                check_unfrozen(conn, note_id, owner[0])
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

    def resolve(self, ref: str) -> str:
        """A note id from an id or from the path the note has in the store's folder form
        (``notes/x.md``, as ``notewell export`` writes it and ``import`` read it)."""
        if isinstance(ref, str) and ref.endswith(".md") and not is_note_id(ref):
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
        return check_note_id(ref)

    def get_note(
        self,
        note_id: str,
        *,
        revision: int | None = None,
        viewer: Viewer | None = None,
        working_attempt_id: str | None = None,
    ) -> Note:
        """The whole note (or one of its revisions by number), with the notes that build on it
        and the attempt it was written on. Passing *working_attempt_id* (a running attempt)
        records the read on that attempt. A note in a private project the *viewer* may not
        see is not found."""
        note_id = check_note_id(note_id)
        check_revision(revision)
        reading_for = check_attempt_id(working_attempt_id) if working_attempt_id is not None else None
        with self._db.transaction() as conn:
            check_visible(conn, note_id, viewer)
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
            hidden = list(scoped(conn, Filters(), viewer).hidden_projects)
            backlinks = [
                {"id": b, "title": t, "kind": k, "updated_at": u}
                for b, t, k, u in conn.execute(
                    "SELECT n.id, n.title, n.kind, n.updated_at FROM note_links l JOIN notes n ON n.id = l.source"
                    " WHERE l.target = %s AND (n.attempt_id IS NULL OR n.attempt_id NOT IN"
                    " (SELECT id FROM attempts WHERE project = ANY(%s))) ORDER BY n.updated_at DESC",
                    (note_id, hidden),
                )
            ]
            attempt = load_attempt(conn, attempt_id) if attempt_id else None
            if reading_for is not None:
                record_read(conn, reading_for, note_id, viewer)
        shown = (nid, path, text, author, created, updated, current_rev, model, attempt_id, note_kind)
        return _note_of(shown, backlinks, attempt.to_dict() if attempt else None, revision)

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
        """Search: the best *limit* notes as cards, each carrying the ``mode`` that found it
        (filters as for :meth:`list_notes`, in every mode).

        Modes, as on the embedded store: ``keyword`` (tsvector, title 3x; exact),
        ``semantic`` (nearest in meaning, the best passage as snippet, cosine as score),
        ``both`` (the keyword list, then the semantic list, unfused) and ``hybrid`` (one
        fused ranking). With *wait*, the notes waiting to be embedded that no other server
        holds are embedded first."""
        request = SearchRequest.make(query, mode=mode, limit=limit, wait=wait, filters=filters)
        with self._db.transaction() as conn:
            f = scoped(conn, request.filters, viewer)
            if request.lists_recent(f):
                return pg_list_cards(conn, limit=request.limit, filters=f)
        # Outside that transaction: each engine takes a connection of its own from the pool.
        return run_search(request, f, self._engines())

    def list_notes(
        self, *, limit: int = 20, offset: int = 0, viewer: Viewer | None = None, **filters: Any
    ) -> list[Card]:
        """Notes, most recently updated first, as cards (filters: project, campaign, attempt_id,
        kind, tags + tag_mode, author, model, builds_on, created/updated after/before)."""
        f = Filters.from_kwargs(filters)
        with self._db.transaction() as conn:
            return pg_list_cards(conn, limit=limit, offset=offset, filters=scoped(conn, f, viewer))

    def note_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Each note's tags and summary (with its id and title), most recently updated first."""
        with self._db.transaction() as conn:
            where, params = scoped(conn, Filters(), viewer).pg_sql()
            rows = conn.execute(
                "SELECT n.id, n.title, n.tags, n.summary FROM notes n"
                + (f" WHERE {where}" if where else "")
                + " ORDER BY n.updated_at DESC, n.seq DESC",
                params,
            ).fetchall()
        return [{"id": n, "title": title, "tags": list(tags), "summary": summary} for n, title, tags, summary in rows]

    def list_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every tag with the number of notes carrying it, most used first."""
        with self._db.transaction() as conn:
            where, params = scoped(conn, Filters(), viewer).pg_sql()
            rows = conn.execute(
                "SELECT t.tag, count(*) FROM notes n CROSS JOIN LATERAL unnest(n.tags) AS t(tag)"
                + (f" WHERE {where}" if where else "")
                + " GROUP BY t.tag ORDER BY count(*) DESC, t.tag",
                params,
            ).fetchall()
        return [{"tag": t, "count": c} for t, c in rows]

    def links(self, note_id: str, *, depth: int = 1, viewer: Viewer | None = None) -> dict[str, Any]:
        """What a note builds on and what builds on it, *depth* steps out (1–10); a note met
        again on a path is listed with ``"again": true`` and not followed."""
        note_id, depth = check_link_args(note_id, depth)
        with self._db.transaction() as conn:
            hidden = set(hidden_projects(conn, viewer))

            def node(ref: str) -> dict[str, Any] | None:
                if is_attempt_id(ref):
                    got = conn.execute("SELECT project, author FROM attempts WHERE id = %s", (ref,)).fetchone()
                    if got is None:
                        return {"id": ref, "missing": True}
                    if got[0] in hidden:
                        return None
                    return {"id": ref, "title": f"attempt on {got[0]} by {got[1]}", "kind": "attempt"}
                row = conn.execute(
                    "SELECT n.id, n.title, n.kind, a.project FROM notes n LEFT JOIN attempts a ON a.id = n.attempt_id"
                    " WHERE n.id = %s",
                    (ref,),
                ).fetchone()
                if row is None:
                    return {"id": ref, "missing": True}
                if row[3] is not None and row[3] in hidden:
                    return None
                return {"id": row[0], "title": row[1], "kind": row[2]}

            def neighbours(ref: str, up: bool) -> list[dict[str, Any]]:
                if up:
                    row = conn.execute("SELECT builds_on FROM notes WHERE id = %s", (ref,)).fetchone()
                    refs = list(row[0]) if row else []
                else:
                    refs = [
                        r
                        for (r,) in conn.execute(
                            "SELECT n.id FROM note_links l JOIN notes n ON n.id = l.source WHERE l.target = %s"
                            " ORDER BY n.updated_at DESC",
                            (ref,),
                        )
                    ]
                return [found for r in refs if (found := node(r)) is not None]

            return link_tree(note_id, depth, node, neighbours)

    def brief(self, project: str, *, recent: int = 10, viewer: Viewer | None = None) -> dict[str, Any]:
        """A project's newest digest, its recent notes, and the notes the digest does not cover."""
        name = check_project(project)
        whole_number("recent", recent, 1, MAX_RECENT)
        info = self.get_project(name, viewer=viewer)
        with self._db.transaction() as conn:
            scope = scoped(conn, Filters(project=name), viewer)
            return make_brief(
                info, scope, recent, lambda limit, offset, f: pg_list_cards(conn, limit=limit, offset=offset, filters=f)
            )

    def history(self, note_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every revision of a note, oldest first."""
        note_id = check_note_id(note_id)
        with self._db.transaction() as conn:
            check_visible(conn, note_id, viewer)
            live = conn.execute("SELECT revision FROM notes WHERE id = %s", (note_id,)).fetchone()
            rows = conn.execute(
                "SELECT revision, op, at, author, text FROM revisions WHERE id = %s ORDER BY revision", (note_id,)
            ).fetchall()
        if not live and not rows:
            raise NotFoundError(f"no note {note_id}")
        current = live[0] if live else None
        return [
            {
                "revision": rev,
                "op": op,
                "at": at,
                "author": author,
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "size": len(text.encode("utf-8")),
                "current": rev == current,
                "kept": True,
            }
            for rev, op, at, author, text in rows
        ]

    def summary(self, *, recent: int = 5, viewer: Viewer | None = None) -> dict[str, Any]:
        """Counts by kind and the most recent notes (of the projects *viewer* may see)."""
        with self._db.transaction() as conn:
            f = scoped(conn, Filters(), viewer)
            where, params = f.pg_sql()
            where = f" WHERE {where}" if where else ""
            total = conn.execute(f"SELECT count(*) FROM notes n{where}", params).fetchone()[0]
            kinds = conn.execute(
                f"SELECT n.kind, count(*) FROM notes n{where} GROUP BY n.kind"
                " ORDER BY count(*) DESC, n.kind NULLS FIRST",  # as SQLite orders NULL
                params,
            ).fetchall()
            cards = pg_list_cards(conn, limit=max(1, recent), filters=f)
        # The same shape as the embedded store's; a database has no unreadable files to report.
        return {
            "total_notes": total,
            "by_kind": [{"kind": k, "count": c} for k, c in kinds],
            "recent_notes": [c.to_dict() for c in cards],
            "problems": [],
        }

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
    loaded = load_attempt(conn, attempt) if attempt is not None else None
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
