"""The core commands' arguments and the grouped list of commands in ``notewell --help``.

Every option carries help text (a test walks the parser); the commands are listed by what
they are for rather than in one flat list.
"""

from __future__ import annotations

import argparse

from ...search.filters import FILTERS
from ...settings import setting

__all__ = ["COMMAND_GROUPS", "add_core_arguments", "commands_epilog"]

# What ``notewell --help`` lists, group by group (a test checks every command is in one).
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("start", ("demo", "init", "config")),
    ("notes", ("add", "get", "edit", "rm", "list", "history", "tag", "set-summary", "tags", "header", "links")),
    ("search", ("search", "summary", "embed", "reindex", "watch")),
    ("projects and attempts", ("attempt", "project", "brief")),
    ("servers", ("serve", "mcp", "token")),
    ("notebook", ("notebook",)),
    ("agent runtimes", ("install", "uninstall", "hook", "import")),
    ("agent", ("assistant",)),
    ("database", ("db", "export")),
)
AUTHOR_HELP = "who writes it (default: $NOTEWELL_AUTHOR)"
MODEL_HELP = "the model that wrote it (default: $NOTEWELL_MODEL)"


def commands_epilog(helps: dict[str, str]) -> str:
    """The commands, by group, each with its one line of help."""
    width = max(len(name) for name in helps) + 2
    lines = ["commands:"]
    for group, names in COMMAND_GROUPS:
        lines.append(f"  {group}:")
        lines.extend(f"    {name:<{width}}{helps[name]}" for name in names if name in helps)
    lines.append("")
    lines.append("notewell COMMAND --help: a command's options")
    return "\n".join(lines)


def _add_filters(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters")
    for spec in FILTERS:
        if spec.shape == "choice":  # tag_mode: any unless this flag asks for all
            g.add_argument(spec.cli_option, dest="all_tags", action="store_true", help="require every --tag, not any")
        elif spec.shape == "texts":
            g.add_argument(spec.cli_option, dest=spec.name, action="append", help=f"{spec.help} (repeatable)")
        else:
            g.add_argument(spec.cli_option, dest=spec.name, metavar=spec.metavar, help=spec.help)


def add_core_arguments(ps: dict[str, argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    """The arguments of the note, search, attempt and project commands."""
    _note_arguments(ps)
    _search_arguments(ps)
    _attempt_arguments(ps, common)


def _note_arguments(ps: dict[str, argparse.ArgumentParser]) -> None:
    ps["init"].add_argument("path", nargs="?", help="the folder (default: --store)")
    p = ps["add"]
    p.add_argument("file", nargs="?", metavar="FILE", help="a file, or - for standard input")
    p.add_argument("--text", help="the note text (or the body, with --title/--kind/--tag)")
    p.add_argument("--title", help="the note's title (written into its header)")
    p.add_argument("--kind", help="what kind of note: finding, decision, blocker, dead_end, action...")
    p.add_argument("--tag", action="append", help="a tag for the header (repeatable)")
    p.add_argument(
        "--builds-on", dest="builds_on", action="append", metavar="ID", help="a note this one builds on (repeatable)"
    )
    p.add_argument("--summary", help="a one-line summary for the header")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)
    p.add_argument("--model", default=setting("NOTEWELL_MODEL"), help=MODEL_HELP)
    p.add_argument(
        "--attempt",
        default=setting("NOTEWELL_ATTEMPT"),
        metavar="ID",
        help="write the note on this running attempt (default: $NOTEWELL_ATTEMPT)",
    )
    p = ps["get"]
    p.add_argument("id", help="a note id (or a path inside the store)")
    p.add_argument("--revision", type=int, metavar="N", help="an earlier revision (see notewell history ID)")
    p.add_argument("--raw", action="store_true", help="print the stored text exactly")
    p.add_argument(
        "--working-attempt", metavar="ID", help="record the read on this running attempt (who read what, when)"
    )
    p = ps["edit"]
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument(
        "file", nargs="?", metavar="FILE", help="the whole new text (header included) from a file, or - for stdin"
    )
    p.add_argument("--text", metavar="BODY", help="the new body; the header (title, kind, tags...) stays as it is")
    p.add_argument("--full-text", metavar="TEXT", help="the whole new text, header included")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)
    ps["rm"].add_argument("id", help="the note: an id, or a path inside the store")
    ps["history"].add_argument("id", help="the note (deleted ones too): an id, or a path inside the store")
    ps["tags"].add_argument("--notes", action="store_true", help="also each note's tags and summary")
    ps["links"].add_argument("id", help="the note: an id, or a path inside the store")
    ps["links"].add_argument("--depth", type=int, default=1, help="steps to follow each way (1-10; default 1)")
    p = ps["tag"]
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument("tags", nargs="+", metavar="TAG", help="tags to add (slugged: 'Cache Plan' is cache-plan)")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)
    p = ps["set-summary"]
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument("file", nargs="?", metavar="FILE", help="the summary from a file, or - for standard input")
    p.add_argument("--text", help="the summary")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)
    ps["header"].add_argument("file", nargs="?", metavar="FILE", help="a file, or - (default) for standard input")


def _search_arguments(ps: dict[str, argparse.ArgumentParser]) -> None:
    ps["brief"].add_argument("project", help="the project's name")
    ps["brief"].add_argument("--recent", type=int, default=10, metavar="N", help="recent notes to list (default 10)")
    p = ps["search"]
    p.add_argument(
        "query",
        nargs="*",
        help='search words (FTS5 syntax works: "a phrase", OR, NOT, prefix*, title:x);'
        " none with --project or --attempt: its recent notes",
    )
    p.add_argument("--limit", type=int, default=10, metavar="N", help="cards to print (default 10)")
    p.add_argument(
        "--mode",
        choices=("keyword", "semantic", "both", "hybrid"),
        default="keyword",
        help="keyword (exact, the default), semantic (by meaning), both lists side by side, or hybrid (fused)",
    )
    p.add_argument("--wait", action="store_true", help="embed notes not embedded yet before a semantic search")
    _add_filters(p)
    p = ps["list"]
    p.add_argument("--limit", type=int, default=20, metavar="N", help="notes to print (default 20)")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip this many first (default 0)")
    _add_filters(p)
    ps["summary"].add_argument("--recent", type=int, default=5, metavar="N", help="recent notes to list (default 5)")
    ps["reindex"].add_argument("--progress", action="store_true", help="draw the progress bar even when not a terminal")
    ps["embed"].add_argument("--progress", action="store_true", help="draw the progress bar even when not a terminal")
    ps["embed"].add_argument("--limit", type=int, help="embed at most this many notes")
    ps["watch"].add_argument(
        "--embed", action="store_true", help="also embed new and changed notes for semantic search, as they come"
    )
    ps["watch"].add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="stop after this long without a question from another command (and do not start if a watcher runs)",
    )


def _attempt_arguments(ps: dict[str, argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    attempt_sub = ps["attempt"].add_subparsers(
        dest="attempt_command", metavar="ACTION", help="start, end, show or list"
    )
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
    project_sub = ps["project"].add_subparsers(dest="project_command", metavar="ACTION", help="set or show")
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
