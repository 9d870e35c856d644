"""The README and docs/ as a newcomer meets them: a short README that opens with connecting an
agent, install lines that work from a clone, links that land, and references written from the code
that name every command, option, setting, tool and route."""

from __future__ import annotations

import argparse
import pathlib
import re

import pytest

from notewell.interfaces.cli.parser import build_parser
from notewell.interfaces.mcp.tools import TOOLS
from notewell.settings import SETTINGS

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
# What a clone installs is the clone: notewell is not on the package index.
INDEX_INSTALL = re.compile(r"pip install\s+['\"]?notewell\b")


def _prose(text: str) -> list[str]:
    """The lines outside code fences."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation but - and _ dropped, spaces as -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        if m := re.match(r"^#{1,6} +(.+?) *#*$", line):
            slug = _slug(m[1])
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(path: pathlib.Path) -> list[str]:
    found = []
    for line in _prose(path.read_text(encoding="utf-8")):
        found += LINK.findall(re.sub(r"`[^`]*`", "", line))
    return found


def test_the_readme_is_short_and_opens_with_connecting_an_agent():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    first = "\n".join(lines[:120])
    for step in ("pip install '.[", "notewell demo", "install claude-code", "notewell", "serve", "token create"):
        assert step in first, step
    assert "(docs/agents.md)" in first and "(docs/reference.md#mcp-tools)" in first
    # The four ways in, each in the table.
    table = [line for line in lines if line.startswith("| ")]
    for way in ("| MCP |", "| CLI |", "| HTTP and the page |", "| Python |"):
        assert any(line.startswith(way) for line in table), way


def test_no_page_installs_notewell_from_the_package_index():
    said = [f"{page.name}: {line.strip()}" for page in PAGES for line in page.read_text().splitlines()]
    assert [line for line in said if INDEX_INSTALL.search(line)] == []


@pytest.mark.slow
def test_every_link_between_the_pages_lands():
    broken, checked = [], 0
    for page in PAGES:
        for target in _links(page):
            if re.match(r"[a-z]+:", target):
                continue  # another site: not ours to check
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            checked += 1
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert checked > 100 and broken == []


def test_every_page_is_in_the_index():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in _links(DOCS / "README.md")}
    pages = {page.name for page in DOCS.glob("*.md")} - {"README.md"}
    assert pages <= linked, sorted(pages - linked)
    assert "../CHANGELOG.md" in linked and "../README.md" in linked and index


def test_the_questions_a_newcomer_could_not_answer_are_answered():
    """All settings in one place, stopping the watcher, the owner token for the page, the notebook's tools."""
    assert "[settings](docs/reference.md#settings)" in (ROOT / "README.md").read_text(encoding="utf-8")
    folder = (DOCS / "folder.md").read_text(encoding="utf-8")
    assert "## Stopping the background watcher" in folder and "kill" in folder
    servers = (DOCS / "servers.md").read_text(encoding="utf-8")
    assert "token create me --owner" in servers and "### Signing in, and editing your own notes" in servers
    notebook = (DOCS / "notebook.md").read_text(encoding="utf-8")
    for tool in TOOLS:
        assert tool.name.startswith("notebook_") <= (f"| `{tool.name}` |" in notebook), tool.name


def _options(parser: argparse.ArgumentParser, path: str = "notewell"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _options(child, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield path, action


def test_every_command_option_tool_setting_and_route_is_documented():
    pytest.importorskip("starlette")
    from notewell.interfaces.cli.registry import COMMANDS
    from notewell.interfaces.http.routes import ROUTES

    reference = (DOCS / "reference.md").read_text(encoding="utf-8")
    common = {"--store", "--database", "--json"}  # said once, above the commands
    missing = [f"command {c.name}" for c in COMMANDS if f"### `notewell {c.name}`" not in reference]
    missing += [
        f"option {path} {option}"
        for path, action in _options(build_parser())
        for option in action.option_strings
        if option not in common and f"`{option}" not in reference and f", {option}" not in reference
    ]
    missing += [f"setting {s.name}" for s in SETTINGS if f"| `{s.name}` |" not in reference]
    missing += [f"tool {t.name}" for t in TOOLS if f"### `{t.name}`" not in reference]
    http = (DOCS / "http-api.md").read_text(encoding="utf-8")
    missing += [f"route {op.method} {op.path}" for op in ROUTES if f"`{op.method} {op.documented_path}`" not in http]
    # A route outside the OpenAPI document is described by its handler's docstring.
    missing += [f"route {op.path}: no docstring" for op in ROUTES if not op.operation_id and not op.handler.__doc__]
    assert missing == []


def test_the_http_reference_is_current():
    pytest.importorskip("starlette")
    from notewell.interfaces.http.reference import http_reference_markdown

    written = (DOCS / "http-api.md").read_text(encoding="utf-8")
    assert written == http_reference_markdown(), "run: python -m notewell.interfaces.http.reference > docs/http-api.md"
