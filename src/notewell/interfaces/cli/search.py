"""The search commands: ``search``, ``summary``, and the indexes behind them, ``embed`` and
``reindex``. A search that needs the model asks the folder's watcher first (it has the model
loaded), and answers itself when none does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .command import Command
from .db import chosen_database
from .filter_options import add_filter_arguments, filters_from_args
from .output import emit_json, notice, print_cards
from .progress import ProgressBar
from .store_options import folder_named, open_api, open_folder_from_args, owner
from .watcher import helper_config, start_helper

if TYPE_CHECKING:
    from ...model.note import Card

__all__ = ["COMMANDS"]

_MODEL_MODES = ("semantic", "both", "hybrid")  # the modes that need the model


def _search_arguments(p: argparse.ArgumentParser) -> None:
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
    add_filter_arguments(p)


def _search_by_helper(args: argparse.Namespace, query: str) -> tuple[list[Card], int] | None:
    """A search that needs the model, answered by the folder's running watcher (which has it
    loaded), or None when none answers. Nothing here loads numpy or the model."""
    if chosen_database(args) is not None:
        return None  # a database store searches in-process: it has no folder for a socket
    from ...services.search_helper import search_by_helper

    root = Path(folder_named(args)).expanduser().resolve()
    if not root.is_dir():
        return None
    filters = filters_from_args(args)
    return search_by_helper(
        root, config=helper_config(), query=query, mode=args.mode, limit=args.limit, wait=args.wait, filters=filters
    )


def cmd_search(args: argparse.Namespace) -> None:
    query = " ".join(args.query)
    found = _search_by_helper(args, query) if args.mode in _MODEL_MODES else None
    if found is not None:
        # The API's answer, as the owner gets it (who sees every project: the backlog is counted).
        answer = {"query": query, "mode": args.mode, "cards": [c.to_dict() for c in found[0]], "not_embedded": found[1]}
    else:
        with open_api(args) as api:
            answer = api.search_notes(
                owner(), query, limit=args.limit, mode=args.mode, wait=args.wait, **filters_from_args(args)
            )
            if args.mode in _MODEL_MODES and getattr(args, "autowatch", None) is not None:
                # No helper answered: start one for the next searches (this one is answered here).
                args.spawned = getattr(args, "folder", None) is not None and start_helper(args.folder)
    pending = answer.get("not_embedded") or 0
    cards = answer["cards"]
    if pending:
        notice(
            f"notewell: {pending} note(s) not embedded yet, so not searched by meaning:"
            " run `notewell embed` (or --wait)"
        )
    if args.json:
        emit_json(answer)  # as HTTP and MCP answer: query, mode, cards (and not_embedded)
        return
    if args.mode == "both":
        for mode in ("keyword", "semantic"):
            print(f"== {mode}")
            print_cards([c for c in cards if c["mode"] == mode], False, _nothing(pending if mode == "semantic" else 0))
        return
    print_cards(cards, False, _nothing(pending))


def _nothing(pending: int) -> str:
    """What an empty list says: with notes the model has not read yet, that they were left out."""
    if not pending:
        return "no notes match"
    return f"no notes match among those embedded ({pending} not embedded yet: notewell embed)"


def _summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recent", type=int, default=5, metavar="N", help="recent notes to list (default 5)")


def cmd_summary(args: argparse.Namespace) -> None:
    with open_api(args) as api:
        data = api.notes_summary(owner(), recent=args.recent)
    if args.json:
        emit_json(data)
        return
    print(f"{data['total_notes']} notes")
    for row in data["by_kind"]:
        print(f"  {row['kind'] or '(no kind)'}: {row['count']}")
    if data["recent_notes"]:
        print("recent:")
        for card in data["recent_notes"]:
            print(f"  {card['id']}  {card['updated_at'][:16].replace('T', ' ')}  {card['title']}")
    for problem in data["problems"]:
        print(f"unreadable: {problem['path']}: {problem['error']}", file=sys.stderr)


def _embed_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action="store_true", help="draw the progress bar even when not a terminal")
    p.add_argument("--limit", type=int, help="embed at most this many notes")


def cmd_embed(args: argparse.Namespace) -> None:
    bar = ProgressBar("embedding", force=args.progress)
    with open_api(args) as api:
        result = api.embed_pending(owner(), limit=args.limit, progress=bar)
    bar.close()
    if args.json:
        emit_json(result)
    else:
        older = f" and {result['revisions']} older revision(s)" if result.get("revisions") else ""
        print(f"embedded {result['embedded']} note(s){older}; {result['pending']} waiting")


def _reindex_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action="store_true", help="draw the progress bar even when not a terminal")


def cmd_reindex(args: argparse.Namespace) -> None:
    bar = ProgressBar("indexing", force=args.progress)
    with open_folder_from_args(args, create=False, progress=bar) as store:
        # A folder with no index (or another version's) was indexed by opening it: once is enough.
        report = store.last_sync if store.built_on_open else store.reindex(progress=bar)
        total = store.summary()["total_notes"]
    bar.close()
    data = {"total_notes": total, **report.to_dict()}
    if args.json:
        emit_json(data)
        return
    print(f"indexed {total} notes")
    if report.vectors_kept is not None:
        print(f"kept the vectors of {report.vectors_kept:,} notes; {report.to_embed:,} wait for `notewell embed`")
    for problem in report.problems:
        print(f"unreadable: {problem['path']}: {problem['error']}", file=sys.stderr)


COMMANDS = (
    Command(
        "search",
        "search",
        "search the notes (keyword, semantic, both or hybrid); prints cards",
        cmd_search,
        _search_arguments,
    ),
    Command("summary", "search", "counts by kind and the most recent notes", cmd_summary, _summary_arguments),
    Command(
        "embed",
        "search",
        "embed the notes semantic search does not know yet (progress bar)",
        cmd_embed,
        _embed_arguments,
    ),
    Command("reindex", "search", "rebuild the index from the notes folder", cmd_reindex, _reindex_arguments),
)
