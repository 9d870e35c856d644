"""The ``notewell`` argument parser, made from the registry: one subparser per command, and
``--help`` listing the commands by group."""

from __future__ import annotations

import argparse
from typing import NoReturn, cast

from .command import Command, common_options
from .registry import grouped

__all__ = ["OneLineParser", "build_parser"]


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (as every other error is) instead of the usage block."""

    error_code = 2  # a command's error_exit where it has one

    def error(self, message: str) -> NoReturn:
        self.exit(self.error_code, f"notewell: invalid_argument: {message} (see {self.prog} --help)\n")


def _epilog(groups: list[tuple[str, list[Command]]]) -> str:
    """The commands, by group, each with its one line of help."""
    width = max(len(c.name) for _group, commands in groups for c in commands) + 2
    lines = ["commands:"]
    for group, commands in groups:
        lines.append(f"  {group}:")
        lines.extend(f"    {c.name:<{width}}{c.help}" for c in commands)
    lines.append("")
    lines.append("notewell COMMAND --help: a command's options")
    return "\n".join(lines)


def build_parser() -> OneLineParser:
    common = common_options()
    groups = grouped()
    parser = OneLineParser(
        prog="notewell",
        description="Notes that the next agent can find.",
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        # Listed by group here rather than in argparse's one flat list (no help= on the subparsers).
        epilog=_epilog(groups),
    )
    from ...version import __version__

    parser.add_argument("--version", action="version", version=f"notewell {__version__}")
    # Cast: typeshed wants a subparser's parents of its own class; the common options are a plain parser.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", help="one of the commands below"),
    )
    for _group, commands in groups:
        for command in commands:
            p = sub.add_parser(command.name, description=command.help, parents=[common])
            if command.error_exit is not None and isinstance(p, OneLineParser):
                p.error_code = command.error_exit
            if command.add_arguments is not None:
                command.add_arguments(p)
    return parser
