"""The project and attempt commands: ``attempt`` (start, end, show, list), ``project`` (set,
show) and ``brief`` (what to read first on a project)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError
from ...settings import setting
from .command import Command, common_options
from .note_input import MODEL_HELP, decode, read_input
from .output import emit_json, notice
from .store_options import open_api, owner

if TYPE_CHECKING:
    from ...services.server_api import ServerAPI

__all__ = ["COMMANDS"]


def _attempt_arguments(p: argparse.ArgumentParser) -> None:
    common = common_options()
    attempt_sub = p.add_subparsers(dest="attempt_command", metavar="ACTION", help="start, end, show or list")
    a = attempt_sub.add_parser("start", help="start an attempt on PROJECT; prints its id", parents=[common])
    a.add_argument("project", help="the project it works on (made when new)")
    a.add_argument("--campaign", help="a campaign the project belongs to")
    a.add_argument("--author", help="who runs it (default: $NOTEWELL_AUTHOR, else your user name)")
    a.add_argument("--model", default=setting("NOTEWELL_MODEL"), help=MODEL_HELP)
    a = attempt_sub.add_parser("end", help="end an attempt (its notes are frozen from then on)", parents=[common])
    a.add_argument("id", help="the attempt's id (att_...)")
    a.add_argument("--outcome", required=True, help="succeeded, failed, abandoned, or another short word")
    a.add_argument("--summary", help="a summary, written as a note of note_kind summary")
    a.add_argument("--summary-file", metavar="FILE", help="the summary from a file, or - for standard input")
    a = attempt_sub.add_parser("show", help="an attempt and its notes", parents=[common])
    a.add_argument("id", help="the attempt's id (att_...)")
    a = attempt_sub.add_parser("list", help="attempts, the most recently started first", parents=[common])
    a.add_argument("--project", help="only this project's attempts")
    a.add_argument("--state", choices=("running", "ended"), help="only running or only ended attempts")
    a.add_argument("--limit", type=int, default=50, metavar="N", help="attempts to print (default 50)")


def _attempt_lines(attempt: dict[str, Any]) -> list[str]:
    state = "running" if attempt["running"] else f"ended {attempt['ended_at']}: {attempt['outcome']}"
    where = attempt["project"] + (f" (campaign {attempt['campaign']})" if attempt["campaign"] else "")
    who = (attempt["author"] or "?") + (f" / {attempt['model']}" if attempt["model"] else "")
    started = f"  started {attempt['started_at']}, {state}; {attempt['notes']} note(s)"
    return [f"{attempt['id']}  {where}  by {who}", started]


def _user_name() -> str | None:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def _start(api: ServerAPI, args: argparse.Namespace) -> None:
    author = args.author or setting("NOTEWELL_AUTHOR") or _user_name()
    attempt = api.start_attempt(owner(), args.project, author=author, model=args.model, campaign=args.campaign)
    if args.json:
        emit_json(attempt)
    else:
        print(attempt["id"])
        notice(f"(export NOTEWELL_ATTEMPT={attempt['id']} so that `notewell add` writes on it)")


def _end(api: ServerAPI, args: argparse.Namespace) -> None:
    summary = args.summary
    if args.summary_file is not None:
        summary = decode(read_input(args.summary_file))
    attempt = api.end_attempt(owner(), args.id, outcome=args.outcome, summary=summary)
    if args.json:
        emit_json(attempt)
    else:
        print("\n".join(_attempt_lines(attempt)))


def _show(api: ServerAPI, args: argparse.Namespace) -> None:
    attempt = api.get_attempt(owner(), args.id)
    cards = api.list_notes(owner(), attempt_id=attempt["id"], limit=1000)["cards"]
    reads = api.attempt_reads(owner(), attempt["id"])["reads"]
    if args.json:
        emit_json({**attempt, "notes": cards, "reads": reads})
        return
    print("\n".join(_attempt_lines(attempt)))
    for card in cards:
        print(f"  {card['id']}  {card['title']}" + ("  [summary]" if card["note_kind"] == "summary" else ""))
    for read in reads:
        print(f"  read {read['note_id']}  {read['title'] or '(gone)'}  at {read['at']}")


def _list(api: ServerAPI, args: argparse.Namespace) -> None:
    running = {"running": True, "ended": False}.get(args.state) if args.state else None
    answer = api.list_attempts(owner(), args.project, running=running, limit=args.limit)
    attempts = answer["attempts"]
    if args.json:
        emit_json(answer)  # {"attempts": [...]}, as HTTP answers
    elif not attempts:
        print("no attempts")
    else:
        for attempt in attempts:
            print("\n".join(_attempt_lines(attempt)))


_ATTEMPT_ACTIONS = {"start": _start, "end": _end, "show": _show, "list": _list}


def cmd_attempt(args: argparse.Namespace) -> None:
    action = args.attempt_command
    if action is None:
        raise InvalidArgumentError("say what to do: notewell attempt start|end|show|list")
    with open_api(args, create=action == "start") as api:
        _ATTEMPT_ACTIONS[action](api, args)


def _project_arguments(p: argparse.ArgumentParser) -> None:
    common = common_options()
    project_sub = p.add_subparsers(dest="project_command", metavar="ACTION", help="set or show")
    a = project_sub.add_parser("set", help="change a project's settings", parents=[common])
    a.add_argument("name", help="the project's name")
    vis = a.add_mutually_exclusive_group()
    vis.add_argument(
        "--private",
        dest="private",
        action="store_true",
        default=None,
        help="seen by its owner only (the project is named in the owner's namespace: alice:NAME)",
    )
    vis.add_argument("--public", dest="private", action="store_false", help="seen by everyone (the default)")
    a.add_argument("--owner", help="who may see it when private (a token's name)")
    a.add_argument("--campaign", help="the campaign it belongs to")
    a = project_sub.add_parser("show", help="a project's settings and counts", parents=[common])
    a.add_argument("name", help="the project's name")


def cmd_project(args: argparse.Namespace) -> None:
    action = args.project_command
    if action is None:
        raise InvalidArgumentError("say what to do: notewell project set|show")
    with open_api(args, create=action == "set") as api:
        if action == "set":
            project = api.set_project(
                owner(), args.name, private=args.private, owner=args.owner, campaign=args.campaign
            )
        else:
            project = api.get_project(owner(), args.name)
    if args.json:
        emit_json(project)
        return
    seen = f"private (owner {project['owner'] or 'none'})" if project["private"] else "public"
    campaign = f", campaign {project['campaign']}" if project["campaign"] else ""
    print(f"{project['name']}: {seen}{campaign}; {project['attempts']} attempt(s), {project['notes']} note(s)")


def _brief_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", help="the project's name")
    p.add_argument("--recent", type=int, default=10, metavar="N", help="recent notes to list (default 10)")


def cmd_brief(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        brief = api.brief(owner(), args.project, recent=args.recent)
    if args.json:
        emit_json(brief)
        return
    project = brief["project"]
    print(f"{project['name']}: {project['attempts']} attempt(s), {project['notes']} note(s)")
    sections = (
        ("read first: the newest digest", [brief["digest"]] if brief["digest"] else []),
        ("recent", brief["recent"]),
        (f"not in the digest yet ({brief['uncovered_count']})", brief["uncovered"]),
    )
    for title, cards in sections:
        print(f"\n== {title}")
        if not cards:
            print("(none)")
        for card in cards:
            print(f"{card['id']}  {card['title']}  ({card['updated_at'][:16].replace('T', ' ')})")


COMMANDS = (
    Command(
        "attempt",
        "projects and attempts",
        "start, end, show or list attempts (runs on a project)",
        cmd_attempt,
        _attempt_arguments,
    ),
    Command(
        "project",
        "projects and attempts",
        "set or show a project's settings (private, owner, campaign)",
        cmd_project,
        _project_arguments,
    ),
    Command(
        "brief",
        "projects and attempts",
        "a project's newest digest, recent notes, and what the digest does not cover",
        cmd_brief,
        _brief_arguments,
    ),
)
