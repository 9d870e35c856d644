"""A command's one definition (name, group, help, arguments, handler) and the options every
command takes."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Command", "common_options"]


@dataclass(frozen=True)
class Command:
    """One ``notewell`` command: ``--help``, the parser and the reference are made from these."""

    name: str
    group: str  # one of registry.GROUPS: where --help lists it
    help: str  # its line in --help, and its own --help's description
    run: Callable[[argparse.Namespace], None]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    # Every error's exit status, usage mistakes included, instead of the error table's: a
    # runtime's hook exits 1, since to a runtime 2 means "block".
    error_exit: int | None = None
    # False where main() must not leave a watcher behind on a large folder: the watcher itself,
    # and a runtime's hook (no place for a 30-minute process).
    starts_watcher: bool = True


def common_options() -> argparse.ArgumentParser:
    """--store, --user-store, --database and --json, as a parent parser for every command and subcommand
    (suppressed defaults: given before or after the command, neither hides the other)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store", default=argparse.SUPPRESS, help="the notes folder (default: $NOTEWELL_STORE or ./notes)"
    )
    common.add_argument(
        "--user-store",
        action="store_true",
        default=argparse.SUPPRESS,
        help="your own store, the same in every folder: $NOTEWELL_STORE, else ~/notes (not ./notes; what the"
        " plugin and extension use; not with --store)",
    )
    common.add_argument(
        "--database",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="a store in PostgreSQL, postgresql://… (default: $NOTEWELL_DATABASE; not with --store)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON (the same shapes as the Python API)"
    )
    return common
