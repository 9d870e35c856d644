"""The command line explains itself: every option has help text and every command is listed
in one group of ``notewell --help``."""

from __future__ import annotations

import argparse

from notewell.interfaces.cli.app import build_parser
from notewell.interfaces.cli.arguments import COMMAND_GROUPS


def _parsers(parser: argparse.ArgumentParser, path: str = "notewell"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def test_every_option_and_argument_has_help_text():
    missing = [
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._VersionAction) and action.help in (None, "")
    ]
    assert missing == []


def test_every_command_is_in_exactly_one_group_of_the_help():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    grouped = [name for _group, names in COMMAND_GROUPS for name in names]
    assert sorted(grouped) == sorted(commands.choices)
    text = parser.format_help()
    for group, names in COMMAND_GROUPS:
        assert f"  {group}:" in text
        for name in names:
            assert f"    {name} " in text
    assert "keyword search" not in text  # search has four modes
