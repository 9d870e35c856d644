"""The commands on notes' headers: ``tag``, ``set-summary``, ``tags``, ``header``, and ``links``
(the graph the headers' builds_on make)."""

from __future__ import annotations

import argparse
from typing import Any

from ...model.header import parse_note
from ...settings import setting
from .command import Command
from .note_input import AUTHOR_HELP, decode, read_input
from .output import emit_json
from .store_options import open_api, owner

__all__ = ["COMMANDS"]


def _tag_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument("tags", nargs="+", metavar="TAG", help="tags to add (slugged: 'Cache Plan' is cache-plan)")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)


def cmd_tag(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        note = api.add_tag(owner(), api.resolve(owner(), args.id), list(args.tags), author=args.author)
    if args.json:
        emit_json(note)
    else:
        print(f"{note['id']}: " + " ".join(f"#{t}" for t in note["tags"]))


def _set_summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument("file", nargs="?", metavar="FILE", help="the summary from a file, or - for standard input")
    p.add_argument("--text", help="the summary")
    p.add_argument("--author", default=setting("NOTEWELL_AUTHOR"), help=AUTHOR_HELP)


def cmd_set_summary(args: argparse.Namespace) -> None:
    summary = args.text if args.text is not None else decode(read_input(args.file))
    with open_api(args) as api:
        note = api.set_summary(owner(), api.resolve(owner(), args.id), summary, author=args.author)
    if args.json:
        emit_json(note)
    else:
        print(f"{note['id']}: {note['summary']}")


def _tags_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--notes", action="store_true", help="also each note's tags and summary")


def cmd_tags(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        answer = api.list_tags(owner(), notes=args.notes)
    tags, notes = answer["tags"], answer.get("notes")
    if args.json:
        emit_json(answer)  # {"tags": [...]} (and "notes"), as HTTP and MCP answer
        return
    if not tags:
        print("no tags")
    for row in tags:
        print(f"{row['count']:6d}  {row['tag']}")
    for note in notes or []:
        print(f"\n{note['id']}  {note['title']}")
        print("    " + (" ".join(f"#{t}" for t in note["tags"]) or "(no tags)"))
        if note["summary"]:
            print("    " + note["summary"])


def _header_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE", help="a file, or - (default) for standard input")


def cmd_header(args: argparse.Namespace) -> None:
    parsed = parse_note(decode(read_input(args.file or "-")))
    if args.json:
        emit_json(parsed.to_dict())
        return
    if parsed.header is None:
        print("no header")
    else:
        for key, value in parsed.header.items():
            print(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
    for line in parsed.extra:
        print(f"extra: {line}")


def _links_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the note: an id, or a path inside the store")
    p.add_argument("--depth", type=int, default=1, help="steps to follow each way (1-10; default 1)")


def _link_lines(node: dict[str, Any], key: str, indent: int) -> list[str]:
    lines = []
    for child in node.get(key, []):
        label = child.get("title") or "(no such note)"
        mark = " (again)" if child.get("again") else ""
        lines.append("  " * indent + f"{child['id']}  {label}{mark}")
        lines.extend(_link_lines(child, key, indent + 1))
    return lines


def cmd_links(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        graph = api.links(owner(), api.resolve(owner(), args.id), depth=args.depth)
    if args.json:
        emit_json(graph)
        return
    print(f"{graph['id']}  {graph['title']}")
    for key, label in (
        ("builds_on", "builds on:"),
        ("built_on_by", "built on by:"),
        ("supersedes", "supersedes:"),
        ("superseded_by", "superseded by:"),
    ):
        lines = _link_lines(graph, key, 2)
        if lines or key in ("builds_on", "built_on_by"):  # the supersedes chain only when there is one
            print(f"  {label}" + ("" if lines else " nothing"))
        for line in lines:
            print(line)
    if graph.get("truncated"):
        from ...services.links import MAX_LINKS

        print(f"  (cut at {MAX_LINKS:,} links in all)")


COMMANDS = (
    Command("tag", "notes", "add tags to a note's header, changing nothing else in it", cmd_tag, _tag_arguments),
    Command(
        "set-summary",
        "notes",
        "write a one-line summary into a note's header",
        cmd_set_summary,
        _set_summary_arguments,
    ),
    Command(
        "tags",
        "notes",
        "every tag with its count (--notes: each note's tags and summary)",
        cmd_tags,
        _tags_arguments,
    ),
    Command("header", "notes", "parse a note's header: header, extra and body", cmd_header, _header_arguments),
    Command(
        "links",
        "notes",
        "what a note builds on and what builds on it, and its supersedes chain both ways",
        cmd_links,
        _links_arguments,
    ),
)
