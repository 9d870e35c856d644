"""``notewell hook EVENT``: what an agent runtime's session hooks print.

- ``session-start``: the project's newest digest, open blockers and actions and recent notes,
  packed under ``--budget`` tokens, each cited by id.
- ``post-compact``: the accepted working notebook (``notewell notebook show``) after a
  compaction; the session-start briefing when there is no notebook.
- ``pre-compact``: remembers that a compaction happened, for a runtime with no event after one
  (the next ``prompt`` answers it).
- ``prompt``: silent unless something waits for the next prompt (a compaction to answer, a
  reminder the runtime could not pass at stop).
- ``stop``: once per session, a reminder to write a note when the session ran ``--after``
  minutes and wrote none. Never a refusal: the agent may stop right after.

A hook never breaks the session it serves: any failure is one line on stderr and exit 1 (a
runtime's "non-blocking error"), never 2 (which some runtimes read as "block"). A store folder
not made yet is no failure: a hook reads it as holding no notes and makes nothing (the MCP
server makes it, or ``notewell init``), so a session in any folder starts cleanly.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ...errors import InvalidArgumentError, NotewellError
from ...model.timestamps import now_iso
from ...settings import setting
from .catalog import HOOK_EVENTS, RUNTIMES, HookAnswer, answer_text, runtime_named
from .hook_sessions import SessionState

__all__ = ["add_hook_arguments", "cmd_hook", "run_hook"]

_MAX_INPUT = 1 << 20  # a hook's input is a few fields; a transcript is passed by path, never inline
_CONTEXT_CHARS = 9500  # Claude Code saves longer hook text to a file and shows a preview
_DEFAULT_BUDGET = 1500
_DEFAULT_AFTER = 20


def add_hook_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", choices=HOOK_EVENTS, metavar="EVENT", help=f"one of: {', '.join(HOOK_EVENTS)}")
    p.add_argument(
        "--runtime",
        choices=tuple(RUNTIMES),
        default="plain",
        help="answer in this runtime's hook format: " + ", ".join(RUNTIMES) + " (default plain: the text)",
    )
    p.add_argument(
        "--project",
        default=setting("NOTEWELL_PROJECT"),
        help="the project (default: $NOTEWELL_PROJECT; else all)",
    )
    p.add_argument(
        "--budget", type=int, default=_DEFAULT_BUDGET, help=f"tokens for the briefing (default {_DEFAULT_BUDGET})"
    )
    p.add_argument("--recent", type=int, default=8, help="recent notes to consider (default 8)")
    p.add_argument(
        "--after", type=float, default=_DEFAULT_AFTER, metavar="MINUTES",
        help=f"stop: remind only a session this old that wrote no note (default {_DEFAULT_AFTER})",
    )  # fmt: skip
    p.add_argument("--task", help="post-compact: the notebook (default: $NOTEWELL_NOTEBOOK, or the only one)")
    p.add_argument(
        "--root",
        help="post-compact: where notebooks live (default: $AGENT_CONTEXT_ROOT, else .agent-context in the session)",
    )


def _read_input() -> dict[str, Any]:
    """The runtime's JSON on stdin ({} when there is none or it is not JSON: a hook still answers)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        data = sys.stdin.buffer.read(_MAX_INPUT + 1)
    except (OSError, ValueError):
        return {}
    if len(data) > _MAX_INPUT:
        return {}
    try:
        loaded = json.loads(data) if data.strip() else {}
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the interpreter's limit too
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _text_field(payload: dict[str, Any], *names: str, limit: int = 200) -> str | None:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and 0 < len(value) <= limit:
            return value
    return None


def cmd_hook(args: argparse.Namespace) -> None:
    try:
        text = run_hook(args, _read_input())
    except NotewellError as exc:
        print(f"notewell: {exc.code}: {exc.message}", file=sys.stderr)
        raise SystemExit(1) from None  # 1, not the command line's usual codes: 2 means "block" to a runtime
    if text:
        sys.stdout.write(text + "\n")


def run_hook(args: argparse.Namespace, payload: dict[str, Any], *, now: datetime | None = None) -> str:
    """The text to print for hook *args.event* given the runtime's *payload*."""
    runtime = runtime_named(args.runtime)
    now = now or datetime.now(UTC)
    session = _text_field(payload, "session_id", "conversation_id")
    state = SessionState(runtime.name, session) if session else None
    event = _text_field(payload, "hook_event_name", limit=64)
    command = args.event
    answer = HookAnswer()
    if command == "session-start":
        source = _text_field(payload, "source", limit=32)
        if state is not None and (not state.get("started_at") or source in ("startup", "clear")):
            state.update(started_at=now.isoformat(), nudged=False, wrote=False, compacted=False)
        elif state is not None and source == "resume":  # a sitting is timed from its own start
            state.update(started_at=now.isoformat())
        if source == "compact":  # a runtime that starts again after a compaction: give the notebook too
            answer.context = _after_compaction(args, payload)
        else:
            answer.context = _briefing(args, runtime.name)
    elif command == "post-compact":
        answer.context = _after_compaction(args, payload)
        if state is not None and state.get("compacted"):
            state.update(compacted=False)
    elif command == "pre-compact":
        if state is not None:
            state.update(compacted=True)
    elif command == "prompt":
        if state is not None and state.get("compacted"):
            answer.context = _after_compaction(args, payload)
            state.update(compacted=False)
        if state is not None and state.get("reminder"):
            answer.reminder = state.get("reminder")
            state.update(reminder=None)
    elif command == "stop":
        reminder = _stop_reminder(args, payload, state, now)
        if reminder and runtime.name == "gemini":
            # AfterAgent's only way to the model rejects the answer: wait for the next prompt
            state.update(reminder=reminder)  # type: ignore[union-attr] - a reminder implies a session
            answer.notice = reminder
        else:
            answer.reminder = reminder
    return answer_text(runtime, command, answer, event)


def _open(args: argparse.Namespace) -> Any:
    from ..cli.store_options import open_from_args

    return open_from_args(args, create=False, watch=False)


def _not_made(args: argparse.Namespace) -> bool:
    """Whether the store is a folder that is not there yet: no notes to read, and a hook is no
    place to make one (a runtime may start it in any folder)."""
    from ..cli.db import chosen_database
    from ..cli.store_options import folder_named

    return chosen_database(args) is None and not Path(folder_named(args)).expanduser().exists()


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {"project": args.project} if args.project else {}


def _briefing(args: argparse.Namespace, runtime: str) -> str:
    from ...agents.briefing import Briefing
    from ...agents.context import ContextConfig

    where = f" on project {args.project}" if args.project else ""
    intro = (
        f"notewell: notes from earlier sessions{where}, newest digest and open items first."
        " Read them before you start; cite a note by its id in brackets."
    )
    outro = (
        "Read a note whole with the get_note tool (or `notewell get ID`); search with search_notes."
        " When you learn something the next agent should know (a finding, a dead end, a decision),"
        " write it with add_note."
    )
    empty = (
        f"notewell: no notes yet{where}. When you learn something the next agent should know"
        " (a finding, a dead end, a decision), write it with the add_note tool (or `notewell add`)."
    )
    budget = args.budget
    if budget < 1:
        raise InvalidArgumentError(f"--budget must be at least 1 token, got {budget}")
    if _not_made(args):
        return empty
    with _open(args) as store:
        for _ in range(4):  # a budget in tokens may still be too many characters for the runtime
            cfg = ContextConfig(max_tokens=max(1, budget), reserve_tokens=0, filters=_filters(args))
            brief = Briefing(store, cfg).build(intro, recent=max(0, args.recent), outro=outro)
            if len(brief.text) <= _CONTEXT_CHARS or runtime == "plain":
                break
            budget = int(budget * _CONTEXT_CHARS / len(brief.text) * 0.9)
        if brief.cited:
            return brief.text
        if brief.left_out:  # there are notes, only none fitted
            return brief.text + f"\n\n({brief.left_out} notes did not fit in {budget} tokens: raise --budget)"
        if args.project:  # a new project, or a name mistyped: say which ones there are
            known = [p["name"] for p in store.list_projects()][:12]
            if known and args.project not in known:
                empty += f" (projects in this store: {', '.join(known)})"
    return empty


def _after_compaction(args: argparse.Namespace, payload: dict[str, Any]) -> str:
    """The accepted notebook, else (no notebook) the briefing: the context just lost."""
    from ...agents.notebook import Notebook, chosen_task

    root = args.root
    if root is None and not os.environ.get("AGENT_CONTEXT_ROOT"):
        cwd = _text_field(payload, "cwd", limit=4096)
        root = str(Path(cwd) / ".agent-context") if cwd else None
    try:
        book = Notebook(chosen_task(args.task, root, naming="--task"), root=root)
        text = book.show()
    except NotewellError:
        text = ""
    if text.strip():
        head = "notewell: the working notebook for this task, as last accepted (read it before you go on):\n\n"
        if args.runtime == "claude-code" and len(head) + len(text) > _CONTEXT_CHARS:
            tail = "\n[… the rest did not fit: read it whole with `notewell notebook show`]"
            room = _CONTEXT_CHARS - len(head) - len(tail)
            cut = text[:room]
            text = (cut[: cut.rfind("\n")] if "\n" in cut else cut) + tail  # whole lines only
        return head + text
    return _briefing(args, args.runtime)


_WRITE_TOOLS = (b"mcp__notewell__add_note", b"mcp__notewell__edit_note", b"notewell add ", b"notewell edit ")
_TRANSCRIPT_MAX = 256 << 20


def _transcript_wrote(payload: dict[str, Any]) -> bool | None:
    """Whether this session's own transcript shows it writing a note (notewell's MCP tools, or
    the CLI); None when there is no transcript to read. Read in pieces, never whole."""
    path = _text_field(payload, "transcript_path", limit=4096)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not hold the hook up
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as fh:
            carry = b""
            read = 0
            while read < _TRANSCRIPT_MAX:
                piece = fh.read(1 << 20)
                if not piece:
                    return False
                read += len(piece)
                window = carry + piece
                if any(tool in window for tool in _WRITE_TOOLS):
                    return True
                carry = window[-64:]  # a name cut between two pieces
    except OSError:
        return None
    return None


def _stop_reminder(args: argparse.Namespace, payload: dict[str, Any], state: SessionState | None, now: datetime) -> str:
    """The once-per-session reminder, or "" (most stops: checked without opening the store)."""
    if state is None or payload.get("stop_hook_active") is True or state.get("nudged") or state.get("wrote"):
        return ""
    if payload.get("status") in ("aborted", "error"):  # Cursor: the person stopped it, or it failed
        return ""
    started = state.get("started_at")
    try:
        began = datetime.fromisoformat(started) if isinstance(started, str) else None
    except ValueError:
        began = None
    if began is None or began.tzinfo is None:
        state.update(started_at=now.isoformat())  # no session-start hook ran: count from here
        return ""
    minutes = (now - began) / timedelta(minutes=1)
    if minutes < args.after:
        return ""
    wrote = _transcript_wrote(payload) if args.runtime == "claude-code" else None
    if wrote:
        state.update(wrote=True)
        return ""
    if wrote is None and not _not_made(args):  # no transcript: a note written since the session began counts
        with _open(args) as store:
            if store.list_notes(limit=1, updated_after=began.isoformat(), **_filters(args)):
                return ""
    state.update(nudged=True, nudged_at=now_iso())
    where = f" on project {args.project}" if args.project else ""
    return (
        f"notewell: this session has run {int(minutes)} minutes and written no note{where}. If you learned"
        " something the next agent should know (a finding, a dead end, a decision, what is left to do),"
        " write it now with add_note (or `notewell add`). If there is nothing worth keeping, just stop:"
        " this reminder comes once."
    )
