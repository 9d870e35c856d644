"""Claude Code sessions put together from every file of an import run, and where each goes.

A transcript holds its own session's lines and may hold others' (a resumed session's file copies
the one it resumes; a ``/resume`` inside a session writes the resumed one's lines into it). The
parser reads a file into one piece per session; here a run's pieces become its sessions, checked
against what the store holds of each (a held session grows only from its own transcript or a
true copy, and only at its end), with the message ids each owns and the places new ones go.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import NotewellError
from ..model.conversations import Conversation, Turn, merged_sessions
from ..model.conversations.conversation import last_turn_minute
from .contract import NoteStore
from .import_report import ImportReport
from .imported_parts import Kept, kept_parts

__all__ = ["Owners", "Places", "Session", "claude_code_sessions", "settle"]


@dataclass
class Session:
    """A Claude Code session as this run found it: its pieces put together, a file it was read
    from (its own, when any), what the store holds of it, the files (numbers) that hold its
    lines, and those that hold them truly (new here, or a copy holding its last message kept)."""

    name: str
    conv: Conversation
    kept: Kept
    files: list[int]
    true_files: list[int]
    home: dict[str, Any] | None = None  # a new one's attempt, beside the sessions it continues (see settle)


class Places:
    """Where sessions are, for placing a new one when no project is asked: beside the sessions
    whose lines share a file with its own (those it resumed, or that resumed it) or whose
    message ids it took (a fork), a private one first, so that a continuation of private work
    stays private, else the latest. Kept per file, so a file of many sessions costs no more
    than its lines."""

    def __init__(self, store: NoteStore) -> None:
        self.store = store
        self.at: dict[str, tuple[bool, str, dict[str, Any]]] = {}  # session -> (private, last turn, attempt)
        self.best: dict[int, tuple[bool, str, dict[str, Any]]] = {}  # file -> the first of its sessions' places
        self.private: dict[str, bool] = {}  # project -> whether it is private (asked once)

    def put(
        self, sid: str, last: str, attempt: dict[str, Any] | None, true_files: list[int], files: list[int] | None = None
    ) -> None:
        """Place *sid* on *attempt*: beside it in *true_files* (those holding its lines truly);
        when it is private, in *files* too (leaning private is the safe way)."""
        if attempt is None:
            return
        place = (self._hidden(str(attempt["project"])), last, attempt)
        self.at[sid] = place
        for number in {*true_files, *(files or [] if place[0] else [])}:
            if number not in self.best or place[:2] > self.best[number][:2]:
                self.best[number] = place

    def home(self, files: list[int], took: set[str]) -> dict[str, Any] | None:
        found = [self.best[n] for n in files if n in self.best] + [self.at[sid] for sid in took if sid in self.at]
        return max(found, key=lambda place: place[:2])[2] if found else None

    def _hidden(self, project: str) -> bool:
        if project not in self.private:
            try:
                self.private[project] = bool(self.store.get_project(project).get("private"))
            except NotewellError:
                self.private[project] = True  # unknown: taken as private, the safe way
        return self.private[project]


# A Claude Code message id -> the session it belongs to (held here, or read first in this run).
Owners = dict[str, str]


def claude_code_sessions(
    store: NoteStore,
    files: Iterator[tuple[str, list[Conversation]]],
    report: ImportReport,
    owners: Owners,
    places: Places,
) -> list[Session]:
    """Every session of the run, oldest first (a resumed one after the one it repeats), each
    with its pieces from every file put together. A session the store holds takes another
    file's lines only when its own transcript (the file named after it) is read too, or when
    they hold the last message kept (a true copy): a file cannot add turns to a session held
    here by claiming its id; nor are turns added before those kept (both are counted as strays).
    The message ids of sessions held here go into *owners* before anything is written, so that
    a new session sharing them (a fork, a copy under another id) leaves them where they are;
    where each held one is goes into *places*."""
    groups: dict[str, list[tuple[str, Conversation]]] = {}
    seen_in: dict[str, str] = {}
    shared: set[str] = set()  # message ids the lines of more than one session hold
    in_file: list[list[Conversation]] = []
    for name, pieces in files:
        in_file.append(pieces)
        for piece in pieces:
            groups.setdefault(piece.source_id, []).append((name, piece))
            for turn in piece.turns:  # which sessions' lines hold each message id (a fork's: two)
                if turn.ident and seen_in.setdefault(turn.ident, piece.source_id) != piece.source_id:
                    shared.add(turn.ident)
    kept_of = {sid: _kept_session(store, sid, group) for sid, group in groups.items()}
    files_of: dict[str, list[int]] = {}
    true_files: dict[str, list[int]] = {}
    for number, pieces in enumerate(in_file):
        for piece in pieces:
            files_of.setdefault(piece.source_id, []).append(number)
            if _continues(piece, kept_of[piece.source_id][1]):
                true_files.setdefault(piece.source_id, []).append(number)
    sessions = []
    for sid, group in groups.items():
        key, kept = kept_of[sid]
        if kept.count:  # placed where it is; when private, from every file holding its lines (a copy
            latest = max((_last_time(p) for _, p in group), default="")  # after a rewind, say: not a true one)
            places.put(sid, latest, kept.attempt, true_files.get(sid, []), files_of[sid])
        strays: set[object] = set()  # turns of other files that cannot be added (message ids)
        if kept.count and not any(Path(name).stem in (sid, key) for name, _ in group):
            until = _kept_until(kept, group)
            for piece in (p for _, p in group if not _continues(p, kept)):
                strays.update(t.ident or id(t) for t in _after_kept(piece, until))
                owners.update((t.ident, sid) for t in piece.turns if t.ident and t.ident not in owners)  # still its
            group = [(name, p) for name, p in group if _continues(p, kept)]
        conv = merged_sessions([p for _, p in group])
        report.strays += len(strays - {t.ident for t in conv.turns} if conv is not None else strays)  # each once
        if conv is None:
            continue
        if kept.count:
            conv.turns = _not_before_kept(conv, [p for _, p in group if p.own_file], kept, shared, report)
            owners.update((t.ident, sid) for t in conv.turns if t.ident and t.ident not in owners)
        conv.source_id = key
        name = next((n for n, p in group if p.own_file), group[0][0])
        sessions.append(Session(name, conv, kept, files_of[sid], true_files.get(sid, [])))
    # Earliest turn, then latest: a file that extends another (a resumed session) after it.
    sessions.sort(
        key=lambda s: (
            min((t.at for t in s.conv.turns if t.at), default="~"),
            max((t.at for t in s.conv.turns if t.at), default="~"),
            s.conv.source_id,
        )
    )
    return sessions


def _not_before_kept(
    conv: Conversation, own: list[Conversation], kept: Kept, shared: set[str], report: ImportReport
) -> list[Turn]:
    """*conv*'s turns without those another file put before the last message kept (the part
    counted fewer turns up to it than there are now): parts only ever grow at their end, so such
    turns are counted as strays. When they cannot be told from those kept, the part is left as
    it is all the same (see last_part_start), only what follows it is added, and as many turns
    as the part did not count are counted."""
    last = kept.extras.get("last_message")
    where = next((i for i, t in enumerate(conv.turns) if last and t.ident == last), None)
    upto = kept.extras.get("messages", "").partition("-")[2]
    if where is None or not upto.isdigit() or where + 1 <= int(upto):
        return conv.turns
    more = where + 1 - int(upto)
    mine = {t.ident for piece in own for t in piece.turns}
    early = [t for t in conv.turns[:where] if t.ident is not None and t.ident not in mine]
    if mine and not early:  # its own transcript holds them all: copies left out when it was new
        if not any(t.ident in shared for t in conv.turns[:where]):  # (a fork's) else turns never added
            report.strays += more
        return conv.turns
    if not mine or len(early) > more:
        report.strays += more
        return conv.turns
    report.strays += len(early)
    gone = {id(t) for t in early}
    return [t for t in conv.turns if id(t) not in gone]


def _kept_until(kept: Kept, group: list[tuple[str, Conversation]]) -> tuple[str, int] | None:
    """When the last turn kept was written, and to how many characters of an ISO time that is
    known: to the second when a file of the run holds the last message kept, else to the minute
    the part shows (None when it shows none). Looked up once a session: copies may be many."""
    last = kept.extras.get("last_message")
    exact = next((t.at for _, p in group for t in p.turns if last and t.ident == last and t.at), None)
    if exact is not None:
        return exact, len(exact)
    upto = kept.extras.get("messages", "").partition("-")[2]
    minute = last_turn_minute(kept.text, int(upto) if upto.isdigit() else None)
    return (minute, 16) if minute is not None else None


def _after_kept(piece: Conversation, until: tuple[str, int] | None) -> list[Turn]:
    """The turns of *piece* written after the last one kept: those the store cannot hold (a copy
    older than what is kept is not counted). Known only to the minute, that minute's turns are
    counted too: counted twice rather than lost without a word."""
    if until is None:
        return piece.turns
    at, width = until
    if width == 16:  # a turn without a time: counted (it cannot be placed after what is kept)
        return [t for t in piece.turns if not t.at or t.at[:16] >= at]
    return [t for t in piece.turns if not t.at or t.at > at]


def _kept_session(store: NoteStore, sid: str, group: list[tuple[str, Conversation]]) -> tuple[str, Kept]:
    """The key a session is kept under and what the store holds of it: its id, or the name of
    its own file, under which an earlier version imported a renamed transcript (taken only when
    that conversation's last message kept is among this session's: a file of the same name may
    be another session)."""
    kept = kept_parts(store, "claude-code", sid)
    if kept.count:
        return sid, kept
    idents = {t.ident for _, p in group for t in p.turns if t.ident}
    for stem in sorted({Path(name).stem for name, p in group if p.own_file} - {sid}):
        found = kept_parts(store, "claude-code", stem)
        if found.count and found.extras.get("last_message") in idents:
            return stem, found
    return sid, kept


def _continues(piece: Conversation, kept: Kept) -> bool:
    """Whether *piece* may join a session the store holds as *kept*: it is new here, or the
    piece holds the last message kept (a copy made after it, not lines that only claim its id)."""
    last = kept.extras.get("last_message")
    return not kept.count or (bool(last) and any(t.ident == last for t in piece.turns))


def _last_time(conv: Conversation) -> str:
    return max((t.at for t in conv.turns if t.at), default="")


def settle(session: Session, owners: Owners, places: Places, *, follow: bool) -> bool:
    """Settle *session* just before it is written, in the run's order: a new one leaves message
    ids another session owns where they are (a fork, a copy under another id), and, when no
    project is asked (*follow*), takes the place of the sessions it continues (``home``). The
    ids it keeps are its own from then on. False when no request of its own is left."""
    conv = session.conv
    took: set[str] = set()  # sessions it shares message ids with (a fork of theirs)
    if not session.kept.count:
        took = {owners[t.ident] for t in conv.turns if t.ident in owners}
        conv.turns = [t for t in conv.turns if t.ident is None or t.ident not in owners]
    owners.update((t.ident, conv.source_id) for t in conv.turns if t.ident and t.ident not in owners)
    if not any(t.role == "user" for t in conv.turns):
        return False
    if not session.kept.count and follow:
        session.home = places.home(session.files, took)
        places.put(conv.source_id, _last_time(conv), session.home, session.true_files)
    return True
