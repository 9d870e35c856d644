"""Progress reports: what a window of time's notes say was done, what is still open, what was
decided and what was ruled out, built from the notes alone (no language model).

``build_report(store, since="7d", project=...)`` reads through the :class:`NoteStore` calls a
viewer is held to (``list_notes``, ``list_attempts``, ``get_note``), so a viewer's report is
made of the work they may see and nothing else: hidden notes are neither listed, counted nor
let close a blocker. Everything is sorted on values the notes hold (time, then id), and no
clock is read when *until* is given, so the same notes and the same dates give the same report.

A note belongs to the window by when it was written (``created_at``): an edit made later does
not move it, so a report run again for the same dates lists the same notes.
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
from ..model.timestamps import just_after, now_iso, parse_when, time_zone
from ..model.visibility import Viewer
from ..search.request import MAX_LIMIT
from .contract import NoteStore

__all__ = [
    "CLOSED_TAGS",
    "DECISION_KINDS",
    "DONE_KINDS",
    "OPEN_KINDS",
    "RULED_OUT_KINDS",
    "Report",
    "ReportLine",
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
    """Every card the filters give, each once, newest updated first: page by page, each page
    asked for below the last one's oldest time (ties there are read again and skipped), so that
    a page costs the same at the end of 20,000 notes as at their start; an offset would make
    the store walk past every note before it, again for each page."""
    seen: set[str] = set()
    bound: str | None = None
    while True:
        below: dict[str, Any] = {"updated_before": bound} if bound is not None else {}
        page = store.list_notes(limit=_PAGE, viewer=viewer, **filters, **below)
        fresh = [card for card in page if card.id not in seen]
        seen.update(card.id for card in fresh)
        yield from fresh
        if len(page) < _PAGE:
            return
        after = just_after(page[-1].updated_at)
        if not fresh or after is None or after == bound:  # a page's worth updated in one microsecond
            yield from _by_offset(store, viewer, seen, {**filters, **below})
            return
        bound = after


def _by_offset(store: NoteStore, viewer: Viewer | None, seen: set[str], filters: dict[str, Any]) -> Iterator[Card]:
    offset = 0
    while True:
        page = store.list_notes(limit=_PAGE, offset=offset, viewer=viewer, **filters)
        for card in page:
            if card.id not in seen:
                seen.add(card.id)
                yield card
        if len(page) < _PAGE:
            return
        offset += _PAGE


def _line(card: Card) -> ReportLine:
    return ReportLine(card.id, card.title, card.created_at, card.kind, card.project, card.author, card.id)


def _ordered(lines: list[ReportLine]) -> list[ReportLine]:
    return sorted(lines, key=lambda line: (line.date, line.ref))


@dataclass(slots=True)
class _Closers:
    """What later notes say of earlier ones, as of a report's end."""

    built_on: set[str] = field(default_factory=set)  # notes a later note (not a digest) builds on
    written: set[str] = field(default_factory=set)  # the notes written by then


def _closers(store: NoteStore, viewer: Viewer | None, until: str) -> _Closers:
    """The notes written before *until* that the viewer may see, and those of them some other
    note builds on (one pass), so that hidden work closes nothing and later work does not reach
    back."""
    found = _Closers()
    for card in _cards(store, viewer):
        if card.created_at < until:
            found.written.add(card.id)
            if card.kind != "digest":
                found.built_on.update(t for t in card.builds_on if t != card.id)
    return found


def _still_open(card: Card, until: str, closers: _Closers) -> bool:
    """Open at *until*: not tagged closed, not on an attempt that had succeeded by then, not
    built on by a later note, and not superseded by a note written by then (the card's
    ``superseded_by``: the later notes the viewer may see that name it in supersedes)."""
    if set(card.tags) & set(CLOSED_TAGS) or card.id in closers.built_on:
        return False
    if not closers.written.isdisjoint(card.superseded_by):
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
    cited: set[str] = set()
    for attempt in _ended_attempts(store, project, start, end, window, viewer):
        line = _attempt_line(store, attempt, viewer)
        (report.ruled_out if attempt.outcome in _FAILED else report.done).append(line)
        if line.note_id:
            cited.add(line.note_id)
    sections = ((DONE_KINDS, report.done), (DECISION_KINDS, report.decisions), (RULED_OUT_KINDS, report.ruled_out))
    for card in window.values():
        target = next((lines for kinds, lines in sections if card.kind in kinds), None)
        if target is not None and card.id not in cited:
            target.append(_line(card))
            cited.add(card.id)
    candidates = [c for kind in OPEN_KINDS for c in _cards(store, viewer, kind=kind, **scope) if c.created_at < end]
    closers = _closers(store, viewer, end) if candidates else _Closers()
    opened = [_line(c) for c in candidates if _still_open(c, end, closers)]
    report.open = sorted(opened, key=lambda line: (line.kind != "blocker", line.date, line.ref))
    cited.update(line.ref for line in report.open)
    report.done, report.decisions, report.ruled_out = (
        _ordered(report.done),
        _ordered(report.decisions),
        _ordered(report.ruled_out),
    )
    rest = Counter(c.kind or "" for c in window.values() if c.id not in cited and c.note_kind != "summary")
    report.other_kinds = sorted(rest.items(), key=lambda kc: (-kc[1], kc[0]))
    return report
