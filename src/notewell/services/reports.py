"""Progress reports: what a window of time's notes say was done, what is still open, what was
decided and what was ruled out, built from the notes alone (no language model).

``build_report(store, since="7d", project=...)`` reads through the :class:`NoteStore` calls a
viewer is held to (``list_notes``, ``list_attempts``, ``get_note``), so a viewer's report is
made of the work they may see and nothing else: hidden notes are neither listed, counted nor
let close a blocker. Everything is sorted on values the notes hold (time, then id), and no
clock is read when *until* is given, so the same notes and the same dates give the same report.

A note belongs to the window by when it was written (``created_at``): an edit made later does
not move it, so a report run again for the same dates lists the same notes.

A note some later note supersedes (names in its header's ``supersedes``) before *until* is no
longer what the work says: it is closed if it was open, left out of the other sections, and,
when a correction of it was written in the window, listed under Superseded with those
corrections. Corrections are read from the cards' ``superseded_by``, which the store marks for
the viewer alone, so a correction the viewer may not see changes nothing and a corrected note
the viewer may not see is never named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError
from ..model.attempt import Attempt, check_project, titled_summary_title
from ..model.note import Card
from ..model.open_work import CLOSED_TAGS, OPEN_KINDS
from ..model.timestamps import now_iso, parse_when, time_zone
from ..model.visibility import Viewer
from ..search.request import MAX_LIMIT
from .contract import NoteStore
from .paging import Bound, newest_first

__all__ = [
    "CLOSED_TAGS",
    "DECISION_KINDS",
    "DONE_KINDS",
    "OPEN_KINDS",
    "RULED_OUT_KINDS",
    "Report",
    "ReportLine",
    "SupersededLine",
    "build_report",
    "report_window",
]

# Which header kinds each section takes (docs/notes.md, the NoteTool chapter's types).
DONE_KINDS = ("conclusion", "finding", "task_state")
DECISION_KINDS = ("decision",)
RULED_OUT_KINDS = ("dead_end",)
# OPEN_KINDS and CLOSED_TAGS: open work's, as the session-start briefing and stale read it.
_FAILED = ("failed", "abandoned")
_PAGE = MAX_LIMIT
_TITLE_MAX = 200  # a title's most characters (docs/notes.md)


@dataclass(frozen=True, slots=True)
class ReportLine:
    """One line of a report: the note (or attempt) it cites, and what the line says of it.

    *ref* is a note id, or an attempt id for an attempt's line; *note_id* is the note the
    line cites (an attempt's summary note, when it has one)."""

    ref: str
    title: str
    date: str  # when it was written (an attempt: when it ended), ISO 8601 UTC
    kind: str | None
    project: str | None
    author: str | None
    note_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class SupersededLine(ReportLine):
    """A Superseded line: a note (its own line) and the later notes written in the window that
    correct it, as the reader may see them, oldest first."""

    superseded_by: tuple[ReportLine, ...] = ()


@dataclass(slots=True)
class Report:
    """A progress report: its window, its sections, and what else was written in the window."""

    project: str | None
    since: str
    until: str
    until_given: bool
    done: list[ReportLine] = field(default_factory=list)
    open: list[ReportLine] = field(default_factory=list)
    decisions: list[ReportLine] = field(default_factory=list)
    ruled_out: list[ReportLine] = field(default_factory=list)
    superseded: list[SupersededLine] = field(default_factory=list)  # corrected by notes of the window
    written: int = 0  # notes written in the window that the reader may see
    other_kinds: list[tuple[str, int]] = field(default_factory=list)  # the rest of them, by kind

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "other_kinds"}
        out["other_kinds"] = [{"kind": k, "count": c} for k, c in self.other_kinds]
        return out


def report_window(since: str | None, until: str | None, tz: str | None = None) -> tuple[str, str]:
    """The window a report covers, as two timestamps. *until* (default: now) is an ISO date or
    time or a relative form; *since* (default ``7d``) is too, a relative one counted back from
    *until*, so that a scheduled run with ``--until`` gives the same window every time."""
    if tz is not None and (not isinstance(tz, str) or not tz.strip()):
        raise InvalidArgumentError("tz: give a time zone name (Europe/Berlin, UTC) or an offset (+02:00)")
    if tz is not None:
        time_zone(tz)  # a bad zone is an error even where no date needs it
    end = parse_when(until, name="until", zone=tz) if until is not None else now_iso()
    end_moment = datetime.fromisoformat(end[:-1] + "+00:00")
    start = parse_when(since if since is not None else "7d", name="since", zone=tz, now=end_moment)
    if start >= end:
        raise InvalidArgumentError(f"since ({start[:19]}Z) must come before until ({end[:19]}Z)")
    return start, end


def _cards(store: NoteStore, viewer: Viewer | None, **filters: Any) -> Iterator[Card]:
    """Every card the filters give, each once, newest updated first (see :mod:`.paging`)."""
    mine = filters.pop("updated_before", None)

    def fetch(bound: Bound, offset: int) -> list[Card]:
        below = {"updated_before": bound} if bound is not None else {}
        return store.list_notes(limit=_PAGE, offset=offset, viewer=viewer, **filters, **below)

    return newest_first(fetch, _PAGE, mine)


# A line's fields: (ref, title, date, kind, project, author, note_id): what a pass over every note
# keeps of each note it may cite later (a tuple: cheaper to make and hold than a line or the card).
_Columns = tuple[str, str, str, str | None, str | None, str | None, str]


def _columns(card: Card) -> _Columns:
    return (card.id, card.title, card.created_at, card.kind, card.project, card.author, card.id)


def _line(card: Card) -> ReportLine:
    return ReportLine(*_columns(card))


def _ordered(lines: list[ReportLine]) -> list[ReportLine]:
    return sorted(lines, key=lambda line: (line.date, line.ref))


@dataclass(slots=True)
class _Later:
    """What one pass over every note the viewer may see says of the notes, as of *until*."""

    closed: set[str] = field(default_factory=set)  # built on by a later note, or superseded
    # A note corrected by notes written in the window -> its line's fields and theirs, oldest first.
    corrected: dict[str, tuple[_Columns, list[_Columns]]] = field(default_factory=dict)


def _later_notes(store: NoteStore, viewer: Viewer | None, since: str, until: str) -> _Later:
    """The notes some later note builds on (a digest only cites what it pulls together) or
    supersedes before *until*, and the corrections written from *since*: one pass over the
    notes the viewer may see (each card's ``superseded_by`` names only corrections the viewer
    may see), so hidden work closes and corrects nothing."""
    later = _Later()
    unwritten: set[str] = set()  # notes written at *until* or after: their corrections count not yet
    recent: dict[str, _Columns] = {}  # written in the window, in any project
    marked: list[Card] = []
    for card in _cards(store, viewer):
        created, kind = card.created_at, card.kind
        if created >= until:
            unwritten.add(card.id)
        else:
            if card.builds_on and kind != "digest":
                later.closed.update(t for t in card.builds_on if t != card.id)
            if since <= created:  # _columns(card), written out: this runs for every note
                recent[card.id] = (card.id, card.title, created, kind, card.project, card.author, card.id)
        if card.superseded_by:
            marked.append(card)
    for card in marked:
        if any(s not in unwritten for s in card.superseded_by):
            later.closed.add(card.id)
        fixes = [recent[s] for s in card.superseded_by if s in recent]
        if fixes:
            later.corrected[card.id] = (_columns(card), sorted(fixes, key=lambda c: (c[2], c[0])))
    return later


def _superseded(later: _Later, project: str | None) -> list[SupersededLine]:
    """The Superseded section: each note corrected in the window, when it or a correction is
    of *project* (None: any), with its corrections."""
    lines = [
        SupersededLine(*note, superseded_by=tuple(ReportLine(*fix) for fix in fixes))
        for note, fixes in later.corrected.values()
        if project is None or project in (note[4], *(fix[4] for fix in fixes))
    ]
    return sorted(lines, key=lambda line: (line.date, line.ref))


def _still_open(card: Card, until: str, closed: set[str]) -> bool:
    """Open at *until*: not tagged closed, not on an attempt that had succeeded by then, and
    not built on or superseded by a later note."""
    if set(card.tags) & set(CLOSED_TAGS) or card.id in closed:
        return False
    ended = card.attempt_ended_at
    return not (card.attempt_outcome == "succeeded" and ended is not None and ended < until)


def _said(body: str) -> str | None:
    """The first line of words of a summary's body, cut to a title's length."""
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    return (line if len(line) <= _TITLE_MAX else line[: _TITLE_MAX - 1] + "…") or None


def _attempt_line(store: NoteStore, attempt: Attempt, viewer: Viewer | None) -> ReportLine:
    """An ended attempt, cited by its summary note: the note's own title, or for the title the
    store gave an untitled summary (``Summary: <project>, <outcome>``) the summary's first line."""
    title = f"Attempt by {attempt.author or 'someone'}: {attempt.outcome}"
    summary = attempt.summary_note_id
    if summary is not None:
        try:
            note = store.get_note(summary, viewer=viewer)
        except NotFoundError:  # deleted since
            summary = None
        else:
            given = note.title != titled_summary_title(attempt.project, attempt.outcome or "")
            title = note.title if given else _said(note.body) or note.title
    kind = f"attempt {attempt.outcome}"
    return ReportLine(attempt.id, title, attempt.ended_at or "", kind, attempt.project, attempt.author, summary)


def _ended_attempts(
    store: NoteStore, project: str | None, since: str, until: str, cards: dict[str, Card], viewer: Viewer | None
) -> list[Attempt]:
    """The attempts that ended in the window: the newest started (up to the store's limit of a
    listing) and every one whose summary note was written in the window."""
    found = {
        a.id: a
        for a in store.list_attempts(project=project, running=False, limit=MAX_LIMIT, viewer=viewer)
        if a.ended_at is not None and since <= a.ended_at < until
    }
    for card in cards.values():
        if card.note_kind == "summary" and card.attempt_id and card.attempt_id not in found:
            try:
                attempt = store.get_attempt(card.attempt_id, viewer=viewer)
            except NotFoundError:
                continue
            if attempt.ended_at is not None and since <= attempt.ended_at < until:
                found[attempt.id] = attempt
    return list(found.values())


def build_report(
    store: NoteStore,
    *,
    project: str | None = None,
    since: str | None = None,
    until: str | None = None,
    tz: str | None = None,
    viewer: Viewer | None = None,
) -> Report:
    """The progress report of *project* (None: the whole store) for the notes written from
    *since* (default ``7d``) to *until* (default now), as *viewer* may see them."""
    start, end = report_window(since, until, tz)
    project = check_project(project) if project is not None else None
    scope = {"project": project} if project is not None else {}
    if project is not None:
        store.get_project(project, viewer=viewer)  # not_found for a project the viewer may not see
    report = Report(project, start, end, until is not None)
    # Asked by update time (a note written in the window was updated in it or since), which the
    # stores keep in order; when each was written is checked here.
    window = {c.id: c for c in _cards(store, viewer, updated_after=start, **scope) if start <= c.created_at < end}
    report.written = len(window)
    candidates = [c for kind in OPEN_KINDS for c in _cards(store, viewer, kind=kind, **scope) if c.created_at < end]
    # A correction of a note of the project may be in another project: no note written since
    # the window began (in any project) is the one case the whole store need not be read.
    wanted = candidates or window or store.list_notes(limit=1, viewer=viewer, updated_after=start)
    later = _later_notes(store, viewer, start, end) if wanted else _Later()
    report.superseded = _superseded(later, project)
    cited: set[str] = set()
    for attempt in _ended_attempts(store, project, start, end, window, viewer):
        line = _attempt_line(store, attempt, viewer)
        (report.ruled_out if attempt.outcome in _FAILED else report.done).append(line)
        if line.note_id:
            cited.add(line.note_id)
    sections = ((DONE_KINDS, report.done), (DECISION_KINDS, report.decisions), (RULED_OUT_KINDS, report.ruled_out))
    for card in window.values():
        target = next((lines for kinds, lines in sections if card.kind in kinds), None)
        # A note corrected in the window is listed under Superseded, not as live work; its
        # correction is still listed by its own kind.
        if target is not None and card.id not in cited and card.id not in later.corrected:
            target.append(_line(card))
            cited.add(card.id)
    opened = [_line(c) for c in candidates if _still_open(c, end, later.closed)]
    report.open = sorted(opened, key=lambda line: (line.kind != "blocker", line.date, line.ref))
    cited.update(line.ref for line in report.open)
    cited.update(ref for line in report.superseded for ref in (line.ref, *(fix.ref for fix in line.superseded_by)))
    report.done, report.decisions, report.ruled_out = (
        _ordered(report.done),
        _ordered(report.decisions),
        _ordered(report.ruled_out),
    )
    rest = Counter(c.kind or "" for c in window.values() if c.id not in cited and c.note_kind != "summary")
    report.other_kinds = sorted(rest.items(), key=lambda kc: (-kc[1], kc[0]))
    return report
