"""The command line explains itself: every option has help text, and every command, defined once
in the registry, is listed under its group in ``notewell --help`` and in docs/reference.md."""

from __future__ import annotations

import argparse
import importlib
import pathlib
import pkgutil

import pytest

import notewell.interfaces.cli as cli_package
from notewell.interfaces.cli.command import Command
from notewell.interfaces.cli.parser import build_parser
from notewell.interfaces.cli.registry import COMMANDS, GROUPS

REFERENCE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def _parsers(parser: argparse.ArgumentParser, path: str = "notewell"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def _sections(text: str) -> dict[str, list[str]]:
    """--help's command list: each group's lines, by group."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\ncommands:\n", 1)[1].splitlines():
        if line.startswith("    ") and current is not None:
            current.append(line)
        elif line.startswith("  ") and line.endswith(":"):
            current = sections.setdefault(line.strip()[:-1], [])
        else:
            current = None
    return sections


def test_every_option_and_argument_has_help_text():
    missing = [
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._VersionAction) and action.help in (None, "")
    ]
    assert missing == []


def test_every_command_is_defined_once_in_the_registry():
    names = [c.name for c in COMMANDS]
    assert len(names) == len(set(names))
    # Every module's COMMANDS are registered, each definition once: none forgotten, none twice.
    defined: list[Command] = []
    for info in pkgutil.iter_modules(cli_package.__path__):
        module = importlib.import_module(f"{cli_package.__name__}.{info.name}")
        if "COMMANDS" in module.__all__ and info.name != "registry":  # the registry gathers them
            defined.extend(module.COMMANDS)
    assert sorted(c.name for c in defined) == sorted(names)
    assert all(sum(d is c for d in defined) == 1 for c in COMMANDS)
    assert all(c.help and c.help == c.help.strip() and "\n" not in c.help for c in COMMANDS)
    assert {c.group for c in COMMANDS} == set(GROUPS)  # no group unknown, none empty


def test_every_command_is_listed_under_its_group_in_the_help():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(commands.choices) == [c.name for g in GROUPS for c in COMMANDS if c.group == g]
    text = parser.format_help()
    sections = _sections(text)
    assert list(sections) == list(GROUPS)
    for command in COMMANDS:
        (line,) = [line for line in sections[command.group] if line.split()[0] == command.name]
        assert line.endswith(f" {command.help}")
        assert commands.choices[command.name].description == command.help
    assert sum(len(lines) for lines in sections.values()) == len(COMMANDS)
    assert "keyword search" not in text  # search has four modes


def test_every_command_is_in_the_reference_under_its_group():
    text = REFERENCE.read_text(encoding="utf-8")
    for group in GROUPS:
        names = [f"`{c.name}`" for c in COMMANDS if c.group == group]
        assert f"**{group}**: " + ", ".join(names) + "\n" in text
    for command in COMMANDS:
        assert f"### `notewell {command.name}`\n\n{command.help}\n" in text


@pytest.mark.slow
def test_a_mistyped_command_choice_or_option_gets_the_likely_one_in_one_line(tmp_path):
    from tests.interfaces.cli_harness import run

    cases = [
        (["serach", "cache"], 2, "no command 'serach'; did you mean 'search'? (see notewell --help)"),
        (["search", "--kinds", "blocker", "x"], 2, "did you mean --kind? (see notewell search --help)"),
        (["list", "--limt", "3", "--ofset=2"], 2, "did you mean --limit for --limt, --offset for --ofset?"),
        (["attempt", "strat", "shop"], 2, "invalid choice: 'strat'; did you mean 'start'?"),
        (["attempt", "start", "shop", "--autor", "me"], 2, "did you mean --author? (see notewell attempt start"),
        (["search", "--mode", "hybird", "x"], 2, "invalid choice: 'hybird'; did you mean 'hybrid'?"),
        (["hook", "sesion-start"], 1, "did you mean 'session-start'?"),  # a hook's mistakes exit 1, never 2
    ]
    for argv, code, said in cases:
        done = run(argv, tmp_path / "s", check=False)
        err = done.stderr.decode()
        assert done.returncode == code and said in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert err.startswith("notewell: invalid_argument: ") and not (tmp_path / "s").exists()
    # Nothing close: the choices are listed, as before.
    err = run(["xyzzy"], tmp_path / "s", check=False).stderr.decode()
    assert "did you mean" not in err and "(choose from " in err and "'search'" in err
