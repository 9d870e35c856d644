"""``notewell notebook ...``: the working-context notebook from the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import InvalidArgumentError, InvalidNoteError, NotFoundError
from ..services.notebook import Notebook, notebook_root

__all__ = ["add_notebook_arguments", "cmd_notebook"]


def _task(args: argparse.Namespace) -> str:
    """--task, else $NOTEWELL_NOTEBOOK, else the only notebook under the root."""
    if args.task:
        return args.task
    if os.environ.get("NOTEWELL_NOTEBOOK"):
        return os.environ["NOTEWELL_NOTEBOOK"]
    root = notebook_root(args.root)
    found = sorted(p.parent.name for p in root.glob("*/state.json")) if root.is_dir() else []
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFoundError(f"no notebook under {root} (notewell notebook init TASK --goal ...)")
    raise InvalidArgumentError(f"several notebooks under {root} ({', '.join(found)}): name one with --task")


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else text)


def cmd_notebook(args: argparse.Namespace) -> None:
    action = args.action
    if action == "init":
        book = Notebook.init(args.name, goal=args.goal or "", budget=args.budget, root=args.root)
        _print(args, {"task": book.task, "path": str(book.path)}, f"notebook ready: {book.path}")
        return
    book = Notebook(_task(args), root=args.root)
    if action == "log":
        source = args.file
        if source in (None, "-"):
            data = sys.stdin.buffer.read()
        else:
            try:
                with open(source, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise InvalidArgumentError(f"cannot read {source}: {exc.strerror}") from None
        event, pointer = book.log(data, args.label or "")
        _print(args, {**event.to_dict(), "pointer": pointer}, pointer)
    elif action == "recall":
        print(book.recall(args.event, grep=args.grep, offset=args.offset, limit=args.limit))
    elif action == "accept":
        result = book.accept()
        for w in result.warnings:
            print(f"warning: {w}", file=sys.stderr)
        if not result.accepted:
            for e in result.errors:
                print(f"error: {e}", file=sys.stderr)
            raise InvalidNoteError(
                f"{len(result.errors)} error(s); nothing changed, revision {result.revision} stays in force"
                " (fix them, or notewell notebook restore)"
            )
        _print(args, {"revision": result.revision}, f"accepted as revision {result.revision}")
    elif action == "restore":
        number = book.restore()
        _print(args, {"revision": number}, f"notebook.md is revision {number} again")
    elif action == "show":
        print(book.show(), end="")
    elif action == "status":
        status = book.status()
        lines = [
            f"{status['task']}: revision {status['revision']}, about {status['tokens']} of {status['budget']} tokens"
            f" ({status['used_percent']}%)",
            "items: " + ", ".join(f"{k} {v}" for k, v in status["sections"].items()),
            f"unaccepted edits: {'yes' if status['unaccepted_edits'] else 'no'}",
            f"raw events: {status['raw_events']}; not cited yet: {', '.join(status['uncited_events']) or 'none'}",
        ]
        lines += [f"TAMPERED: {t}" for t in status["tampered"]]
        _print(args, status, "\n".join(lines))
    elif action == "diff":
        print(book.diff(args.a, args.b))
    elif action == "history":
        rows = book.history()
        _print(args, rows, "\n".join(f"r{h['revision']}  {h['items']} items  ~{h['tokens']} tokens" for h in rows))
    elif action == "promote":
        from .cli import _store

        with _store(args, create=True, watch=False) as store:
            made = book.promote(store, args.ids, author=args.author)
        _print(
            args,
            made,
            "\n".join(f"{m['id']} -> {m['note_id']}{'' if m['new'] else ' (promoted before)'}" for m in made),
        )
    elif action == "nudge":
        message = book.nudge()
        if message:
            print(message)


def add_notebook_arguments(p: argparse.ArgumentParser) -> None:
    """The notebook's own commands, under ``notewell notebook``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--task", help="which notebook (default: $NOTEWELL_NOTEBOOK, or the only one)")
    common.add_argument("--root", help="where notebooks live (default: $AGENT_CONTEXT_ROOT or ./.agent-context)")
    common.add_argument("--json", action="store_true", help="print JSON")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, parents=[common])

    a = action("init", "open a notebook for a task, with its goal")
    a.add_argument("name", metavar="TASK")
    a.add_argument("--goal", required=True, help="the outcome, in one or two lines")
    a.add_argument("--budget", type=int, default=2000, help="token budget (default 2000)")
    a = action("log", "store raw output once, untouched; prints its event id and a pointer")
    a.add_argument("file", nargs="?", metavar="FILE", help="a file, or - for standard input (the default)")
    a.add_argument("--label", required=True, help="what the output is")
    a = action("recall", "print a bounded part of a raw event")
    a.add_argument("event", metavar="EVENT", help="an event id, like E0003")
    a.add_argument("--grep", help="only the lines with this word")
    a.add_argument("--offset", type=int, default=0, help="start at this character")
    a.add_argument("--limit", type=int, default=2000, help="at most this many characters")
    action("accept", "validate notebook.md and checkpoint it as the next accepted revision")
    action("restore", "put the last accepted revision back as notebook.md")
    action("show", "print the accepted revision (read it back)")
    action("status", "budget used, items per section, unaccepted edits, raw events not cited")
    a = action("diff", "what changed between accepted revisions (default: the working copy, or the last two)")
    a.add_argument("a", nargs="?", type=int, metavar="A")
    a.add_argument("b", nargs="?", type=int, metavar="B")
    action("history", "the accepted revisions")
    action("nudge", "a reminder only when one is newly due; silent otherwise (for a prompt hook)")
    a = action("promote", "turn accepted facts, ruled-out items and notes into durable notes in the store")
    a.add_argument("ids", nargs="+", metavar="ID", help="F003 R001 N002 ...")
    a.add_argument("--store", help="the notes folder (default: $NOTEWELL_STORE or ./notes)")
    a.add_argument("--author", default=os.environ.get("NOTEWELL_AUTHOR"))
