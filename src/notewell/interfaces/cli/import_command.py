"""``notewell import SOURCE [PATH]``: conversations from Claude Code, Codex CLI, Gemini CLI, ChatGPT or claude.ai, or
(``notewell import DIR --database URL``) a notes folder loaded into PostgreSQL."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ...errors import InvalidArgumentError
from ...model.shown import shown
from .command import Command
from .db import cmd_load_folder
from .store_options import open_from_args

if TYPE_CHECKING:
    from ...services.conversation_import import ImportReport

__all__ = ["COMMANDS"]


def _import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source",
        metavar="SOURCE",
        help="claude-code, chatgpt, claude, codex or gemini (conversations); or a notes folder DIR to load into"
        " --database",
    )
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="claude-code: a projects folder or one .jsonl (default ~/.claude/projects); chatgpt, claude:"
        " the export's .zip, its folder or conversations.json; codex: a sessions folder or one rollout-*.jsonl"
        " (default ~/.codex/sessions); gemini: a folder of session-*.json (default ~/.gemini/tmp)",
    )
    p.add_argument("--project", help="the project the notes go on (default: the source's name)")
    p.add_argument("--author", help="who the import attempt is by (default: your user name)")


def _summary(report: ImportReport) -> str:
    rate = report.conversations / report.seconds if report.seconds > 0 else 0.0
    line = (
        f"{report.source}: {report.files} file(s), {report.conversations} conversation(s) in {report.seconds:.1f} s"
        f" ({rate:,.0f}/s): {report.new} new, {report.continued} continued, {report.unchanged} unchanged"
    )
    if report.changed_in_place:
        line += f", {report.changed_in_place} changed in earlier turns (kept as first imported)"
    if report.deleted_here:
        line += f", {report.deleted_here} deleted here before (not brought back)"
    if report.strays:
        line += f", {report.strays} turn(s) other files hold of sessions here that cannot be added (not imported)"
    if not report.notes:
        return line + "; nothing written"
    line += f"; {report.notes} note(s) written on project {report.project}"
    if report.elsewhere:
        line += f" ({report.elsewhere} of them on the projects their conversations were first imported on)"
    if report.redacted:
        line += "; masked: " + ", ".join(f"{n} {kind}" for kind, n in sorted(report.redacted.items()))
    if report.private:
        line += f"; {report.private} <private> span(s) left out"
    return line


def cmd_import(args: argparse.Namespace) -> None:
    from ...services.conversation_import import SOURCES, import_conversations  # only this command needs them

    if args.source not in SOURCES:
        if args.path is not None or args.project or args.author:
            raise InvalidArgumentError(f"SOURCE is one of {', '.join(SOURCES)}, or a notes folder for --database")
        args.folder = args.source  # `notewell import DIR --database URL`, as before
        cmd_load_folder(args)
        return
    import getpass

    try:
        author = args.author or getpass.getuser()
    except (KeyError, OSError):
        author = "notewell-import"
    with open_from_args(args, create=True, watch=True) as store:  # watched: a read per conversation, no rescans
        report = import_conversations(store, args.source, args.path, project=args.project, author=author)
    for where, why in report.errors:
        print(f"notewell: not imported: {shown(where)}: {shown(why)}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(_summary(report))
    if report.errors:
        raise SystemExit(1)


COMMANDS = (
    Command(
        "import",
        "agent runtimes",
        "bring in conversations (claude-code, chatgpt, claude, codex, gemini), or load a notes folder into --database",
        cmd_import,
        _import_arguments,
    ),
)
