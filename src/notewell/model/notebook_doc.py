"""The working notebook's text: sections and items, parsed leniently with line numbers.

    # Working notebook: <task>
    ## Goal / ## Facts / ## Tracker / ## Notes / ## Ruled out / ## Dropped / ## Next

Items are ``- [F001] ...`` lines (F facts, T tracker, N notes, R ruled out; Dropped holds
any of them with a reason). Parsing never fails: what does not fit is kept as a problem
with its line number, for the validator to report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PREFIX", "SECTIONS", "Item", "NotebookDoc", "parse_notebook", "render_template", "split_parts"]

SECTIONS = ("Goal", "Facts", "Tracker", "Notes", "Ruled out", "Dropped", "Next")
PREFIX = {"Facts": "F", "Tracker": "T", "Notes": "N", "Ruled out": "R"}
# Greedy groups, stripped in code: a lazy group before \s*$ backtracked quadratically on a line
# padded with blanks (20,000 of them: 1.9 s).
_ITEM = re.compile(r"^\s*[-*]\s+\[(?P<id>[A-Z]\d{3,})\]\s*(?P<rest>.*)$")
_HEADING = re.compile(r"^##\s+(?P<name>.*)")
_TITLE = re.compile(r"^#\s+Working notebook:\s*(?P<task>.*)")


@dataclass(slots=True)
class Item:
    """One ``- [X000] ...`` line: its section, id, text after the id, and line number."""

    section: str
    id: str
    text: str
    line: int

    @property
    def parts(self) -> list[str]:
        """The text split at ``|``, except inside backticks (a command may be a pipeline)."""
        return split_parts(self.text)

    def field(self, name: str) -> str | None:
        """The value of a ``| name: value`` part, if present (the name in any case)."""
        for part in self.parts[1:]:
            key, sep, value = part.partition(":")
            if sep and key.strip().lower() == name:
                return value.strip()
        return None

    @property
    def head(self) -> str:
        """The text before the first ``|``."""
        return self.parts[0].strip()


def split_parts(text: str) -> list[str]:
    """*text* split at every ``|`` outside a backtick span."""
    parts, start, quoted = [], 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif ch == "|" and not quoted:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


@dataclass(slots=True)
class NotebookDoc:
    task: str | None
    sections: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # name -> (line, text) lines
    items: list[Item] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, what is wrong)

    def by_id(self) -> dict[str, Item]:
        return {i.id: i for i in self.items}

    def in_section(self, name: str) -> list[Item]:
        return [i for i in self.items if i.section == name]


def parse_notebook(text: str) -> NotebookDoc:
    """The notebook's structure; unknown headings, stray lines and duplicate sections are problems."""
    doc = NotebookDoc(task=None)
    section: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if (title := _TITLE.match(line)) and title.group("task").strip():
            doc.task = title.group("task").strip()
            continue
        if (heading := _HEADING.match(line)) and heading.group("name").strip():
            name = heading.group("name").strip()
            canonical = next((s for s in SECTIONS if s.lower() == name.lower()), None)
            if canonical is None:
                doc.problems.append((number, f"unknown section '## {name}' (sections: {', '.join(SECTIONS)})"))
                section = None
            elif canonical in doc.sections:
                doc.problems.append((number, f"section '## {canonical}' appears twice"))
                section = canonical
            else:
                doc.sections[canonical] = []
                section = canonical
            continue
        if section is None:
            doc.problems.append((number, "text outside any section"))
            continue
        doc.sections[section].append((number, line))
        if section in ("Goal", "Next"):
            continue
        item = _ITEM.match(line)
        if item is None:
            doc.problems.append((number, f"a {section} line must be an item: '- [{PREFIX.get(section, 'F')}001] ...'"))
            continue
        doc.items.append(Item(section, item.group("id"), item.group("rest").strip(), number))
    return doc


def render_template(task: str, goal: str) -> str:
    """A new notebook: the goal filled in, every other section empty."""
    parts = [f"# Working notebook: {task}", "", "## Goal", goal.strip(), ""]
    for name in SECTIONS[1:]:
        parts += [f"## {name}", ""]
    return "\n".join(parts)
