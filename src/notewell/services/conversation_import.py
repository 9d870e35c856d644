"""Bringing conversations from Claude Code, Codex CLI, Gemini CLI, ChatGPT and claude.ai into a
store, again and again.

``import_conversations(store, source, path)`` finds the source's files (a Claude Code projects
folder or one transcript; a folder of Codex or Gemini CLI sessions or one; an export's zip, folder
or ``conversations*.json``), reads each one whole before writing anything from it, and writes one
note per conversation (parts, when it is long) on the project named after the source (on one
attempt left running, so that the notes stay the owner's to edit or delete). A note's id comes from the source's
own id, so importing again finds what it wrote before: a conversation that grew gets a new part
with only the turns after the last one kept; one already complete, or deleted here since, is
left as it is. A file that cannot be read is reported and contributes nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConflictError, InvalidArgumentError, NotewellError, SensitiveDataError
from ..model.conversations import Conversation, as_imported, conversation_parts, import_digest
from .claude_code_sessions import Owners, Places, claude_code_sessions, settle
from .contract import NoteStore
from .conversation_files import file_conversations
from .conversation_sources import SOURCE_TABLE, SOURCES, source_named
from .import_report import ERRORS_SHOWN, ImportReport
from .imported_parts import Kept, kept_parts, last_part_start, part_note_id

__all__ = ["SOURCES", "ImportReport", "default_path", "import_conversations", "part_note_id"]

_ID_MAX = 200
IMPORT_MODEL = "notewell-import"  # marks the attempt imports write on


def default_path(source: str) -> Path | None:
    """Where *source* keeps its files when no path is given (Claude Code's, Codex's and Gemini CLI's own folders)."""
    where = next((s.default_path for s in SOURCE_TABLE if s.name == source), None)
    return where() if where is not None else None


_RUN = "\x00run"  # the run's own attempt, on the project asked for (started at the first write)


class _Writer:
    """Writes the parts of many conversations in batches (one transaction per attempt written
    on), and tells the report what each conversation came to."""

    BATCH = 200

    def __init__(self, store: NoteStore, report: ImportReport, author: str) -> None:
        self.store, self.report, self.author = store, report, author
        self.runs: dict[str, str] = {}  # project -> the running import attempt written on there
        self.project_of: dict[str | None, str | None] = {None: None}  # attempt written on -> its project
        # (imported before, [(id, text)], what, attempt id, _RUN, or None for no attempt)
        self.pending: list[tuple[bool, list[tuple[str, str]], str, str | None]] = []
        self.size = 0
        self.added = 0  # calls of add(): whether a conversation wrote anything

    def add(
        self,
        conv: Conversation,
        before: bool,
        parts: list[tuple[str, str]],
        replace: tuple[str, str] | None = None,
        attempt: str | None = _RUN,
    ) -> None:
        """Write *parts* (id, text) on *attempt*; first, with *replace*, put a new text in a kept part."""
        self.added += 1
        if replace is not None:
            try:
                self.store.edit_note(replace[0], replace[1])
            except NotewellError as exc:
                self.report.errors.append((f"{conv.source} conversation {conv.source_id}", exc.message))
                return
            self.report.notes += 1  # written again: a new revision
            self.report.elsewhere += self.project_of.get(attempt if attempt != _RUN else None) != self.report.project
            if not parts:
                self.report.continued += 1
                return
        self.pending.append((before, parts, f"{conv.source} conversation {conv.source_id}", attempt))
        self.size += len(parts)
        if self.size >= self.BATCH:
            self.flush()

    def home(self, attempt: dict[str, Any] | None) -> str | None:
        """The attempt a conversation's new parts go on: that of its parts already here while it
        runs, else the running import attempt of their project (never another project: its
        visibility may differ); None when they are on none."""
        if attempt is None:
            return None
        if attempt.get("running"):
            self.project_of[str(attempt["id"])] = str(attempt["project"])
            return str(attempt["id"])
        return self.standing(str(attempt["project"]))

    def standing(self, project: str) -> str:
        if project not in self.runs:
            self.runs[project] = _standing_attempt(self.store, project, self.author)
            self.project_of[self.runs[project]] = project
        return self.runs[project]

    def flush(self) -> None:
        pending, self.pending, self.size = self.pending, [], 0
        groups: dict[str | None, list[tuple[bool, list[tuple[str, str]], str]]] = {}
        for before, parts, what, attempt in pending:
            run = self.standing(self.report.project) if attempt == _RUN else attempt
            groups.setdefault(run, []).append((before, parts, what))
        for run, group in groups.items():
            written = self.report.notes
            self._write(run, group)
            if self.project_of.get(run) != self.report.project:
                self.report.elsewhere += self.report.notes - written

    def _write(self, run: str | None, pending: list[tuple[bool, list[tuple[str, str]], str]]) -> None:
        parts = [p for _, ps, _ in pending for p in ps]
        try:
            self.store.add_notes([t for _, t in parts], attempt=run, note_ids=[i for i, _ in parts])
            for before, ps, _ in pending:
                self._count(before, len(ps))
            return
        except NotewellError:
            pass  # a part deleted here once, or one the store refuses: one by one, to tell which
        for before, ps, where in pending:
            try:
                for note_id, text in ps:
                    self.store.add_note(text, attempt=run, note_id=note_id)
                    self.report.notes += 1
            except ConflictError:
                self.report.deleted_here += 1  # its id was used: it was here and has been deleted
                continue
            except NotewellError as exc:
                self.report.errors.append((where, exc.message))  # this one only: the rest go in
                continue
            self._count(before, 0)

    def _count(self, before: bool, notes: int) -> None:
        self.report.notes += notes
        if before:
            self.report.continued += 1
        else:
            self.report.new += 1


def _standing_attempt(store: NoteStore, project: str, author: str) -> str:
    """The attempt imports write on: one per project, left running, so that the notes stay
    the owner's to edit or delete (an ended attempt freezes its notes)."""
    for attempt in store.list_attempts(project=project, running=True, limit=200):
        if attempt.model == IMPORT_MODEL:
            return attempt.id
    return store.start_attempt(project, author=author, model=IMPORT_MODEL).id


def _turns_digest(conv: Conversation) -> str:
    digest = hashlib.sha256()
    for turn in conv.turns:
        digest.update(f"{turn.role}\0{turn.text}\0{turn.ident}\0".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _redacted(store: NoteStore, conv: Conversation, found: Counter[str]) -> tuple[Conversation, int]:
    """*conv* as the store keeps it (each turn's text and tools, its title: see NoteStore.redacted),
    before its parts are made, so that a part compares equal to what was stored of it the time
    before; what was masked is counted into *found*. Returns it and the <private> spans removed."""
    private = 0

    def kept(text: str, where: str) -> str:
        nonlocal private
        try:
            done = store.redacted(text)
        except SensitiveDataError as exc:
            raise SensitiveDataError(f"{where}: {exc.message}", kind=exc.kind, line=exc.line) from None
        found.update(done.masked)
        private += done.private
        return done.text

    turns = [
        dataclasses.replace(t, text=kept(t.text, f"turn {n}"), tools=[kept(x, f"turn {n}") for x in t.tools])
        for n, t in enumerate(conv.turns, 1)
    ]
    title = kept(conv.title, "its title") if conv.title else conv.title
    return dataclasses.replace(conv, turns=turns, title=title), private


def _import_redacted(store: NoteStore, conv: Conversation, writer: _Writer, kept: Kept, attempt: str | None) -> None:
    """:func:`_import_one` of *conv* as the store keeps it; one the store refuses is reported, not written."""
    found: Counter[str] = Counter()
    try:
        conv, private = _redacted(store, conv, found)
    except SensitiveDataError as exc:
        writer.report.errors.append((f"{conv.source} conversation {conv.source_id}", exc.message))
        return
    added = writer.added
    _import_one(store, conv, writer, kept, attempt)
    if writer.added != added:  # counted only for what is written (again)
        writer.report.redacted.update(found)
        writer.report.private += private


def _import_one(store: NoteStore, conv: Conversation, writer: _Writer, kept: Kept, attempt: str | None) -> None:
    """Write what is new of *conv*: all of it, the last part again with what it grew by (when
    that part is as the import wrote it), or the turns after it in parts of their own (when a
    person changed it: their tags, summary and edits stay)."""
    report = writer.report
    part_id = lambda n: part_note_id(conv.source, conv.source_id, n)  # noqa: E731
    if not kept.count:
        parts = conversation_parts(conv, part_id=part_id)
        writer.add(conv, False, [(part_id(p.number), p.text) for p in parts], attempt=attempt)
        return
    span = last_part_start(conv, kept.extras)
    if span is None:
        report.changed_in_place += 1
        return
    start, upto = span
    clamped = start < 0  # the part's turns are not where it counted them: never written again
    start = max(start, 0) if not clamped else max(upto - 1, 0)
    # The last part again, with what its last turn has grown by and the turns after it.
    builds_on = part_id(kept.count - 1) if kept.count > 1 else None
    parts = conversation_parts(conv, start=start, first_part=kept.count, builds_on=builds_on, part_id=part_id)
    digest = import_digest(kept.text)
    if len(parts) == 1 and (parts[0].text == kept.text or (digest and import_digest(parts[0].text) == digest)):
        report.unchanged += 1  # nothing new (a person may have changed the part: left as it is)
        return
    rewrite = as_imported(kept.text) and not clamped  # else only turns after the part are added
    if not rewrite and upto >= len(conv.turns):
        report.unchanged += 1  # only the last turn of a part a person changed grew: the part stays theirs
        return
    # Only now, when something is written: finding the attempt may start one (an ended one's project).
    home = writer.home(kept.attempt)
    if rewrite:
        same = parts[0].text == kept.text  # only new parts after it: the part is not written again
        replace = None if same else (part_id(kept.count), parts[0].text)
        writer.add(conv, True, [(part_id(p.number), p.text) for p in parts[1:]], replace, home)
        return
    parts = conversation_parts(
        conv, start=upto, first_part=kept.count + 1, builds_on=part_id(kept.count), part_id=part_id
    )
    writer.add(conv, True, [(part_id(p.number), p.text) for p in parts], None, home)


def import_conversations(
    store: NoteStore,
    source: str,
    path: str | os.PathLike[str] | None = None,
    *,
    project: str | None = None,
    author: str | None = None,
    progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import *source*'s conversations under *path* into *store* (see the module's docstring)."""
    kind = source_named(source)
    transcripts = kind.shape is None and kind.session_file is None  # Claude Code's: put together from every file
    chosen = Path(path) if path is not None else default_path(source)
    if chosen is None:
        raise InvalidArgumentError(f"give the {source} export to import (a .zip, a folder or conversations.json)")
    report = ImportReport(source, project or source)
    began = time.perf_counter()
    writer = _Writer(store, report, author or "notewell-import")
    taken: dict[str, str] = {}  # conversations met in this run (an export may repeat one): id -> their turns' digest
    owners: Owners = {}  # Claude Code message ids: the session each belongs to
    places = Places(store)  # where Claude Code sessions are
    bad_ids = 0
    try:
        found = file_conversations(source, chosen, report)
        if transcripts:  # every session is read before anything is written
            sessions = claude_code_sessions(store, found, report, owners, places)
            found = ((s.name, [s.conv]) for s in sessions)
            by_id = {s.conv.source_id: s for s in sessions}
        for name, convs in found:
            for conv in convs:
                if not conv.source_id or len(conv.source_id) > _ID_MAX or not conv.source_id.isprintable():
                    bad_ids += 1
                    if bad_ids <= ERRORS_SHOWN:
                        report.errors.append(
                            (name, f"a conversation id that is not one short line: {conv.source_id!r:.40}")
                        )
                    continue
                text = _turns_digest(conv)
                if conv.source_id in taken:
                    if taken[conv.source_id] != text:  # not a repeat: a conversation left out, said so
                        report.errors.append(
                            (name, f"a second conversation with the id {conv.source_id!r:.60} and other text:"
                                   " only the first read was imported")
                        )  # fmt: skip
                    continue
                taken[conv.source_id] = text
                attempt: str | None = _RUN
                if transcripts:
                    session = by_id[conv.source_id]
                    kept = session.kept
                    if not settle(session, owners, places, follow=project is None):
                        continue  # nothing of its own left: its lines are other sessions'
                    if session.home is not None:
                        attempt = writer.home(session.home)
                else:
                    kept = kept_parts(store, source, conv.source_id)
                report.conversations += 1
                _import_redacted(store, conv, writer, kept, attempt)
            if progress is not None:
                progress(report)
        if bad_ids > ERRORS_SHOWN:
            report.errors.append(
                (str(chosen), f"and {bad_ids - ERRORS_SHOWN:,} more conversation ids not one short line")
            )
    finally:
        writer.flush()
        report.seconds = time.perf_counter() - began
    return report
