"""The working notebook's text: sections and items, parsed leniently with line numbers.

    # Working notebook: <task>
    ## Goal / ## Facts / ## Tracker / ## Notes / ## Ruled out / ## Dropped / ## Next

Items are ``- [F001] ...`` lines (F facts, T tracker, N notes, R ruled out; Dropped holds
any of them with a reason). Parsing never fails: what does not fit is kept as a problem
with its line number, for the validator to report. :data:`FORMAT` is the one description of
the lines: ``--help``, the template's examples and the validator's messages are made from it.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

__all__ = [
    "EXAMPLE_LINES",
    "FORMAT",
    "PREFIX",
    "SECTIONS",
    "SOURCES",
    "Item",
    "NotebookDoc",
    "format_help",
    "parse_notebook",
    "render_template",
    "split_parts",
]

SECTIONS = ("Goal", "Facts", "Tracker", "Notes", "Ruled out", "Dropped", "Next")
PREFIX = {"Facts": "F", "Tracker": "T", "Notes": "N", "Ruled out": "R"}
# What a fact's source may be, as every message and the help say it.
SOURCES = (
    "an event id (E0003, E0003 line 12), file:line (src/app.py:12, :12-20, :12,30, #L12), a URL,"
    " a command (`make test`, $ make test, cmd: make test) or user (said in the conversation)"
)
# Each section's line: (section, its form, an example). The template writes the examples as
# comments the validator skips, --help shows the forms.
FORMAT: tuple[tuple[str, str, str], ...] = (
    ("Goal", "the outcome, in one or two plain lines", ""),
    (
        "Facts",
        "- [F001] what is true | source: SOURCE | verified   (or | unverified)",
        "- [F001] the prod timeout is 4500 ms | source: deploy/app.yaml:12 | verified",
    ),
    (
        "Tracker",
        "- [T001] [STATE] what to do   (STATE: todo, doing, done or blocked)",
        "- [T001] [doing] find the first error in the deploy log",
    ),
    ("Notes", "- [N001] what happened or was seen (not an order)", "- [N001] the retries hide the first error"),
    (
        "Ruled out",
        "- [R001] what was tried | reason: why it failed",
        "- [R001] pool_size 64 | reason: p99 got worse, see E0002",
    ),
    (
        "Dropped",
        "- [F002] why it left   (any F, T, N or R item, keeping its id)",
        "- [F002] the user corrected it: the region is eu-west-1 (F007)",
    ),
    (
        "Next",
        "the next step: one to three plain lines (a '- ' before each is fine), no id",
        "- read the health endpoint",
    ),
)
_EXAMPLE = "<!-- e.g. {} -->"
_GUIDE = "<!-- Examples: accept skips these exact lines; delete them at will. Format: notewell notebook --help -->"
# Skipped only when they are exactly the template's: anything else in a comment would be a way
# round the rules (an unsourced fact kept out of sight of the validator).
EXAMPLE_LINES = frozenset([_GUIDE] + [_EXAMPLE.format(example) for _, _, example in FORMAT if example])
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
        if not line.strip() or line.strip() in EXAMPLE_LINES:
            continue
        if line.lstrip().startswith("<!--"):
            doc.problems.append((number, _NOT_AN_EXAMPLE))
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
            doc.problems.append((number, f"a {section} line must be an item: '{_FORM[section]}'"))
            continue
        doc.items.append(Item(section, item.group("id"), item.group("rest").strip(), number))
    return doc


_FORM = {section: form for section, form, _ in FORMAT}
_NOT_AN_EXAMPLE = "a comment other than the template's examples: write it as an item or delete it"


def render_template(task: str, goal: str) -> str:
    """A new notebook: the goal filled in, every other section holding one example line as a
    comment the validator skips."""
    parts = [f"# Working notebook: {task}", _GUIDE, "", "## Goal", goal.strip(), ""]
    for name, _, example in FORMAT[1:]:
        parts += [f"## {name}", _EXAMPLE.format(example), ""]
    return "\n".join(parts)


def format_help() -> str:
    """The format as ``--help`` gives it: each section's line, the sources, what may be removed."""
    width = max(len(name) for name, _, _ in FORMAT) + 4
    lines = ["the notebook's format (notebook.md; accept checks it):"]
    lines += [f"  {'## ' + name:<{width}}{form}" for name, form, _ in FORMAT]
    sources = f"SOURCE is {SOURCES}; several are joined by ',', ';' or 'and'."
    lines += textwrap.wrap(sources, 100, initial_indent="  ", subsequent_indent="  ")
    lines += [
        "  Leaving: an item leaves only by moving to ## Dropped with its reason; once that is accepted",
        "  its Dropped line may be deleted (the id stays retired; the revisions keep the line). A fact is",
        "  never rewritten: drop it and add the corrected fact under a new id (marking it verified is no",
        "  rewrite); a Tracker, Notes or Ruled out item may be edited in place (a state moved to done, a",
        "  note reworded). Ids are never reused. Comments other than the template's examples are refused.",
    ]
    return "\n".join(lines)
