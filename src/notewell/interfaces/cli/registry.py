"""Every command, in one list: the parser, the grouped ``notewell --help`` and the reference are
made from it. A new command is one ``Command`` in its topic module's ``COMMANDS`` (a new topic
module is named here too)."""

from __future__ import annotations

from . import (
    assistant,
    attempts,
    bench,
    config,
    db,
    headers,
    import_command,
    install,
    notebook,
    notes,
    reports,
    search,
    server,
    start,
    watcher,
)
from .command import Command

__all__ = ["COMMANDS", "GROUPS", "command_named", "grouped"]

# The groups of --help, in its order: the commands are listed by what they are for.
GROUPS: tuple[str, ...] = (
    "start",
    "notes",
    "search",
    "projects and attempts",
    "servers",
    "notebook",
    "agent runtimes",
    "agent",
    "database",
)

# Within a group, --help lists its commands in this order.
COMMANDS: tuple[Command, ...] = (
    *start.COMMANDS,
    *config.COMMANDS,
    *notes.COMMANDS,
    *headers.COMMANDS,
    *search.COMMANDS,
    *watcher.COMMANDS,
    *attempts.COMMANDS,
    *reports.COMMANDS,
    *server.COMMANDS,
    *notebook.COMMANDS,
    *install.COMMANDS,
    *import_command.COMMANDS,
    *assistant.COMMANDS,
    *db.COMMANDS,
    *bench.COMMANDS,
)

_BY_NAME = {command.name: command for command in COMMANDS}


def command_named(name: str) -> Command:
    """The command called *name* (one the parser accepted)."""
    return _BY_NAME[name]


def grouped() -> list[tuple[str, list[Command]]]:
    """The commands group by group, as --help and the reference list them."""
    return [(group, [c for c in COMMANDS if c.group == group]) for group in GROUPS]
