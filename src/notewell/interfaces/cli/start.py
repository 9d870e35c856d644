"""The first commands: ``demo`` (a store with sample notes, searched) and ``init``."""

from __future__ import annotations

import argparse
import shlex

from .command import Command
from .next_steps import next_steps
from .output import emit_json, print_cards
from .store_options import open_from_args, owner

__all__ = ["COMMANDS", "DEMO_STORE"]

DEMO_STORE = "notewell-demo"


_DEMO_NOTES = [
    (
        "---\ntitle: Clause learning stalls above 40k variables\nkind: dead_end\ntags: [sat, cdcl, scaling]\n"
        "model: demo-model\n---\n\nTried the CDCL branch with phase saving on the large fixture. Above 40k "
        "variables the learned-clause database grows faster than restarts can prune it.\n"
    ),
    (
        "---\ntitle: Restart policy chosen\nkind: decision\ntags: [sat, restarts]\n---\n\nChose Luby restarts "
        "(unit 512) over geometric: fewer timeouts on the medium fixtures. Script: bench/restarts.py.\n"
    ),
    (
        "---\ntitle: 缓存击穿的解决办法\nkind: conclusion\ntags: [缓存, 后端]\n---\n\n热点键过期时所有请求同时回源。"
        "给过期时间加随机抖动，并用互斥锁只让一个请求重建缓存。\n"
    ),
    (
        "# Dependency conflict in the business layer\n\nThree modules pin incompatible versions of the HTTP "
        "client. Blocked until the vendor releases 2.4.\n"
    ),
]


def cmd_demo(args: argparse.Namespace) -> None:
    # Sample notes go where the command line says, else into a folder of their own: never into
    # the store NOTEWELL_STORE or NOTEWELL_DATABASE names (the one a person's agents use).
    if not args.store and not args.database:
        args.store = DEMO_STORE
    from ...services.server_api import ServerAPI

    with open_from_args(args) as store:
        if not store.list_notes(limit=1):
            added = store.add_notes([t for t in _DEMO_NOTES], author="demo")
            first = added[0].id
            store.add_note(
                f"---\ntitle: Digest: SAT solver scaling\nkind: digest\nbuilds_on: [{first}, {added[1].id}]\n---\n\n"
                "Restarts help on medium fixtures; clause learning stalls above 40k variables.\n",
                author="demo",
            )
        print(f"store: {store.location}\n")
        for query in ("clause learning", "缓存", "why is the solver slow on large fixtures?"):
            cards = ServerAPI(store).search_notes(owner(), query, limit=3)["cards"]
            if args.json:
                emit_json({"query": query, "cards": cards})
                continue
            print(f"$ notewell search {query!r}")
            print_cards(cards, False, "no notes match")
            print()
        if not args.json:
            where = f" --store {shlex.quote(args.store)}" if args.store else ""
            print("next:")
            for line in next_steps(where):
                print("  " + line)


def _init_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", help="the folder (default: --store)")


def cmd_init(args: argparse.Namespace) -> None:
    if args.path:
        args.store = args.path
    with open_from_args(args) as store:
        count = store.summary()["total_notes"]
        if args.json:
            emit_json({"store": store.location, "total_notes": count})
        else:
            print(f"store ready at {store.location} ({count} notes)")


COMMANDS = (
    Command(
        "demo",
        "start",
        f"make a demo store (./{DEMO_STORE}, or --store), add sample notes, search them",
        cmd_demo,
    ),
    Command("init", "start", "create a store (or check an existing one)", cmd_init, _init_arguments),
)
