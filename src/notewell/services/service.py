"""The note service: the policy every store follows, written once over the backend it holds.

Who may see a note, an attempt or a project; which attempt may take a note and when a note
is frozen; what a project, a link tree, a brief, a tag list or a summary holds; how bad
arguments are refused. The backend (:class:`~notewell.backends.backend.Backend`: SQLite
beside a folder, or PostgreSQL) gives only its reads and writes; :mod:`.opening` picks it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Self, TypeVar

from ..backends.backend import Backend, NoteLoader
from ..backends.records import Snapshot, WriteTurn
from ..errors import ConflictError, InvalidArgumentError, InvalidNoteError, NotewellError, NotFoundError
from ..model.access_tokens import Tokens
from ..model.attempt import (
    Attempt,
    check_attempt_id,
    check_outcome,
    check_project,
    project_namespace,
    require_running,
    titled_summary,
)
from ..model.header import parse_note
from ..model.header_edit import with_body, with_summary, with_tags
from ..model.ids import check_note_id, is_attempt_id, is_note_id, new_attempt_id
from ..model.note import AUTHOR_MAX, MODEL_MAX, Card, Note, check_label, check_revision, check_text
from ..model.numbers import whole_number
from ..model.open_work import OPEN_KINDS, STALE_AGE
from ..model.progress import Progress
from ..model.redaction import Redacted, check_mode, redact, sensitive_spans
from ..model.timestamps import now_iso, parse_when
from ..model.visibility import Viewer, handle_namespace, may_see
from ..model.visibility import hidden_projects as viewer_hidden_projects
from ..search.embedders import Embedder, numpy
from ..search.filters import Filters
from ..search.plan import run_search
from ..search.request import SearchRequest, check_limit
from ..settings import setting
from .background import EmbeddingThread
from .links import MAX_RECENT, Node, check_link_args, link_tree, make_brief, supersede_chain
from .stale import stale_cards
from .superseding import mark_superseded, successors_first, visible_successors

__all__ = ["NoteService", "service_call"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
B = TypeVar("B", bound=Backend)


_NAMED_MAX = 5  # paths named when a file name is ambiguous


class _Checked(Sequence[tuple[str, bytes]]):
    """Checked texts as (text, bytes) pairs, encoded when a batch is taken: holding the bytes of
    every note of a bulk import at once doubled its memory (they equal text.encode())."""

    def __init__(self, texts: list[str]) -> None:
        self._texts = texts

    @property
    def texts(self) -> list[str]:
        """The checked texts themselves (not encoded)."""
        return self._texts

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, at: Any) -> Any:
        if isinstance(at, slice):
            return [(t, t.encode("utf-8")) for t in self._texts[at]]
        return self._texts[at], self._texts[at].encode("utf-8")


def service_call(method: F) -> F:
    """A public call of the service: run through its backend's ``guarded``."""

    @functools.wraps(method)
    def wrapper(self: NoteService[Any], *args: Any, **kwargs: Any) -> Any:
        return self._backend.guarded(lambda: method(self, *args, **kwargs))

    return wrapper  # type: ignore[return-value]


class NoteService(Generic[B]):
    """The policy every store follows, over the backend it holds."""

    def __init__(self, backend: B, *, redact: str | None = None) -> None:
        try:  # a bad mode fails the open, not a later write
            self._redact = check_mode(redact if redact is not None else setting("NOTEWELL_REDACT"))
        except InvalidArgumentError:
            backend.close()
            raise
        self._backend = backend
        self._embedding = EmbeddingThread()

    @property
    def backend(self) -> B:
        """The backend this service runs on (for what only one kind of store has)."""
        return self._backend

    @property
    def name(self) -> str:
        """A short name for the store (a folder's name, a database's)."""
        return self._backend.name

    @property
    def location(self) -> str:
        """Where the store lives, to show a person (never a password)."""
        return self._backend.location

    @property
    def redaction(self) -> str:
        """What the store does with a secret or personal data in a text it is given: ``mask``,
        ``refuse`` or ``off`` (``redact=`` when opened, else $NOTEWELL_REDACT, else mask)."""
        return self._redact

    def redacted(self, text: str) -> Redacted:
        """*text* as this store keeps it: ``<private>`` spans removed, secrets and personal data
        masked (SensitiveDataError when the store refuses them). Every write applies it; an
        importer calls it first to count what was masked."""
        return redact(text, self._redact)

    def _kept(self, text: str | bytes) -> tuple[str, bytes]:
        """*text* checked (check_text) and redacted, as the backend is to write it."""
        checked = check_text(text, max_bytes=self.max_bytes)
        kept = redact(checked[0], self._redact).text
        return checked if kept is checked[0] else check_text(kept, max_bytes=self.max_bytes)

    def _label(self, value: str | None, name: str, limit: int) -> str | None:
        """A label (author, model, owner) checked and redacted: it is kept beside the notes,
        in the journal and the index, so a secret in it would reach the disk as in a note."""
        label = check_label(value, name, limit)
        return label if label is None else check_label(redact(label, self._redact).text, name, limit)

    def _project(self, value: object, name: str = "project") -> str:
        """A project (or campaign) name written to the store, redacted before it is slugged
        (a slug is lower case, which no detector would know again: as add_tag's tags). The mask
        has no ":", which would put the project in a namespace."""
        kept = redact(value, self._redact, mask="redacted {kind}").text if isinstance(value, str) else value
        return check_project(kept, name)

    @property
    def max_bytes(self) -> int:
        """The largest note the store takes, in bytes."""
        return self._backend.max_bytes

    def token_book(self) -> Tokens:
        """The servers' bearer tokens (beside the index, or in the database)."""
        return self._backend.token_book()

    def close(self) -> None:
        """Stop the embedding thread, then the backend's threads and connections."""
        self.stop_embedding()
        self._backend.close()

    def stop_embedding(self) -> None:
        """Stop the background embedding thread (it finishes the batch in hand)."""
        self._embedding.stop()

    def _embedder_now(self) -> Embedder:
        """The store's embedder, made on first use (the model loads only when needed, once)."""
        return self._backend.embedders.get()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- embedding ---------------------------------------------------------------

    @service_call
    def embed_pending(self, *, limit: int | None = None, progress: Progress | None = None) -> dict[str, Any]:
        """Embed the notes waiting for it (new, changed, made outside notewell, or embedded by
        another model; on a shared database, those no other server is embedding), then, with
        what *limit* leaves, older revisions not embedded yet (search finds their meaning after
        the current texts'). Returns how many notes were embedded, how many still wait, and how
        many older revisions were embedded."""
        if limit is not None:
            whole_number("limit", limit)
        embedder = self._embedder_now()
        with self._backend.embedding_turn():
            done = self._backend.embed_some(embedder, limit, progress)
            older = self._backend.embed_older(embedder, None if limit is None else limit - done) if limit != done else 0
            return {"embedded": done, "pending": self._backend.pending_count(embedder.model_id), "revisions": older}

    @service_call
    def pending_embeddings(self) -> int:
        """How many notes semantic search does not know yet (or knows from another model)."""
        return self._backend.pending_count(self._embedder_now().model_id)

    def start_embedding(self, *, idle: float = 2.0) -> bool:
        """Embed queued notes on a background thread (for long-running processes), so that
        reads and writes never wait for the model. Returns False when one runs already."""
        if self._embedding.running():
            return False
        embedder = self._embedder_now()  # fails here, not on the thread, without a model
        numpy()  # or without the extra

        def work(stop: threading.Event) -> None:
            with self._backend.embedding_steps(embedder) as step:
                while not stop.is_set():
                    try:
                        done = step(stop.is_set)
                    except NotewellError:
                        done = 0  # busy, unreachable, or the index being rebuilt: try again after a pause
                    if not done:
                        stop.wait(idle)

        return self._embedding.launch(work, "notewell-embed")

    # -- notes -----------------------------------------------------------------

    @service_call
    def add_note(
        self,
        text: str | bytes,
        *,
        author: str | None = None,
        model: str | None = None,
        attempt: str | None = None,
        note_id: str | None = None,
    ) -> Note:
        """Store a new note, on a running *attempt* if given; its text is kept byte for byte but
        what :meth:`redacted` takes out. Returns the whole note. *note_id*: an id chosen
        beforehand (``notewell.new_note_id()``) so that the text can name it; ConflictError
        when the store has used it already."""
        if note_id is None:
            return self.add_notes([text], author=author, model=model, attempt=attempt)[0]
        chosen = check_note_id(note_id)
        author = self._label(author, "author", AUTHOR_MAX)
        model = self._label(model, "model", MODEL_MAX)
        attempt_id = check_attempt_id(attempt) if attempt is not None else None
        checked = [self._kept(text)]
        _check_not_itself(chosen, checked[0][0])
        return self._backend.insert_notes(checked, author, model, attempt_id, "note", None, 1, [chosen])[0]

    @service_call
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
        """Store many notes, a batch per transaction (the bulk import path). Every text is
        checked before anything is written; *progress* is told (notes stored, notes in all)
        after each batch. *note_ids*: ids chosen beforehand, one per text (ConflictError when
        the store has used one: its batch is not written, the batches before it are)."""
        author = self._label(author, "author", AUTHOR_MAX)
        model = self._label(model, "model", MODEL_MAX)
        attempt_id = check_attempt_id(attempt) if attempt is not None else None
        batch = whole_number("batch", batch, 1)
        checked = _Checked([self._kept(t)[0] for t in texts])
        chosen = None
        if note_ids is not None:
            chosen = [check_note_id(i) for i in note_ids]
            if len(chosen) != len(checked):
                raise InvalidArgumentError(f"{len(chosen)} note_ids for {len(checked)} texts: give one per text")
            if len(set(chosen)) != len(chosen):
                raise InvalidArgumentError("note_ids must differ from each other")
            for nid, text in zip(chosen, checked.texts, strict=True):
                _check_not_itself(nid, text)
        return self._backend.insert_notes(checked, author, model, attempt_id, "note", progress, batch, chosen)

    @service_call
    def resolve(self, ref: str, *, viewer: Viewer | None = None) -> str:
        """A note id from an id, from the path of a note inside the store (``notes/x.md``), or
        from its file name alone (``x.md``, as the Day-5 tutorial's tools name notes) when one
        note *viewer* may see has it. A path no note the viewer may see has is not found, as
        one nobody has; a name several such notes have is refused, naming their paths."""
        if not isinstance(ref, str) or not ref.endswith(".md") or is_note_id(ref):
            return check_note_id(ref)
        try:
            found: str | None = self._backend.note_at(ref)
        except NotFoundError:
            found = None
        if found is not None:
            with self._backend.snapshot() as records:
                hidden = self._hidden(records, viewer)
                if not (hidden and records.note_project(found) in hidden):
                    return found
            # A path only a hidden note has goes on as one nobody has: the same answer, the same work.
        name = ref.strip().replace("\\", "/").removeprefix("./")
        if "/" in name or not name:
            raise NotFoundError(f"no note at {ref}")
        with self._backend.snapshot() as records:
            named = records.notes_named(name, _NAMED_MAX + 1, self._hidden(records, viewer))
        if not named:
            raise NotFoundError(f"no note at {ref}")
        if len(named) > 1:
            paths = ", ".join(path for _, path in named[:_NAMED_MAX])
            if len(named) > _NAMED_MAX:
                raise InvalidArgumentError(f"{name} names more than {_NAMED_MAX} notes: give its path ({paths}, ...)")
            raise InvalidArgumentError(f"{name} names {len(named)} notes: give its path ({paths})")
        return named[0][0]

    @service_call
    def edit_note(
        self,
        note_id: str,
        text: str | bytes,
        *,
        author: str | None = None,
        keep_header: bool = False,
        base_revision: int | None = None,
    ) -> Note:
        """Replace a note's text; the previous text stays as an earlier revision. With
        *keep_header*, *text* is the new body and the header stays byte for byte. With
        *base_revision* (the revision the new text was written from), ConflictError when the
        note's text has changed since, so an edit made meanwhile is never overwritten unseen.
        A text equal to the current one writes nothing (the revision stays)."""
        note_id = check_note_id(note_id)
        author = self._label(author, "author", AUTHOR_MAX)
        base = None
        if base_revision is not None:
            base_revision = whole_number("base_revision", base_revision)
            base = self.get_note(note_id, revision=base_revision).text
        if keep_header:
            body = self._kept(text)[0]  # a bad body fails before anything is read

            def make(current: str) -> str | tuple[str, bytes]:
                _check_base(note_id, base, base_revision, current)
                return with_body(current, body)

            return self._backend.edit(note_id, make, author)
        checked = self._kept(text)
        _check_not_itself(note_id, checked[0])

        def replace_all(current: str) -> str | tuple[str, bytes]:
            _check_base(note_id, base, base_revision, current)
            return checked

        return self._backend.edit(note_id, replace_all, author)

    @service_call
    def add_tag(self, note_id: str, *tags: str, author: str | None = None) -> Note:
        """Add tags to a note's header (slugged; ones it has are skipped), creating a header
        when it has none. Every other line of the note stays byte for byte."""
        note_id = check_note_id(note_id)
        if not tags:
            raise InvalidArgumentError("give at least one tag")
        # Redacted before slugging: a slug is lower case, which no detector would know again.
        tags = tuple(self.redacted(t).text if isinstance(t, str) else t for t in tags)
        with_tags("x", list(tags))  # bad tags fail before anything is read
        author = self._label(author, "author", AUTHOR_MAX)
        return self._backend.edit(note_id, lambda current: with_tags(current, list(tags))[0], author)

    @service_call
    def set_summary(self, note_id: str, summary: str, *, author: str | None = None) -> Note:
        """Write ``summary:`` into a note's header (one line), changing nothing else."""
        note_id = check_note_id(note_id)
        summary = self.redacted(summary).text if isinstance(summary, str) else summary
        with_summary("# x", summary)  # a bad summary fails before anything is read
        author = self._label(author, "author", AUTHOR_MAX)
        return self._backend.edit(note_id, lambda current: with_summary(current, summary), author)

    @service_call
    def get_note(
        self,
        note_id: str,
        *,
        revision: int | None = None,
        viewer: Viewer | None = None,
        working_attempt_id: str | None = None,
    ) -> Note:
        """The whole note (or one of its revisions by number): text as written, parsed header,
        extra, body, the notes that build on it, and the attempt it was written on. Passing
        *working_attempt_id* (a running attempt) records the read on that attempt. A note in a
        private project the *viewer* may not see is not found, nor are such backlinks shown."""
        note_id = check_note_id(note_id)
        check_revision(revision)
        reading_for = check_attempt_id(working_attempt_id) if working_attempt_id is not None else None

        def visible(records: Snapshot, load: NoteLoader) -> Note:
            hidden = self._hidden(records, viewer)
            if hidden and records.note_project(note_id) in hidden:
                raise NotFoundError(f"no note {note_id}")
            note = load(note_id, revision)
            if hidden and records.note_project(note_id) in hidden:  # a load that caught up may have moved it
                raise NotFoundError(f"no note {note_id}")
            if hidden and note.backlinks:
                secret = records.notes_in(hidden, [b["id"] for b in note.backlinks])
                note.backlinks = [b for b in note.backlinks if b["id"] not in secret]
            note.superseded_by = visible_successors(records, [note_id], hidden).get(note_id, [])
            return note

        note = self._backend.reading_note(visible)
        if reading_for is not None:
            with self._backend.write_turn() as changes:
                self._record_read(changes, reading_for, note_id, viewer)
        return note

    @service_call
    def delete_note(self, note_id: str) -> dict[str, Any]:
        """Remove a note; its last text stays readable by revision number."""
        return self._backend.delete(check_note_id(note_id))

    @service_call
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
        """Search: the best *limit* notes as cards, each carrying the ``mode`` that found it.

        Modes: ``keyword`` (BM25, title 3x; exact), ``semantic`` (nearest in meaning, the
        best passage as snippet), ``both`` (the keyword list, then the semantic list: side by
        side, not fused) and ``hybrid`` (one fused ranking). With *wait*, notes not embedded
        yet are embedded first. Where: project, campaign, attempt_id (omit all three: all the
        work the *viewer* may see). Without search words, a project or an attempt gives its
        recent notes; the broader scopes ask for a query. Filters (every mode): kind, tags
        (+ tag_mode "any"/"all"), author, model, builds_on,
        created_after/created_before/updated_after/updated_before.
        """
        request = SearchRequest.make(query, mode=mode, limit=limit, wait=wait, filters=filters)
        with self._backend.searching(request) as (records, engines):
            f = self._scope(records, request.filters, viewer)
            hidden = self._hidden(records, viewer)
            if request.lists_recent(f):
                return mark_superseded(records, records.cards(limit=request.limit, offset=0, filters=f), hidden)
            cards = mark_superseded(records, run_search(request, f, engines), hidden)
            if request.mode != "both":
                return successors_first(cards)
            # Two lists side by side: each is ranked on its own.
            return [
                c for mode in ("keyword", "semantic") for c in successors_first([c for c in cards if c.mode == mode])
            ]

    # -- viewer scoping --------------------------------------------------------

    @staticmethod
    def _hidden(records: Snapshot, viewer: Viewer | None) -> tuple[str, ...]:
        """The private projects *viewer* may not see (none for the owner: no lookup)."""
        return viewer_hidden_projects(viewer, records.private_projects)

    @staticmethod
    def _scope(records: Snapshot, filters: Filters, viewer: Viewer | None) -> Filters:
        """*filters* scoped to what *viewer* may see (:meth:`Filters.scoped`)."""
        return filters.scoped(
            viewer, private_projects=records.private_projects, campaign_members=records.campaign_members
        )

    def _check_visible(self, records: Snapshot, note_id: str, viewer: Viewer | None) -> None:
        """NotFoundError when the note (live or deleted) is in a project *viewer* may not see."""
        hidden = self._hidden(records, viewer)
        if hidden and records.note_project(note_id) in hidden:
            raise NotFoundError(f"no note {note_id}")

    def _visible_attempt(self, records: Snapshot, attempt_id: str, viewer: Viewer | None) -> Attempt:
        attempt = records.attempt(attempt_id)
        if attempt is None or attempt.project in self._hidden(records, viewer):
            raise NotFoundError(f"no attempt {attempt_id}")
        return attempt

    @service_call
    def hidden_projects(self, viewer: Viewer | None) -> tuple[str, ...]:
        """The private projects *viewer* may not see (their names)."""
        with self._backend.snapshot() as records:
            return self._hidden(records, viewer)

    # -- attempts --------------------------------------------------------------

    @service_call
    def start_attempt(
        self, project: str, *, author: str, model: str | None = None, campaign: str | None = None
    ) -> Attempt:
        """Start a run on *project* (a name, kept as its slug); notes written with its id
        land on it and can change until :meth:`end_attempt`."""
        project = self._project(project)
        campaign = self._project(campaign, "campaign") if campaign is not None else None
        who = self._label(author, "author", AUTHOR_MAX)
        if who is None:
            raise InvalidArgumentError("an attempt needs an author (an agent's or a person's name)")
        model = self._label(model, "model", MODEL_MAX)
        with self._backend.write_turn() as changes:
            while True:
                attempt_id = new_attempt_id()
                at = now_iso()
                if changes.insert_attempt(
                    attempt_id, project=project, campaign=campaign, author=who, model=model, at=at
                ):
                    break
            started = changes.attempt(attempt_id)
        assert started is not None
        return started

    @service_call
    def end_attempt(self, attempt_id: str, *, outcome: str, summary: str | bytes | None = None) -> Attempt:
        """End a running attempt with an outcome (succeeded, failed, abandoned, or another
        short word). A *summary* is written first, as a note of ``note_kind`` summary on it.
        Its notes are frozen from then on."""
        attempt_id = check_attempt_id(attempt_id)
        outcome = check_outcome(outcome)
        if self._redact != "off" and sensitive_spans(outcome):  # a mask is no outcome: "glpat-…" fits one
            raise InvalidArgumentError("an outcome is a word (succeeded, failed, ...), not a key or a token")
        text = self._kept(summary)[0] if summary is not None else None  # before any change
        with self._backend.write_turn() as changes:
            running = require_running(changes.lock_attempt(attempt_id, "update"), attempt_id)
            summary_id = None
            if text is not None:
                summary_id = changes.add_summary(titled_summary(text, running.project, outcome), running)
            changes.end_attempt(attempt_id, outcome=outcome, at=now_iso(), summary_id=summary_id)
            ended = changes.attempt(attempt_id)
        assert ended is not None
        return ended

    @service_call
    def get_attempt(self, attempt_id: str, *, viewer: Viewer | None = None) -> Attempt:
        """An attempt: who ran it on what, when, how it ended, how many notes it wrote."""
        attempt_id = check_attempt_id(attempt_id)
        with self._backend.snapshot() as records:
            return self._visible_attempt(records, attempt_id, viewer)

    @service_call
    def list_attempts(
        self,
        *,
        project: str | None = None,
        running: bool | None = None,
        limit: int = 50,
        viewer: Viewer | None = None,
    ) -> list[Attempt]:
        """Attempts, the most recently started first; optionally one project's, or only
        the running (or only the ended) ones."""
        check_limit(limit)
        name = check_project(project) if project is not None else None
        with self._backend.snapshot() as records:
            return records.attempts(project=name, running=running, hidden=self._hidden(records, viewer), limit=limit)

    @service_call
    def attempt_reads(self, attempt_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """The notes read while working on an attempt (get_note with working_attempt_id), oldest
        first: ``note_id``, ``title`` (None once the note is deleted) and ``at``. Notes in
        projects *viewer* may not see are left out."""
        attempt_id = check_attempt_id(attempt_id)
        with self._backend.snapshot() as records:
            self._visible_attempt(records, attempt_id, viewer)
            rows = records.reads(attempt_id)
            secret = records.notes_in(self._hidden(records, viewer), list({n for n, _t, _a in rows}))
            return [{"note_id": n, "title": t, "at": a} for n, t, a in rows if n not in secret]

    def _record_read(self, changes: WriteTurn, attempt_id: str, note_id: str, viewer: Viewer | None) -> None:
        """Note that *note_id* was read while working on an attempt. An attempt that has
        ended takes no more records: the read is served, not recorded."""
        attempt_id = check_attempt_id(attempt_id)
        attempt = changes.lock_attempt(attempt_id, "share")
        if attempt is None or attempt.project in self._hidden(changes, viewer):
            raise NotFoundError(f"no attempt {attempt_id}")
        if attempt.running:
            changes.record_read(attempt_id, note_id, now_iso())

    # -- projects --------------------------------------------------------------

    @service_call
    def set_project(
        self,
        project: str,
        *,
        private: bool | None = None,
        owner: str | None = None,
        campaign: str | None = None,
    ) -> dict[str, Any]:
        """Settings of a project: private (seen by its owner and administrators only), its
        owner, its campaign. Only what is given changes. Returns the project."""
        name = self._project(project)
        settings: dict[str, object] = {}
        if private is not None:
            if not isinstance(private, bool):
                raise InvalidArgumentError("private must be true or false")
            settings["private"] = private
        if owner is not None:
            settings["owner"] = self._label(owner, "owner", AUTHOR_MAX)
        if campaign is not None:
            settings["campaign"] = self._project(campaign, "campaign")
        with self._backend.write_turn() as changes:
            row = changes.project(name)
            _check_private_home(name, settings, row.private, row.owner)
            changes.update_project(name, settings, now_iso())
            return _project_dict(changes, name)

    @service_call
    def get_project(self, project: str, *, viewer: Viewer | None = None) -> dict[str, Any]:
        """A project: its settings and how many attempts and notes it has."""
        name = check_project(project)
        with self._backend.snapshot() as records:
            return self._visible_project(records, name, viewer)

    @staticmethod
    def _visible_project(records: Snapshot, name: str, viewer: Viewer | None) -> dict[str, Any]:
        row = records.project(name)
        if not (row.known or row.attempts) or not may_see(viewer, private=row.private, owner=row.owner):
            raise NotFoundError(f"no project {name}")
        return _project_dict(records, name, row)

    @service_call
    def list_projects(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every project *viewer* may see (settings, counts, last activity), most recently active first."""
        with self._backend.snapshot() as records:
            hidden = set(self._hidden(records, viewer))
            out = [
                {**_project_dict(records, name), "last_activity": last}
                for name, last in records.project_activity()
                if name not in hidden
            ]
        out.sort(key=lambda p: (p["last_activity"] or "", p["name"]), reverse=True)
        return out

    # -- links and briefs ------------------------------------------------------

    @service_call
    def links(self, note_id: str, *, depth: int = 1, viewer: Viewer | None = None) -> dict[str, Any]:
        """What a note builds on and what builds on it, *depth* steps out (1–10), and its
        supersedes chain both ways (what it corrects, the later notes correcting it), to its
        ends. A note met again on a path is listed with ``"again": true`` and not followed, so
        loops end."""
        note_id, depth = check_link_args(note_id, depth)
        with self._backend.snapshot() as records:
            hidden = set(self._hidden(records, viewer))

            def node(ref: str) -> Node | None:
                """A link end: a note, an attempt, or an id nothing answers to (None: hidden)."""
                if is_attempt_id(ref):
                    got = records.attempt_link(ref)
                    if got is None:
                        return {"id": ref, "missing": True}
                    if got[0] in hidden:
                        return None
                    return {"id": ref, "title": f"attempt on {got[0]} by {got[1]}", "kind": "attempt"}
                found = records.linked_note(ref)
                if found is None:
                    return {"id": ref, "missing": True}
                if found.project is not None and found.project in hidden:
                    return None
                return {"id": found.id, "title": found.title, "kind": found.kind}

            def neighbours(ref: str, up: bool) -> Iterator[Node]:
                # Looked up one at a time, as far as the tree takes them (see link_tree).
                if up:
                    # An id the note's own text names: one the viewer may not see is "missing",
                    # as an id nothing answers to is, so the two are never told apart.
                    return (node(r) or {"id": r, "missing": True} for r in records.builds_on(ref))
                return (end for r in records.built_on_by(ref) if (end := node(r)) is not None)

            def corrections(ref: str, up: bool) -> Iterator[Node]:
                if up:  # as builds_on: an id the viewer may not see is "missing"
                    return (node(r) or {"id": r, "missing": True} for r in records.supersedes(ref))
                later = visible_successors(records, [ref], tuple(hidden)).get(ref, [])
                return (end for r in later if (end := node(r)) is not None)

            return supersede_chain(link_tree(note_id, depth, node, neighbours), corrections)

    @service_call
    def similar_notes(
        self, text: str, *, exclude: Iterable[str] = (), limit: int = 3, viewer: Viewer | None = None
    ) -> list[dict[str, Any]]:
        """The notes *viewer* may see that say much what *text* says, most alike first: by their
        words, and by meaning when the store's model is loaded already (see services/similar_notes.py).
        What ``add_note`` answers with, so that an agent updates a note instead of repeating it."""
        from .similar_notes import similar_notes

        if not isinstance(text, str):
            raise InvalidArgumentError(f"text must be a string, not {type(text).__name__}")
        limit = whole_number("limit", limit, 1, 20)

        def search(query: str, mode: str, wanted: int) -> list[Card]:
            return self.search_notes(query, limit=wanted, mode=mode, viewer=viewer)

        def read(ids: list[str]) -> dict[str, str]:
            # The candidates' texts in one read (a folder store checks the folder once, not per note).
            def body(records: Snapshot, load: NoteLoader) -> dict[str, str]:
                hidden = self._hidden(records, viewer)
                texts = {}
                for nid in ids:
                    if hidden and records.note_project(nid) in hidden:
                        continue
                    try:
                        note = load(nid, None)
                    except NotFoundError:
                        continue
                    if hidden and records.note_project(nid) in hidden:  # a load that caught up may have moved it
                        continue
                    texts[nid] = f"{note.title}\n{note.body}"
                return texts

            return self._backend.reading_note(body)

        meaning = self._backend.embedders.made is not None
        return similar_notes(search, read, text, exclude=exclude, limit=limit, meaning=meaning)

    @service_call
    def brief(self, project: str, *, recent: int = 10, viewer: Viewer | None = None) -> dict[str, Any]:
        """The one thing to read first on a project: its newest digest (a note of kind
        ``digest`` citing what it pulls together in builds_on), the recent stream, and the
        notes the digest does not cover yet."""
        name = check_project(project)
        whole_number("recent", recent, 1, MAX_RECENT)
        with self._backend.snapshot() as records:
            info = self._visible_project(records, name, viewer)
            scope = self._scope(records, Filters(project=name), viewer)
            hidden = self._hidden(records, viewer)

            def marked(limit: int, offset: int, f: Filters) -> list[Card]:
                return mark_superseded(records, records.cards(limit=limit, offset=offset, filters=f), hidden)

            return make_brief(info, scope, recent, marked)

    @service_call
    def stale(
        self,
        *,
        older_than: str = STALE_AGE,
        project: str | None = None,
        limit: int = 20,
        viewer: Viewer | None = None,
    ) -> list[Card]:
        """Open blockers and actions not updated for *older_than* (``14d``, ``2w``, a date: as the
        date filters read it) that no later note the *viewer* may see builds on or supersedes,
        most recently updated first: the work left hanging (see services/stale.py)."""
        cut_off = parse_when(older_than, name="older_than")
        limit = check_limit(limit)
        with self._backend.snapshot() as records:
            f = Filters(kind=list(OPEN_KINDS), updated_before=cut_off, project=project)
            return stale_cards(records, self._scope(records, f, viewer), self._hidden(records, viewer), limit)

    # -- the collection at a glance --------------------------------------------

    @service_call
    def list_notes(
        self, *, limit: int = 20, offset: int = 0, viewer: Viewer | None = None, **filters: Any
    ) -> list[Card]:
        """Notes, most recently updated first, as cards (filters: project, campaign, attempt_id,
        kind, tags + tag_mode, author, model, builds_on, created/updated after/before)."""
        f = Filters.from_kwargs(filters)
        with self._backend.snapshot() as records:
            cards = records.cards(limit=limit, offset=offset, filters=self._scope(records, f, viewer))
            return mark_superseded(records, cards, self._hidden(records, viewer))

    @service_call
    def summary(self, *, recent: int = 5, viewer: Viewer | None = None) -> dict[str, Any]:
        """Counts by kind, the most recent notes, and what could not be indexed (the last
        only for the store's owner and administrators: file paths say what a private note is)."""
        with self._backend.snapshot() as records:
            scope = Filters(hidden_projects=self._hidden(records, viewer))
            return {
                "total_notes": records.count(scope),
                "by_kind": [{"kind": k, "count": c} for k, c in records.kind_counts(scope)],
                "recent_notes": [c.to_dict() for c in records.cards(limit=max(1, recent), offset=0, filters=scope)],
                "problems": records.problems() if viewer is None or viewer.admin else [],
            }

    @service_call
    def note_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Each note's tags and summary (with its id and title), most recently updated first:
        the whole collection at a glance (`notewell tags --notes`)."""
        with self._backend.snapshot() as records:
            scope = Filters(hidden_projects=self._hidden(records, viewer))
            return [
                {"id": nid, "title": title, "tags": tags, "summary": summary}
                for nid, title, tags, summary in records.tags_and_summaries(scope)
            ]

    @service_call
    def list_tags(self, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every tag with the number of notes carrying it, most used first."""
        with self._backend.snapshot() as records:
            scope = Filters(hidden_projects=self._hidden(records, viewer))
            return [{"tag": t, "count": c} for t, c in records.tag_counts(scope)]

    @service_call
    def history(self, note_id: str, *, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        """Every revision of a note, oldest first, and whether its text was kept."""
        note_id = check_note_id(note_id)
        with self._backend.snapshot() as records:
            self._check_visible(records, note_id, viewer)
            live = records.live_revision(note_id)
            rows = records.revisions(note_id, live)
            deleted = records.deleted_at(note_id) if live is None else None
        if live is None and not rows:
            raise NotFoundError(f"no note {note_id}")
        out = [
            {
                "revision": r.revision,
                "op": r.op,
                "at": r.at,
                "author": r.author,
                "sha256": r.sha256,
                "size": r.size,
                "current": r.revision == live,
                "kept": r.kept,
            }
            for r in rows
        ]
        if deleted is not None:
            # The deletion, as the last entry: the revision it removed, its text still kept.
            last = out[-1] if out else {"revision": 0, "kept": False, "size": None}
            out.append(
                {
                    "revision": last["revision"],
                    "op": "delete",
                    "at": deleted,
                    "author": None,
                    "sha256": None,
                    "size": None,
                    "current": False,
                    "kept": last["kept"],
                }
            )
        return out


def _check_not_itself(note_id: str, text: str) -> None:
    """A note may not name itself in supersedes (a file written so is indexed without it)."""
    if note_id in (parse_note(text).header or {}).get("supersedes", ()):
        raise InvalidNoteError(f"{note_id} cannot supersede itself: name the earlier notes it corrects")


def _check_base(note_id: str, base: str | None, base_revision: int | None, current: str) -> None:
    """ConflictError when the note's *current* text (read inside the write) is no longer the
    *base* text of *base_revision* that an edit was written from."""
    if base is not None and current != base:
        raise ConflictError(
            f"{note_id} changed since revision {base_revision}: read it again and merge your edit into it"
        )


def _check_private_home(name: str, settings: dict[str, object], private: bool, owner: str | None) -> None:
    """A private project lives in its owner's namespace (``alice:vault``, owned by alice).

    Under a shared name, anyone trying that name to start work would be told it is taken
    by a project they may not see; in a namespace, everyone but its holder is refused alike,
    whether the project exists or not. Fills in the owner from the namespace when none is set."""
    if not settings.get("private", private) or not {"private", "owner"} & settings.keys():
        return  # not private, or only its campaign changes
    space = project_namespace(name)
    if space is None and private:
        return  # made private under a shared name before namespaces: its settings may still change
    if space is None:
        raise InvalidArgumentError(
            f"a private project is named in its owner's namespace, such as 'alice:{name}': "
            f"under the shared name {name!r} anyone who tries it would learn that it exists"
        )
    given = settings.get("owner", owner)
    if given is None:
        settings["owner"] = space
    elif handle_namespace(str(given)) != space:
        raise InvalidArgumentError(f"project {name} is in {space}'s namespace: its owner is {space}, not {given}")


def _project_dict(records: Snapshot, name: str, row: Any = None) -> dict[str, Any]:
    row = row or records.project(name)
    return {
        "name": name,
        "private": row.private,
        "owner": row.owner,
        "campaign": row.campaign,
        "attempts": row.attempts,
        "notes": row.notes,
    }
