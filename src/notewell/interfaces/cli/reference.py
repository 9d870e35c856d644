"""The reference, written from the tables the code runs on (``python -m notewell.interfaces.cli.reference``
prints it; ``docs/reference.md`` holds it, and a test fails when the two differ)."""

from __future__ import annotations

import argparse
import json

from ...errors import ERROR_KINDS
from ...search.filters import FILTERS
from ...services.conversation_sources import SOURCE_TABLE
from ...settings import SETTINGS
from ..mcp.groups import GROUPS
from ..mcp.tool import FILTER_ARGS, REQUIRED, Arg, ToolSpec
from ..mcp.tools import TOOLS

__all__ = ["reference_markdown"]


def _errors() -> list[str]:
    lines = [
        "## Errors",
        "",
        "Every error has a stable code. The CLI prints `notewell: CODE: message` on stderr (with `--json`,",
        '`{"error": {"code", "message"}}`) and exits with the code\'s status; HTTP answers the status with',
        '`{"error": {"code", "message"}}` (`WWW-Authenticate` with 401, `Retry-After` with 429); an MCP tool',
        "error's text starts with the code, and its structured content is the same JSON. Anything else that",
        "escapes is a bug: exit 70, HTTP 500.",
        "",
        "| code | exit | HTTP | meaning |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{k.code}` | {k.exit_code} | {k.http_status} | {k.meaning} |" for k in ERROR_KINDS]
    return lines


def _settings() -> list[str]:
    lines = [
        "## Settings",
        "",
        "Every `NOTEWELL_*` environment variable notewell reads (`notewell config` prints what each is now,",
        "and whether the environment set it). An option on the command line wins over its variable.",
        "",
        "| variable | takes | default | what it does |",
        "|---|---|---|---|",
    ]
    for s in SETTINGS:
        default = f"`{s.default}`" if s.default is not None else "unset"
        takes = s.takes.replace("|", "\\|")  # a cell's own bars, not the table's
        secret = " (a secret: shown masked)" if s.secret else ""
        lines.append(f"| `{s.name}` | {takes} | {default} | {s.help}{secret} |")
    return lines


def _sources() -> list[str]:
    lines = [
        "## Import sources",
        "",
        "`notewell import SOURCE [PATH]` brings in the conversations of another tool ([importing](import.md)).",
        "",
        "| source | give it | read as |",
        "|---|---|---|",
    ]
    for s in SOURCE_TABLE:
        read = (
            f"sessions, one `{s.pattern}` file each"
            if s.session_file is not None
            else "session transcripts, one file each"
            if s.shape is None
            else f"an export: each conversation has `{s.shape}`"
        )
        lines.append(f"| `{s.name}` | {s.files} | {read} |")
    return lines


_COMMON = {"-h", "--help", "--store", "--user-store", "--database", "--json"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if set(action.option_strings) & _COMMON or isinstance(action, argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        metavar = action.metavar or (action.dest.upper() if action.nargs != 0 else "")
        name = ", ".join(action.option_strings) or str(metavar)
        if action.option_strings and action.nargs != 0:
            name += f" {metavar}"
        help_text = action.help or ""
        if "%(" in help_text:
            help_text = help_text % {**vars(action), "prog": parser.prog}
        rows.append(f"| `{_cell(name)}` | {_cell(help_text)} |")
    return ["| argument | what it does |", "|---|---|", *rows] if rows else []


def _command(name: str, parser: argparse.ArgumentParser, depth: int = 3) -> list[str]:
    lines = [f"{'#' * depth} `notewell {name}`", "", _cell(parser.description or ""), ""]
    table = _arguments(parser)
    lines += [*table, ""] if table else []
    if parser.epilog:  # written as --help prints it (the notebook's format)
        lines += ["```text", parser.epilog, "```", ""]
    sub = _subcommands(parser)
    if sub is not None:
        for child, child_parser in sub.choices.items():
            lines += _command(f"{name} {child}", child_parser, depth + 1)
    return lines


def _commands() -> list[str]:
    from .parser import build_parser
    from .registry import grouped

    parser = build_parser()
    sub = _subcommands(parser)
    assert sub is not None
    lines = [
        "## Commands",
        "",
        "Every command takes `--store DIR` (default `$NOTEWELL_STORE`, else `./notes`), `--user-store` (your",
        "own store, the same from every folder: `$NOTEWELL_STORE`, else `~/notes`), `--database URL` (a",
        "PostgreSQL store, default `$NOTEWELL_DATABASE`) and `--json` (the Python API's shapes); `notewell",
        "COMMAND --help` prints the same as below.",
        "",
    ]
    groups = grouped()
    for group, commands in groups:
        lines += [f"**{group}**: " + ", ".join(f"`{c.name}`" for c in commands), ""]
    for _group, commands in groups:
        for command in commands:
            lines += _command(command.name, sub.choices[command.name])
    return lines


_ACCESS = {"read": "reads only", "write": "writes", "change": "changes or deletes"}


def _arg_row(arg: Arg) -> str:
    default = "required" if arg.default is REQUIRED else f"`{json.dumps(arg.default)}`"
    return f"| `{arg.name}` | {_cell(arg.takes)} | {default} | {_cell(arg.help or '')} |"


def _tool(tool: ToolSpec) -> list[str]:
    where = ", stdio only" if tool.stdio_only else ""
    again = ", idempotent" if tool.idempotent else ""
    said = f"*{tool.title}: {_ACCESS[tool.access]}{again}{where}; group `{tool.group}`*"
    lines = [f"### `{tool.name}`", "", said, ""]
    lines += [" ".join(paragraph.split()) + "\n" for paragraph in tool.description.split("\n\n")]
    own = [arg for arg in tool.args if not arg.filter]
    rows = [_arg_row(arg) for arg in own]
    if len(own) < len(tool.args):
        rows.append("| the [filters](#filters) | | `null` | where to look and which notes to keep |")
    if rows:
        lines += ["| argument | takes | default | what it is |", "|---|---|---|---|", *rows, ""]
    for old, new in tool.renamed:
        lines += [f"`{old}`: the old name of `{new}`, still taken (deprecated: give `{new}`).", ""]
    return lines


def _mcp_tools() -> list[str]:
    lines = [
        "## MCP tools",
        "",
        "`notewell mcp` serves the tools over stdio, to the store's owner; `notewell serve` serves the",
        "tools that are not stdio only at `/mcp`, to the caller its request's token names (no token: public",
        "reads only). Each answers one line of JSON, with the same as structured content; a failure is a",
        "tool error whose text starts with its [code](#errors).",
        "",
        "Every agent session is sent the definitions of the tools it is offered, so a server offers the",
        "`core` group unless `--tools` names more: `default` (the core group), `all`, or groups with commas",
        "(`notewell mcp --tools default,attempts`; `notewell install RUNTIME --tools ...` writes the choice",
        "into the runtime's MCP server).",
        "",
        "Each tool's line gives its annotations: its title, whether it only reads (`readOnlyHint`), changes",
        "or deletes what is there (`destructiveHint`), and whether calling it again with the same arguments",
        "changes nothing more (`idempotentHint`); none reaches past the store (`openWorldHint` false).",
        "Notes are also resources, `notewell://note/{id}`: [the MCP server](agents.md#the-mcp-server).",
        "",
        "| group | tools | what for |",
        "|---|---|---|",
    ]
    for group in GROUPS:
        names = ", ".join(f"`{tool.name}`" for tool in TOOLS if tool.group == group.name)
        lines.append(f"| `{group.name}` | {names} | {_cell(group.help)} |")
    lines.append("")
    for tool in TOOLS:
        lines += _tool(tool)
    help_of = {spec.name: spec.help for spec in FILTERS}
    lines += ["### Filters", "", "| filter | takes | what it keeps |", "|---|---|---|"]
    lines += [f"| `{arg.name}` | {_cell(arg.takes)} | {_cell(help_of[arg.name])} |" for arg in FILTER_ARGS]
    return lines


def reference_markdown() -> str:
    """The whole reference as Markdown."""
    lines = ["# notewell reference", "", "Generated from the code's own tables: do not edit by hand.", ""]
    lines += _commands() + _mcp_tools() + [""] + _errors() + [""] + _settings() + [""] + _sources()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference_markdown())
