"""The reference, written from the tables the code runs on (``python -m notewell.interfaces.reference``
prints it; ``docs/reference.md`` holds it, and a test fails when the two differ)."""

from __future__ import annotations

from ..errors import ERROR_KINDS
from ..services.conversation_sources import SOURCE_TABLE
from ..settings import SETTINGS

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
        "`notewell import SOURCE [PATH]` brings in the conversations of another tool (the README says how).",
        "",
        "| source | give it | read as |",
        "|---|---|---|",
    ]
    for s in SOURCE_TABLE:
        read = (
            "session transcripts, one file each" if s.shape is None else f"an export: each conversation has `{s.shape}`"
        )
        lines.append(f"| `{s.name}` | {s.files} | {read} |")
    return lines


def reference_markdown() -> str:
    """The whole reference as Markdown."""
    lines = ["# notewell reference", "", "Generated from the code's own tables: do not edit by hand.", ""]
    lines += _errors() + [""] + _settings() + [""] + _sources()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference_markdown())
