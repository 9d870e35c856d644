"""The store as the servers offer it: one caller per request, permissions, limits, JSON shapes.

The MCP tools and the HTTP endpoints both call :class:`ServerAPI`, so a query gives the
same cards everywhere (and the same cards as :meth:`notewell.services.service.NoteService.search_notes`). Rules:

* Reads: a caller without a token sees public work only (a private server, ``private=True``,
  answers ``unauthorized`` instead); a token sees what its name may see (its own private
  projects); an owner token, and the local caller (stdio MCP, the CLI), see everything.
* Writes need a token that is not read-only. What a token writes carries its name as
  author; a note is edited, tagged or deleted only by its attempt's author (or, for a
  note on no attempt, its author) or an owner; an attempt is written on and ended only by
  its author or an owner.
* Limits: queries up to ``MAX_QUERY_CHARS``, ``limit`` up to ``MAX_LIMIT``, and a rate of
  writes per token (a token bucket) that answers ``rate_limited`` with a retry time.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import (
    ForbiddenError,
    FrozenError,
    InvalidArgumentError,
    InvalidQueryError,
    NotFoundError,
    RateLimitedError,
    UnauthorizedError,
)
from ..model.access_tokens import Token, Tokens
from ..model.attempt import check_project, project_namespace, require_unfrozen
from ..model.ids import is_note_id
from ..model.note import Note
from ..model.numbers import whole_number
from ..model.visibility import Viewer, handle_namespace
from ..search.filters import FILTER_NAMES
from ..search.request import MAX_LIMIT as STORE_MAX_LIMIT
from ..search.request import MAX_REMOTE_LIMIT, MAX_REMOTE_OFFSET
from .contract import NoteStore, Progress
from .reports import Report, build_report
from .searching import search

__all__ = [
    "MAX_LIMIT",
    "MAX_OFFSET",
    "MAX_QUERY_CHARS",
    "REPORT_BURST",
    "REPORT_RATE",
    "ServerAPI",
    "Caller",
    "WriteLimiter",
    "caller_from_header",
]

MAX_QUERY_CHARS = 1000
MAX_LIMIT = MAX_REMOTE_LIMIT
MAX_READS = 1000  # reads of one attempt an answer over the network lists (the newest)
MAX_OFFSET = MAX_REMOTE_OFFSET
REPORT_RATE = 0.2  # reports a second a remote caller may ask for, on average
REPORT_BURST = 10  # ... and at once
MAX_NOTE_TAGS = 500  # notes listed with their tags and summary in one answer
_FILTERS = FILTER_NAMES  # the search layer's filters, one list


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: a token, nobody (anonymous), or the local owner (``local=True``)."""

    token: Token | None = None
    local: bool = False

    @property
    def viewer(self) -> Viewer | None:
        if self.local:
            return None
        return self.token.viewer if self.token else Viewer()

    @property
    def handle(self) -> str | None:
        return self.token.name if self.token else None

    @property
    def owner(self) -> bool:
        return self.local or bool(self.token and self.token.owner)


def caller_from_header(tokens: Tokens | None, header: str | None) -> Caller:
    """The caller an ``Authorization`` header names: none (anonymous), or a valid bearer token.
    A token that is not valid is refused, never read as anonymous."""
    if header is None:
        return Caller()
    scheme, _, secret = header.partition(" ")
    token = tokens.verify(secret.strip()) if tokens is not None and scheme.lower() == "bearer" else None
    if token is None:
        raise UnauthorizedError("the bearer token is not valid (notewell token create NAME makes one)")
    if token.expired():
        raise UnauthorizedError(f"the token {token.name!r} expired at {token.expires_at}")
    return Caller(token=token)


class WriteLimiter:
    """A token bucket per caller: *rate* calls a second on average, bursts of *burst*; *what*
    names the calls in the refusal."""

    def __init__(self, rate: float = 20.0, burst: int = 60, *, what: str = "writes") -> None:
        if rate <= 0 or burst < 1:
            raise InvalidArgumentError("the write rate and burst must be positive")
        self.rate, self.burst, self.what = rate, burst, what
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        now = time.monotonic()
        with self._lock:
            level, at = self._buckets.get(key, (float(self.burst), now))
            level = min(float(self.burst), level + (now - at) * self.rate)
            if level < 1.0:
                wait = (1.0 - level) / self.rate
                self._buckets[key] = (level, now)
                raise RateLimitedError(f"too many {self.what} from {key!r}: retry in {wait:.1f} s", retry_after=wait)
            self._buckets[key] = (level - 1.0, now)

    def check(self, key: str, count: int) -> None:
        """Refuse, spending nothing, when *key* may not make *count* writes now: a change of
        several notes is then refused whole instead of stopping part-way."""
        if count <= 1:
            return
        if count > self.burst:
            raise InvalidArgumentError(f"{count} writes at once: a caller may make at most {self.burst} at once")
        now = time.monotonic()
        with self._lock:
            level, at = self._buckets.get(key, (float(self.burst), now))
        level = min(float(self.burst), level + (now - at) * self.rate)
        if level < count:
            wait = (count - level) / self.rate
            raise RateLimitedError(f"too many writes from {key!r}: {count} at once, retry in {wait:.1f} s", wait)


class Promotable(Protocol):
    """What promoting needs of a working notebook (:class:`notewell.agents.notebook.Notebook`)."""

    def promote(self, store: NoteStore, ids: list[str], *, author: str | None = None) -> list[dict[str, Any]]: ...


class ServerAPI:
    """The store's operations for remote callers (HTTP, MCP), with their permissions."""

    def __init__(
        self,
        store: NoteStore,
        *,
        private: bool = False,
        limiter: WriteLimiter | None = None,
        report_limiter: WriteLimiter | None = None,
    ) -> None:
        self.store = store
        self.private = private
        self.limiter = limiter or WriteLimiter()
        # A report or a stale list reads every note the caller may see (0.9 s and up to 0.33 s of CPU at
        # 20,000 notes): a remote caller, anonymous ones together, may ask for a few at once and then
        # one every 5 s.
        self.report_limiter = report_limiter or WriteLimiter(REPORT_RATE, REPORT_BURST, what="store-wide reads")

    # -- checks ---------------------------------------------------------------

    def _reader(self, caller: Caller) -> Viewer | None:
        if self.private and not caller.local and caller.token is None:
            raise UnauthorizedError("this server answers only requests with a token")
        return caller.viewer

    def _writer(self, caller: Caller) -> str | None:
        """The author a write is recorded under; checks the caller may write at all."""
        if caller.local:
            return None
        if caller.token is None:
            raise UnauthorizedError("writing needs a token: notewell token create NAME")
        if caller.token.read_only:
            raise ForbiddenError(f"token {caller.token.name!r} is read-only")
        return caller.token.name

    def _scan(self, caller: Caller) -> None:
        """Count a read of the whole store (a report, stale work) against a remote caller's rate."""
        if not caller.local:
            self.report_limiter.take(caller.handle or "anonymous callers")

    def _spend(self, caller: Caller) -> None:
        """Count a write against the caller's rate, once it is checked and about to happen."""
        if caller.token is not None and not caller.local:
            self.limiter.take(caller.token.name)

    def _may_change(self, caller: Caller, note: Note) -> None:
        if caller.owner:
            return
        attempt_author = (note.attempt or {}).get("author")
        responsible = attempt_author if note.attempt_id else note.author
        if responsible is None or responsible != caller.handle:
            whose = f"attempt {note.attempt_id}'s author" if note.attempt_id else "its author"
            raise ForbiddenError(f"only {whose} or the store's owner may change note {note.id}")

    def _may_use_attempt(self, caller: Caller, attempt_id: str) -> None:
        attempt = self.store.get_attempt(attempt_id, viewer=caller.viewer)
        if not caller.owner and attempt.author != caller.handle:
            raise ForbiddenError(f"attempt {attempt_id} is {attempt.author}'s: only they or the owner may use it")

    @staticmethod
    def _limit(limit: Any, default: int, caller: Caller | None = None) -> int:
        if limit is None:
            return default
        # The local owner has the store's own bound; a caller over the network the servers'.
        return whole_number("limit", limit, 1, STORE_MAX_LIMIT if caller is not None and caller.local else MAX_LIMIT)

    def _author(self, caller: Caller, author: str | None) -> str | None:
        """Who a write is recorded under: a token's name (checked as a writer), or for the
        local owner the *author* it names."""
        who = self._writer(caller)
        if caller.local:
            return author
        if author is not None and author != who:
            raise ForbiddenError(f"token {who!r} writes under its own name, not {author!r}")
        return who

    @staticmethod
    def _filters(params: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(params) - set(_FILTERS))
        if unknown:
            raise InvalidArgumentError(f"unknown filter(s): {', '.join(unknown)}; known: {', '.join(_FILTERS)}")
        return {k: v for k, v in params.items() if v is not None and v != []}

    # -- reads ----------------------------------------------------------------

    def search_notes(
        self,
        caller: Caller,
        query: str,
        *,
        mode: str = "keyword",
        limit: int | None = None,
        wait: bool = False,
        **filters: Any,
    ) -> dict[str, Any]:
        """Cards for *query* (see Store.search_notes), and how many notes wait to be embedded."""
        viewer = self._reader(caller)
        if not isinstance(query, str):
            raise InvalidQueryError("query must be text")
        if len(query) > MAX_QUERY_CHARS and not caller.local:
            raise InvalidQueryError(f"query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
        if wait and not caller.local:
            # Embedding the backlog holds the store for everyone: a write-capable caller's call.
            self._writer(caller)
            self._spend(caller)
        answer = search(
            self.store,
            query,
            mode=mode,
            limit=self._limit(limit, 10, caller),
            wait=bool(wait),
            viewer=viewer,
            **self._filters(filters),
        )
        out: dict[str, Any] = {"query": query, "mode": mode, "cards": [c.to_dict() for c in answer.cards]}
        if mode != "keyword" and answer.not_embedded is not None:
            out["not_embedded"] = answer.not_embedded
        return out

    def get_note(
        self, caller: Caller, note_id: str, *, working_attempt_id: str | None = None, revision: int | None = None
    ) -> dict[str, Any]:
        """The whole note; with *working_attempt_id* (the caller's running attempt) the read is recorded."""
        viewer = self._reader(caller)
        if working_attempt_id is not None:
            # Recording the read writes to the attempt's history: a write, checked and counted as one.
            self._writer(caller)
            self._may_use_attempt(caller, working_attempt_id)
            self._spend(caller)
        note_id = self._ref(caller, note_id)
        note = self.store.get_note(note_id, revision=revision, viewer=viewer, working_attempt_id=working_attempt_id)
        return note.to_dict()

    def list_notes(
        self, caller: Caller, *, limit: int | None = None, offset: int = 0, **filters: Any
    ) -> dict[str, Any]:
        viewer = self._reader(caller)
        if not caller.local:
            whole_number("offset", offset, 0, MAX_OFFSET)  # the store checks its own, deeper bound
        cards = self.store.list_notes(
            limit=self._limit(limit, 20, caller), offset=offset, viewer=viewer, **self._filters(filters)
        )
        return {"cards": [c.to_dict() for c in cards]}

    def notes_summary(self, caller: Caller, *, recent: int = 5) -> dict[str, Any]:
        return self.store.summary(recent=recent, viewer=self._reader(caller))

    def brief(self, caller: Caller, project: str, *, recent: int = 10) -> dict[str, Any]:
        return self.store.brief(project, recent=recent, viewer=self._reader(caller))

    def stale(
        self, caller: Caller, *, older_than: str = "14d", project: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """Open blockers and actions left hanging: ``{"older_than", "cards"}``."""
        viewer = self._reader(caller)
        self._scan(caller)
        cards = self.store.stale(
            older_than=older_than, project=project, limit=self._limit(limit, 20, caller), viewer=viewer
        )
        return {"older_than": older_than, "cards": [c.to_dict() for c in cards]}

    def history(self, caller: Caller, note_id: str) -> dict[str, Any]:
        """Every revision of a note, oldest first."""
        return {"revisions": self.store.history(self._ref(caller, note_id), viewer=self._reader(caller))}

    def resolve(self, caller: Caller, ref: str) -> str:
        """A note id from an id, a path inside the store, or a file name one note the caller
        may see has (``go-tips.md``); a hidden note's path is not found, as one nobody has."""
        return self.store.resolve(ref, viewer=self._reader(caller))

    def _ref(self, caller: Caller, ref: str) -> str:
        """*ref* as a note id: a path or file name (``….md``) is resolved for the caller; an id
        is left to the store to check."""
        if isinstance(ref, str) and ref.endswith(".md") and not is_note_id(ref):
            if not caller.local and (ref.startswith(("/", "\\")) or ":" in ref[:3]):
                self._reader(caller)
                raise NotFoundError(f"no note at {ref}")  # a caller over the network names paths in the store
            return self.resolve(caller, ref)
        return ref

    def get_project(self, caller: Caller, project: str) -> dict[str, Any]:
        return self.store.get_project(project, viewer=self._reader(caller))

    def attempt_reads(self, caller: Caller, attempt_id: str) -> dict[str, Any]:
        """The notes read on an attempt, oldest first; over the network the newest MAX_READS of
        them, with their total."""
        reads = self.store.attempt_reads(attempt_id, viewer=self._reader(caller))
        shown = reads if caller.local else reads[-MAX_READS:]
        return {"reads": shown, "total": len(reads)}

    def links(self, caller: Caller, note_id: str, *, depth: int = 1) -> dict[str, Any]:
        return self.store.links(self._ref(caller, note_id), depth=depth, viewer=self._reader(caller))

    def list_tags(self, caller: Caller, *, notes: bool = False, tag: str | None = None) -> dict[str, Any]:
        """Every tag with its count; with *notes*, each note's tags and summary (only *tag*'s notes if given)."""
        viewer = self._reader(caller)
        out: dict[str, Any] = {"tags": self.store.list_tags(viewer=viewer)}
        if notes:
            rows = self.store.note_tags(viewer=viewer)
            if tag is not None:
                rows = [r for r in rows if tag in r["tags"]]
            out["notes"] = rows if caller.local else rows[:MAX_NOTE_TAGS]
        return out

    def list_projects(self, caller: Caller) -> dict[str, Any]:
        return {"projects": self.store.list_projects(viewer=self._reader(caller))}

    def list_attempts(
        self, caller: Caller, project: str | None, *, limit: int | None = None, running: bool | None = None
    ) -> dict[str, Any]:
        attempts = self.store.list_attempts(
            project=project, running=running, limit=self._limit(limit, 50, caller), viewer=self._reader(caller)
        )
        return {"attempts": [a.to_dict() for a in attempts]}

    def get_attempt(self, caller: Caller, attempt_id: str) -> dict[str, Any]:
        return self.store.get_attempt(attempt_id, viewer=self._reader(caller)).to_dict()

    def report(
        self,
        caller: Caller,
        *,
        project: str | None = None,
        since: str | None = None,
        until: str | None = None,
        tz: str | None = None,
    ) -> Report:
        """The progress report of *project* (None: every project) from *since* to *until*, made
        of what the caller may see (services/reports.py)."""
        viewer = self._reader(caller)
        self._scan(caller)
        return build_report(self.store, project=project, since=since, until=until, tz=tz, viewer=viewer)

    # -- writes ---------------------------------------------------------------

    def promote_notebook(self, caller: Caller, notebook: Promotable, ids: list[str]) -> dict[str, Any]:
        """Accepted items of *notebook* (facts, ruled-out attempts, notes) made durable notes
        in the store, written as the caller (a write, checked and counted as one)."""
        author = self._writer(caller)
        self._spend(caller)
        return {"promoted": notebook.promote(self.store, ids, author=author)}

    def add_note(
        self,
        caller: Caller,
        text: str,
        *,
        attempt_id: str | None = None,
        model: str | None = None,
        author: str | None = None,
    ) -> dict[str, Any]:
        """A new note, on the caller's running attempt if given; its author is the token's name
        (the local owner names one)."""
        author = self._author(caller, author)
        if attempt_id is not None:
            self._may_use_attempt(caller, attempt_id)
        self._spend(caller)
        note = self.store.add_note(text, author=author, model=model, attempt=attempt_id)
        out = note.to_dict()
        # Never blocks or merges: points the writer at notes to update instead of repeating them.
        out["similar"] = self.store.similar_notes(note.text, exclude=[note.id], viewer=self._reader(caller))
        return out

    def edit_note(
        self,
        caller: Caller,
        note_id: str,
        text: str,
        *,
        author: str | None = None,
        keep_header: bool = False,
        base_revision: int | None = None,
    ) -> dict[str, Any]:
        """Replace a note's text (with *keep_header*: its body); with *base_revision*, a conflict
        when the text changed since that revision (see :meth:`notewell.services.service.NoteService.edit_note`)."""
        note_id = self._ref(caller, note_id)
        author = self._author(caller, author)
        if not isinstance(keep_header, bool):
            raise InvalidArgumentError("keep_header must be true or false")
        self._may_change(caller, self.store.get_note(note_id, viewer=caller.viewer))
        self._spend(caller)
        note = self.store.edit_note(note_id, text, author=author, keep_header=keep_header, base_revision=base_revision)
        return note.to_dict()

    def edit_refusal(self, caller: Caller, note_id: str) -> str | None:
        """Why *caller* may not edit the note (None: they may), by the checks :meth:`edit_note`
        makes, so that a page offers Edit only where saving will work."""
        note_id = self._ref(caller, note_id)
        note = self.store.get_note(note_id, viewer=self._reader(caller))
        try:
            self._writer(caller)
            self._may_change(caller, note)
            if note.attempt_id:
                require_unfrozen(note.id, self.store.get_attempt(note.attempt_id, viewer=caller.viewer))
        except (UnauthorizedError, ForbiddenError, FrozenError) as exc:
            return exc.message
        return None

    def check_writes(self, caller: Caller, count: int) -> None:
        """The error *caller* would meet making *count* writes now (none spent): checked before a
        change of several notes (a memory directory's rename), so that it happens whole or not at all."""
        self._writer(caller)
        if caller.token is not None and not caller.local:
            self.limiter.check(caller.token.name, count)

    def delete_note(self, caller: Caller, note_id: str) -> dict[str, Any]:
        note_id = self._ref(caller, note_id)
        self._writer(caller)
        self._may_change(caller, self.store.get_note(note_id, viewer=caller.viewer))
        self._spend(caller)
        return self.store.delete_note(note_id)

    def add_tag(self, caller: Caller, note_id: str, tags: list[str], *, author: str | None = None) -> dict[str, Any]:
        note_id = self._ref(caller, note_id)
        author = self._author(caller, author)
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
            raise InvalidArgumentError("tags must be a non-empty list of words")
        self._may_change(caller, self.store.get_note(note_id, viewer=caller.viewer))
        self._spend(caller)
        return self.store.add_tag(note_id, *tags, author=author).to_dict()

    def set_summary(self, caller: Caller, note_id: str, summary: str, *, author: str | None = None) -> dict[str, Any]:
        """Write ``summary:`` into a note's header, changing nothing else."""
        note_id = self._ref(caller, note_id)
        author = self._author(caller, author)
        self._may_change(caller, self.store.get_note(note_id, viewer=caller.viewer))
        self._spend(caller)
        return self.store.set_summary(note_id, summary, author=author).to_dict()

    def set_project(
        self,
        caller: Caller,
        project: str,
        *,
        private: bool | None = None,
        owner: str | None = None,
        campaign: str | None = None,
    ) -> dict[str, Any]:
        """Change a project's settings: the store's owner only (who may see what is theirs to say)."""
        self._writer(caller)
        if not caller.owner:
            raise ForbiddenError("only the store's owner may change a project's settings")
        self._spend(caller)
        return self.store.set_project(project, private=private, owner=owner, campaign=campaign)

    def embed_pending(
        self, caller: Caller, *, limit: int | None = None, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Embed the notes waiting for it (the local owner: it holds the store while it runs)."""
        if not caller.local:
            raise ForbiddenError("embedding the backlog is the local owner's (notewell embed)")
        return self.store.embed_pending(limit=limit, progress=progress)

    def start_attempt(
        self,
        caller: Caller,
        project: str,
        *,
        model: str | None = None,
        campaign: str | None = None,
        author: str | None = None,
    ) -> dict[str, Any]:
        """Start a run on *project*: its author is the token's name (a local caller names one)."""
        who = self._writer(caller)
        if who is None:
            who = author or os.environ.get("USER") or "owner"
        name = check_project(project)
        if not caller.owner:
            space = project_namespace(name)
            if space is not None and space != handle_namespace(caller.handle):
                # Asked the same whether the project exists or not, private or not: the answer
                # tells nobody what is there.
                raise ForbiddenError(f"project {name} is in {space}'s namespace: only {space} starts work there")
            if name in self.store.hidden_projects(caller.viewer):
                # Only a project made private before namespaces can be here.
                raise ForbiddenError(f"project {name!r} is private")
        self._spend(caller)
        return self.store.start_attempt(project, author=who, model=model, campaign=campaign).to_dict()

    def end_attempt(
        self, caller: Caller, attempt_id: str, *, outcome: str, summary: str | None = None
    ) -> dict[str, Any]:
        self._writer(caller)
        self._may_use_attempt(caller, attempt_id)
        self._spend(caller)
        return self.store.end_attempt(attempt_id, outcome=outcome, summary=summary).to_dict()
