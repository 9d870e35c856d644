"""The notebook validator: every rule of the working-context notebook, as errors and warnings.

Errors refuse a revision (the last accepted one stays in force); warnings do not. Each
finding carries the line it is about (0: the whole notebook).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .notebook_doc import PREFIX, NotebookDoc
from .token_count import estimate_tokens

__all__ = ["DEFAULT_BUDGET", "Finding", "estimate_tokens", "validate_notebook"]

DEFAULT_BUDGET = 2000
STATES = ("todo", "doing", "done", "blocked")
_EVENT = re.compile(r"\bE\d{4,}\b")
_STATE = re.compile(r"^\[(?P<state>[^\]]*)\]\s*\S")
_SOURCE = re.compile(
    r"^(?:E\d{4,}"  # a raw event
    r"|\S+:\d+(?:-\d+)?"  # file:line
    r"|https?://\S+"  # a URL
    r"|`[^`]+`|\$ .+|(?:command|cmd):\s*\S.*)$"  # a command
)
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|prompts?|rules|guidelines)\b"
    r"|\byou are now\b|\bnew instructions\b|\bsystem prompt\b|\bdeveloper message\b"
    r"|\bact as (?:an?|the)\b|\bjailbreak\b|<\s*/?\s*(?:system|assistant|instructions?)\s*>",
    re.IGNORECASE,
)
_ORDER = re.compile(r"^(?:always|never|you must|you should|must|do not|don't|from now on|make sure)\b", re.IGNORECASE)
_SECRET = re.compile(
    r"AKIA[0-9A-Z]{16}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bsk-[A-Za-z0-9_-]{20,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bnwt_[A-Za-z0-9_-]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\."
    r"|\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\s*[:=]\s*\S{4,}",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def _status(item_text: str) -> str | None:
    last = item_text.rsplit("|", 1)
    return last[1].strip().lower() if len(last) == 2 else None


def _fact_body(item_text: str) -> str:
    """A fact without its verified/unverified mark: what must never change in place."""
    parts = [p.strip() for p in item_text.split("|")]
    if parts and parts[-1].lower() in ("verified", "unverified"):
        parts = parts[:-1]
    return " | ".join(parts)


def validate_notebook(
    doc: NotebookDoc,
    text: str,
    *,
    previous: NotebookDoc | None,
    retired: Iterable[str],
    raw_ids: set[str],
    budget: int = DEFAULT_BUDGET,
) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) for *doc* as the next revision after *previous* (the accepted one).
    *retired*: ids that left the notebook in an accepted revision (never to come back)."""
    errors = [Finding(line, message) for line, message in doc.problems]
    warnings: list[Finding] = []
    err, warn = errors.append, warnings.append

    goal = [t for _, t in doc.sections.get("Goal", []) if t.strip()]
    if not goal:
        err(Finding(0, "## Goal is missing or empty: say the outcome in one or two lines"))
    for name in ("Facts", "Tracker", "Next"):
        if name not in doc.sections:
            err(Finding(0, f"## {name} is missing (it may be empty, but keep the heading)"))
    next_lines = [t for _, t in doc.sections.get("Next", []) if t.strip()]
    if len(next_lines) > 3:
        err(Finding(doc.sections["Next"][3][0], "## Next is the single next step: three lines at most"))

    seen: dict[str, int] = {}
    retired = set(retired)
    for item in doc.items:
        if item.id in seen:
            err(Finding(item.line, f"{item.id} appears twice (first on line {seen[item.id]}): ids are unique"))
        seen.setdefault(item.id, item.line)
        want = PREFIX.get(item.section)
        if want and not item.id.startswith(want):
            err(Finding(item.line, f"{item.id} is in ## {item.section}, whose ids start with {want}"))
        if item.section == "Dropped":
            if item.id[0] not in "FTNR":
                err(Finding(item.line, f"{item.id}: dropped items keep their F/T/N/R id"))
            if not item.text.strip():
                err(Finding(item.line, f"{item.id} is dropped without a reason: say why after the id"))
        elif item.id in retired:
            err(Finding(item.line, f"{item.id} was dropped earlier: ids are never reused, take a new one"))
        if item.section == "Facts":
            source = item.field("source")
            status = _status(item.text)
            if not source:
                err(
                    Finding(item.line, f"{item.id} has no '| source: ...' (an event id, file:line, a URL or a command)")
                )
            elif not _SOURCE.match(source):
                err(Finding(item.line, f"{item.id}: '{source}' is not an event id, file:line, a URL or a command"))
            if status not in ("verified", "unverified"):
                err(Finding(item.line, f"{item.id} must end with '| verified' or '| unverified'"))
        elif item.section == "Tracker":
            m = _STATE.match(item.text)
            if not m or m.group("state") not in STATES:
                err(Finding(item.line, f"{item.id}: a tracker item opens with its state: [{'|'.join(STATES)}]"))
        elif item.section == "Ruled out":
            if not item.field("reason"):
                err(Finding(item.line, f"{item.id} needs '| reason: ...' (why it failed, so it is not retried)"))
        elif item.section == "Notes" and _ORDER.match(item.text):
            warn(Finding(item.line, f"{item.id} reads as an order: a note records what happened, it sets no rules"))

    # Every line: cited events exist; no injected instructions; no secrets.
    for number, line in enumerate(text.splitlines(), 1):
        for event in _EVENT.findall(line):
            if event not in raw_ids:
                err(Finding(number, f"{event} is not in the raw log (log the output first: notebook log)"))
        if _INJECTION.search(line):
            err(Finding(number, "this line carries instruction-like text: cite the raw event instead of quoting it"))
        if _SECRET.search(line):
            err(
                Finding(
                    number, "this line holds a secret: record where it lives (a file, a vault entry), not its value"
                )
            )

    if previous is not None:
        now = {i.id: i for i in doc.items}
        before_live = [i for i in previous.items if i.section != "Dropped"]
        for old in before_live:
            new = now.get(old.id)
            if new is None:
                err(Finding(0, f"{old.id} ({old.section}) vanished: move it to ## Dropped with a reason"))
            elif old.section == "Facts" and new.section == "Facts" and _fact_body(old.text) != _fact_body(new.text):
                err(
                    Finding(
                        new.line,
                        f"{old.id} was rewritten in place: drop it with a reason and add the corrected fact"
                        " under a new id",
                    )
                )
        newly_dropped = [i for i in doc.in_section("Dropped") if i.id in {o.id for o in before_live}]
        if len(before_live) >= 4 and len(newly_dropped) * 2 > len(before_live):
            warn(
                Finding(
                    0,
                    f"{len(newly_dropped)} of {len(before_live)} items dropped at once: keep the detail that saves"
                    " redoing the work",
                )
            )

    used = estimate_tokens(text)
    if used > budget:
        err(Finding(0, f"about {used} tokens, over the budget of {budget}: trim (drop stale items), do not raise it"))
    return errors, warnings
