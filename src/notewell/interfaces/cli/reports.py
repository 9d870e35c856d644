"""``notewell report``: a project's progress document from its notes (Markdown or a standalone
HTML page), for a window of time; with ``--summary``, a paragraph from the chat model on top."""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import InvalidArgumentError, StorageError, UnavailableError
from ...search.filters import DATE_FORMS
from ...services.report_pages import FORMATS, check_base_url, render_markdown, render_report
from .command import Command
from .output import emit_json, notice
from .store_options import open_api, owner

if TYPE_CHECKING:
    from ...agents.chat import ChatModel

__all__ = ["COMMANDS", "write_atomically"]


def _mode_for(path: Path) -> int:
    """The permissions the report gets: those of the file it replaces, else what a file made by
    open() gets under the umask (mkstemp's own 0600 would hide a report meant for others)."""
    try:
        kept = path.lstat()
    except OSError:
        kept = None
    if kept is not None and stat.S_ISREG(kept.st_mode):
        return stat.S_IMODE(kept.st_mode)
    umask = os.umask(0o022)  # read by setting it; put back at once (a command runs one thread)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, text: str) -> None:
    """*text* into *path* whole or not at all: written beside it, flushed, then renamed over it."""
    if not str(path) or path.name in ("", ".", ".."):
        raise InvalidArgumentError(f"--output: give a file to write the report to, not {str(path)[:200]!r}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidArgumentError(f"--output: no folder {str(folder)[:200]!r} to write the report in")
    mode = _mode_for(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise StorageError(f"--output: cannot write in {str(folder)[:200]!r}: {exc.strerror}") from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StorageError(f"--output: cannot write {str(path)[:200]!r}: {exc.strerror}") from None


def _chat() -> ChatModel:
    """The chat model the environment names, or the one-line error saying how to name one."""
    from ...adapters.openai_chat import chat_from_environment, describe_chat_setup

    chat = chat_from_environment()
    if chat is None:
        raise UnavailableError("--summary needs a chat model: " + describe_chat_setup())
    return chat


def cmd_report(args: argparse.Namespace) -> None:
    chat = _chat() if args.summary else None  # before any work: the error comes at once
    check_base_url(args.base_url)
    with open_api(args) as api:
        report = api.report(owner(), project=args.project, since=args.since, until=args.until, tz=args.tz)
    summary = model = None
    if chat is not None:
        from ...agents.report_summary import summarize_report

        summary, model = summarize_report(chat, render_markdown(report)), chat.model
    if args.json:
        emit_json({**report.to_dict(), "summary": summary, "summary_model": model})
        return
    text = render_report(report, args.format, summary=summary, model=model, base_url=args.base_url)
    if args.output is None:
        sys.stdout.write(text)
        return
    write_atomically(Path(args.output), text)
    notice(f"wrote {args.output}")


def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", help="only this project's notes (default: every project)")
    p.add_argument("--since", default="7d", metavar="DATE", help=f"from this date or time (default 7d: {DATE_FORMS})")
    p.add_argument(
        "--until",
        metavar="DATE",
        help="up to this date or time (default: now); a relative --since counts back from it, so a"
        " scheduled run with --until gives the same report for the same notes",
    )
    p.add_argument(
        "--tz",
        metavar="ZONE",
        help="the time zone dates are read in (Europe/Berlin, +02:00; default: UTC,"
        " and the machine's for today and yesterday)",
    )
    p.add_argument("--format", choices=FORMATS, default="md", help="Markdown (md, default) or a standalone HTML page")
    p.add_argument("--output", metavar="FILE", help="write the report to FILE (whole or not at all); default stdout")
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="where `notewell serve` runs (http://127.0.0.1:8765): the HTML page's links to notes start with"
        " it (default: links relative to the server the page is read on)",
    )
    p.add_argument(
        "--summary",
        action="store_true",
        help="a paragraph from the chat model on top, marked as generated ($NOTEWELL_CHAT_URL)",
    )


COMMANDS = (
    Command(
        "report",
        "projects and attempts",
        "a progress report from the notes: done, open blockers and actions, decisions, ruled out, superseded",
        cmd_report,
        _report_arguments,
    ),
)
