"""The ``notewell`` argument parser, made from the registry: one subparser per command, and
``--help`` listing the commands by group."""

from __future__ import annotations

import argparse
import re
from typing import NoReturn, cast

from ..closest import closest
from .command import Command, common_options
from .registry import grouped

__all__ = ["OneLineParser", "build_parser"]


_INVALID_CHOICE = re.compile(r"(?P<head>.*)invalid choice: (?P<value>.*?) \(choose from (?P<choices>.*)\)$", re.DOTALL)


def _unquoted(word: str) -> str:
    return word[1:-1] if len(word) > 1 and word[0] == word[-1] and word[0] in "'\"" else word


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (as every other error is) instead of the usage
    block, and the command, choice or option a mistyped one most likely meant."""

    error_code = 2  # a command's error_exit where it has one

    def error(self, message: str) -> NoReturn:
        self.exit(self.error_code, f"notewell: invalid_argument: {_with_guess(message)} (see {self.prog} --help)\n")

    def reject_unknown(self, args: argparse.Namespace, extras: list[str]) -> NoReturn:
        """Refuse arguments no parser took (*args*: what was parsed, naming the subcommands):
        said by the innermost command's parser, with the option each mistyped one most likely meant."""
        parser: argparse.ArgumentParser = self
        while (sub := _subcommands(parser)) is not None and getattr(args, sub.dest, None) in sub.choices:
            parser = sub.choices[getattr(args, sub.dest)]
        known = [name for action in parser._actions for name in action.option_strings]
        guesses = []
        for word in extras:
            option = word.split("=", 1)[0]
            if option.startswith("-") and (guess := closest(option, known)) is not None:
                guesses.append((guess, option))
        said = f"unrecognized arguments: {' '.join(extras)}"
        if len(guesses) == 1:
            said += f"; did you mean {guesses[0][0]}?"
        elif guesses:
            said += "; did you mean " + ", ".join(f"{guess} for {option}" for guess, option in guesses) + "?"
        parser.error(said)


def _with_guess(message: str) -> str:
    """An "invalid choice" message with the choice (a command's name from the command table,
    say) that the word most likely mistypes, in place of the list of all of them."""
    m = _INVALID_CHOICE.fullmatch(message)
    if m is None:
        return message
    value = _unquoted(m["value"])
    guess = closest(value, [_unquoted(c.strip()) for c in m["choices"].split(",")])
    if guess is None:
        return message
    if m["head"] == "argument COMMAND: ":  # the command table's names
        return f"no command {value!r}; did you mean {guess!r}?"
    return f"{m['head']}invalid choice: {value!r}; did you mean {guess!r}?"


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


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
