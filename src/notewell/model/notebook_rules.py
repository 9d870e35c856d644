"""The notebook validator: every rule of the working-context notebook, as errors and warnings.

Errors refuse a revision (the last accepted one stays in force); warnings do not. Each
finding carries the line it is about (0: the whole notebook).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .notebook_doc import FORMAT, PREFIX, SOURCES, Item, NotebookDoc, split_parts
from .personal_data import personal_data_in, possible_card_number
from .secrets import holds_secret
from .token_count import estimate_tokens

__all__ = [
    "DEFAULT_BUDGET",
    "Finding",
    "estimate_tokens",
    "fact_status",
    "far_over_budget",
    "instruction_like",
    "newly_retired",
    "text_problems",
    "trim_advice",
    "trimmable",
    "validate_notebook",
]

DEFAULT_BUDGET = 3000  # measured: benchmarks/bench_notebook_budget.py and docs/notebook.md#the-budget
# estimate_tokens counts one token for at most 8 characters that are not blank (an ASCII word
# of 8 letters; a run of blanks, however long, is one), so a notebook holding more than this
# many non-blank characters per token of its budget is over it: refused before it is read
# (a 100 KB one took 0.3 s to validate only to be found too long).
_CHARS_PER_TOKEN_MAX = 8
_BLANKS = re.compile(r"\s+")
STATES = ("todo", "doing", "done", "blocked")
_EVENT = re.compile(r"\bE\d{4,}\b")
_STATE = re.compile(r"^\[(?P<state>[^\]]*)\]\s*\S")

# A source is one of these forms (several may be listed, split by ',', ';' or ' and '); words
# after the form are allowed ("E0003 line 12", "`make test` (ran at 10:02)").
_PATHLIKE = (
    r"(?:[\w.~-]*/[\w./~-]*|[\w-]+(?:\.[\w-]+)+"
    r"|Makefile|Dockerfile|Jenkinsfile|Procfile|OWNERS|CODEOWNERS|README|LICENSE)"
)
_SOURCE_FORMS = re.compile(
    r"^(?:(?-i:E\d{4,})(?::\d{1,7})?"  # a raw event (and a line in it)
    rf"|{_PATHLIKE}(?::L?\d{{1,7}}(?:-\d{{1,7}}|:\d{{1,4}})?|#L\d{{1,7}}(?:-L?\d{{1,7}})?| line \d{{1,7}})"  # file:line
    r"|(?:https?|ftp|s3|gs)://(?:localhost|[\w-]+(?:\.[\w-]+)+|\[[0-9a-f:]+\])(?::\d+)?(?:[/?#]\S*)?"  # a URL
    r"|file:///\S+|(?:s3|gs)://[\w.-]+(?:/\S*)?"
    r"|`[^`]+`|\$ \S.*|(?:command|cmd):\s*\S.*"  # a command
    r"|(?:the )?user|conversation)"  # something the user said in the conversation
    r"(?:\s.*)?$",
    re.IGNORECASE,
)
_SOURCE_SPLIT = re.compile(r"\s*[,;]\s*|\s+and\s+")
# More lines of the file named before it: "app.yaml:6,8" lists lines 6 and 8 of app.yaml (words may follow,
# as after any form: "app.yaml:6 (port), 8 (host)").
_MORE_LINES = re.compile(r"^(?:#?L|line )?\d{1,7}(?:-L?\d{1,7})?(?:\s.*)?$", re.IGNORECASE)
_FILE_LINE = re.compile(
    rf"^{_PATHLIKE}(?::L?\d{{1,7}}(?:-\d{{1,7}})?|#L\d{{1,7}}(?:-L?\d{{1,7}})?| line \d{{1,7}})(?:\s.*)?$",
    re.IGNORECASE,
)

# Text that tries to steer the agent, matched on a folded line (see _fold) so that zero-width
# characters, fullwidth letters and Cyrillic look-alikes do not hide it. Topics are fine ("the
# system prompt is built in prompt.py"); commands addressed to the reader are not.
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
    r"(?:previous|prior|above|earlier|preceding|foregoing|system|safety|original)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:everything|all\s+(?:that|you))\b"
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:your|my|the|these)\s+"
    r"(?:instructions?|rules|guidelines|directions|directives|prompts?|polic(?:y|ies)|constraints)\b"
    r"|\byou are (?:now|no longer)\s+(?:a|an|the|in|my|dan|free|unrestricted|jailbroken|bound|allowed|able)\b"
    r"|\bnew (?:instructions?|rules|directives?)\s*:"
    r"|\bfrom now on,?\s+(?:you|the assistant|the agent)\b"
    r"|\bpretend (?:you are|to be|you're)\b"
    r"|\b(?:act|roleplay|role-play) as (?:root|admin|an? (?:unrestricted|different|new|evil)|if you)\b"
    r"|<\|im[ _](?:start|end)\|>|\[/?(?:system|inst)\]|<\s*/?\s*(?:system|assistant|instructions?)\s*>"
    r"|^\W*(?:\[[A-Z]\d{3,}\]\s*)?#{1,6}\s*(?:instructions?|system)\b"
    r"|^\W*(?:\[[A-Z]\d{3,}\]\s*)?(?:system|assistant|developer)\s*:\s*(?:you|ignore|disregard|sure|as an ai)\b"
    r"|\bdo anything now\b|\bact as (?:a|an) (?:shell|terminal|linux|unrestricted|different|new|evil)\b",
    re.IGNORECASE,
)
_ROLE_LINE = re.compile(r"(?:^|[\s\]>])(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:")  # upper case: a role marker
_ORDER = re.compile(
    r"^(?:please\s+|remember to\s+|important:\s*)*"
    r"(?:(?:always|never)(?![-\w])(?!\s+\w+(?:ed|s)\b)|you must|you should|do not(?!\s+know)|don't(?![-\w])"
    r"|from now on|make sure)",
    re.IGNORECASE,
)
_FOLD = str.maketrans(
    "аеорсухіјѕԁɡмтнквАЕОРСУХІЈЅМТНКВ",
    "aeopcyxijsdgmtnkbAEOPCYXIJSMTHKB",
)
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"
)


def _fold(line: str) -> str:
    """The line as a reader sees it: NFKC (fullwidth -> ASCII), invisible characters gone,
    Cyrillic look-alikes folded to Latin."""
    folded = _INVISIBLE.sub("", unicodedata.normalize("NFKC", line)).translate(_FOLD)
    return re.sub(r"(?<=[A-Za-z])[-_](?=[A-Za-z])", " ", folded)  # ignore-all-previous-instructions


def _is_source(source: str) -> bool:
    """Every listed source is an event id, file:line, a URL, a command or the user."""
    pieces, buf, depth, quoted = [], "", 0, False
    i = 0
    while i < len(source):  # split at ',' ';' ' and ', but not inside backticks or parentheses
        ch = source[i]
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "([":
            depth += 1
        elif not quoted and ch in ")]" and depth:
            depth -= 1
        elif not quoted and not depth:
            m = _SOURCE_SPLIT.match(source, i)
            if m and m.end() > i:
                pieces.append(buf)
                buf, i = "", m.end()
                continue
        buf += ch
        i += 1
    pieces.append(buf)
    pieces = [p.strip() for p in pieces if p.strip()]
    in_file = False  # the pieces so far name lines of one file: a bare line number may follow
    for piece in pieces:
        if in_file and _MORE_LINES.match(piece):
            continue
        if not _SOURCE_FORMS.match(piece):
            return False
        in_file = bool(_FILE_LINE.match(piece))
    return bool(pieces)


def fact_status(item_text: str) -> str | None:
    """``verified`` or ``unverified`` (or whatever the last ``|`` part says), lower case."""
    parts = split_parts(item_text)
    return parts[-1].strip().lower() if len(parts) > 1 else None


def _fact_body(item_text: str) -> str:
    """A fact without its verified/unverified mark, spacing and key case normalised: what
    must never change in place."""
    parts = [" ".join(p.split()) for p in split_parts(item_text)]
    if len(parts) > 1 and parts[-1].lower() in ("verified", "unverified"):
        parts = parts[:-1]
    out = []
    for part in parts:
        key, sep, value = part.partition(":")
        if sep and re.fullmatch(r"\s*[A-Za-z][\w ]*", key):
            part = f"{key.strip().lower()}: {value.strip()}"
        out.append(part)
    return " | ".join(out)


def instruction_like(text: str) -> bool:
    """True when a line of *text* reads like instructions addressed to an agent (the trust
    rules' injection check: "ignore previous instructions", a SYSTEM: line, a fake chat tag)."""
    return any(_INJECTION.search(f) or _ROLE_LINE.search(f) for f in map(_fold, text.splitlines()))


def text_problems(text: str) -> list[str]:
    """What the trust rules refuse in *text* (injected instructions, secrets, personal data), one per kind."""
    found = []
    folded = _fold(text)
    if _INJECTION.search(folded) or _ROLE_LINE.search(folded):
        found.append("it carries instruction-like text: cite the raw event instead of quoting it")
    if holds_secret(text) or holds_secret(folded):
        found.append("it holds a secret: record where it lives (a file, a vault entry), not its value")
    personal = personal_data_in(text)
    if personal is not None:
        found.append(f"it holds personal data ({personal}): record where it lives (a file, a record id), not its value")
    return found


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def far_over_budget(text: str, budget: int = DEFAULT_BUDGET) -> Finding | None:
    """The finding for a notebook far past *budget*, found by its length alone, or None."""
    most = _CHARS_PER_TOKEN_MAX * budget
    if len(text) <= most:
        return None
    solid = len(text) - sum(len(run) for run in _BLANKS.findall(text))
    if solid <= most:
        return None
    return Finding(
        0, f"{solid:,} characters besides blanks, far over the budget of {budget} tokens (at most {most:,}): trim it"
    )


_Add = Callable[[Finding], None]
_FORM = {section: form for section, form, _ in FORMAT}


def validate_notebook(
    doc: NotebookDoc,
    text: str,
    *,
    previous: NotebookDoc | None,
    retired: Iterable[str],
    raw_ids: set[str],
    budget: int = DEFAULT_BUDGET,
    raw_problems: Mapping[str, str] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) for *doc* as the next revision after *previous* (the accepted one).
    *retired*: ids that left the notebook in an accepted revision (never to come back);
    *raw_problems*: raw events whose stored output is gone or changed (id -> why)."""
    errors = [Finding(line, message) for line, message in doc.problems]
    warnings: list[Finding] = []
    err, warn = errors.append, warnings.append
    retired = set(retired) | newly_retired(None, previous) if previous is not None else set(retired)
    _check_sections(doc, err)
    _check_items(doc, retired, err, warn)
    _check_citations(doc, raw_ids, raw_problems or {}, err)
    _check_lines(text, err, warn)
    if previous is not None:
        _check_history(doc, previous, retired, err, warn)
    used = estimate_tokens(text)
    if used > budget:
        advice = trim_advice(previous) if previous is not None else "move stale items to ## Dropped"
        err(Finding(0, f"about {used} tokens, over the budget of {budget}: {advice}"))
    return errors, warnings


def newly_retired(before: NotebookDoc | None, after: NotebookDoc) -> set[str]:
    """The ids *after* retires: every id in its Dropped section, and every id of *before* it
    no longer holds (a Dropped line deleted). The one rule for accept's state.json and for
    the retired ids read back from the revisions."""
    gone = {i.id for i in before.items} - {i.id for i in after.items} if before is not None else set()
    return gone | {i.id for i in after.in_section("Dropped")}


def trimmable(accepted: NotebookDoc) -> dict[str, list[str]]:
    """What the next revision may take out of *accepted* to save tokens: its Dropped lines
    (deleted; their ids stay retired) and its done tracker items (moved to Dropped)."""
    done = [i.id for i in accepted.in_section("Tracker") if (m := _STATE.match(i.text)) and m["state"] == "done"]
    return {"dropped": [i.id for i in accepted.in_section("Dropped")], "done": done}


def trim_advice(accepted: NotebookDoc) -> str:
    """What to take out to save tokens, named, or how to make room when nothing is stale."""
    can = trimmable(accepted)
    advice = []
    if can["dropped"]:
        advice.append(f"delete the accepted ## Dropped lines ({_some(can['dropped'])}; their ids stay retired)")
    if can["done"]:
        advice.append(f"move the done tracker items ({_some(can['done'])}) to ## Dropped")
    if advice:
        return " and ".join(advice)
    return (
        "nothing is stale yet (no accepted Dropped lines, no done tracker items): move what the task no longer"
        " needs to ## Dropped with a reason, or shorten notes"
    )


def _some(ids: list[str]) -> str:
    return ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")


def _next_id(doc: NotebookDoc, retired: set[str], prefix: str) -> str:
    """The next free id of *prefix*: past every id in the notebook and every retired one."""
    used = [int(i[1:]) for i in {*(x.id for x in doc.items), *retired} if i[0] == prefix and i[1:].isdigit()]
    return f"{prefix}{max(used, default=0) + 1:03d}"


def _check_sections(doc: NotebookDoc, err: _Add) -> None:
    """The headings every notebook has: a goal, facts, a tracker, one next step."""
    goal = [t for _, t in doc.sections.get("Goal", []) if t.strip()]
    if not goal:
        err(Finding(0, "## Goal is missing or empty: say the outcome in one or two lines"))
    for name in ("Facts", "Tracker", "Next"):
        if name not in doc.sections:
            err(Finding(0, f"## {name} is missing (it may be empty, but keep the heading)"))
    next_lines = [t for _, t in doc.sections.get("Next", []) if t.strip()]
    if len(next_lines) > 3:
        line = doc.sections["Next"][3][0]
        err(Finding(line, f"## Next is the single next step: three lines at most ({_FORM['Next']})"))


def _check_items(doc: NotebookDoc, retired: set[str], err: _Add, warn: _Add) -> None:
    """Each item: a unique id of its section, never a retired one, and its section's fields."""
    seen: dict[str, int] = {}
    for item in doc.items:
        if item.id in seen:
            err(Finding(item.line, f"{item.id} appears twice (first on line {seen[item.id]}): ids are unique"))
        seen.setdefault(item.id, item.line)
        want = PREFIX.get(item.section)
        if want and not item.id.startswith(want):
            err(Finding(item.line, f"{item.id} is in ## {item.section}, whose ids start with {want}"))
        if item.section == "Dropped":
            if item.id[0] not in "FTNR":
                err(Finding(item.line, f"{item.id}: a dropped item keeps its F, T, N or R id: '{_FORM['Dropped']}'"))
            if not item.text.strip():
                err(Finding(item.line, f"{item.id} is dropped without a reason: '- [{item.id}] why it left'"))
        elif item.id in retired:
            free = _next_id(doc, retired, item.id[0])
            err(Finding(item.line, f"{item.id} was dropped earlier: ids are never reused, take a new one ({free})"))
        _check_fields(item, err, warn)


def _check_fields(item: Item, err: _Add, warn: _Add) -> None:
    """What an item of its section must say: a fact its source and status, a tracker item its
    state, a ruled-out one its reason; a note is no order."""
    if item.section == "Facts":
        source = item.field("source")
        status = fact_status(item.text)
        if not source:
            err(Finding(item.line, f"{item.id} has no '| source: SOURCE' ('{_FORM['Facts']}'; SOURCE is {SOURCES})"))
        elif not _is_source(source):
            err(Finding(item.line, f"{item.id}: '{source}' is not a source: a source is {SOURCES}"))
        if status not in ("verified", "unverified"):
            err(Finding(item.line, f"{item.id} must end with '| verified' or '| unverified': '{_FORM['Facts']}'"))
    elif item.section == "Tracker":
        m = _STATE.match(item.text)
        if not m or m.group("state") not in STATES:
            err(Finding(item.line, f"{item.id}: a tracker item opens with its state: '{_FORM['Tracker']}'"))
    elif item.section == "Ruled out":
        if not item.field("reason"):
            err(Finding(item.line, f"{item.id} needs '| reason: ...' (why it failed, so it is not retried):"
                        f" '{_FORM['Ruled out']}'"))  # fmt: skip
    elif item.section == "Notes" and _ORDER.match(item.text):
        warn(Finding(item.line, f"{item.id} reads as an order: a note records what happened, it sets no rules"))


def _check_citations(doc: NotebookDoc, raw_ids: set[str], raw_problems: Mapping[str, str], err: _Add) -> None:
    """Cited events exist: in sources, reasons and "see E0003" (elsewhere E0308 may be a compiler's code)."""
    for item in doc.items:
        cited = " ".join(v for v in (item.field("source"), item.field("reason")) if v)
        cited += " " + " ".join(re.findall(r"\bsee\s+(E\d{4,})", item.text, re.IGNORECASE))
        for event in dict.fromkeys(_EVENT.findall(cited)):
            if event in raw_problems:
                err(Finding(item.line, f"{event} cannot be cited: {raw_problems[event]}"))
            elif event not in raw_ids:
                err(Finding(item.line, f"{event} is not in the raw log (log the output first: notebook log)"))


def _check_lines(text: str, err: _Add, warn: _Add) -> None:
    """Every line: no injected instructions, no secrets."""
    for number, line in enumerate(text.splitlines(), 1):
        for problem in text_problems(line):
            err(Finding(number, f"this line: {problem}"))
        if possible_card_number(line):
            warn(Finding(number, "this line holds a number that could be a card number: if it is one, record where it"
                         " lives, not its value"))  # fmt: skip


def _check_history(doc: NotebookDoc, previous: NotebookDoc, retired: set[str], err: _Add, warn: _Add) -> None:
    """Against the accepted revision: nothing vanishes, no fact is rewritten in place, and not
    most of it dropped at once. Every item leaves the same way: to ## Dropped with a reason,
    whose line may go once that revision is accepted."""
    now = {i.id: i for i in doc.items}
    before_live = [i for i in previous.items if i.section != "Dropped"]
    for old in before_live:
        new = now.get(old.id)
        if new is None:
            err(Finding(0, f"{old.id} ({old.section}) vanished: an item leaves by moving to ## Dropped with a reason"
                        f" ('- [{old.id}] why it left'); accepted there, its line may then be deleted"))  # fmt: skip
        elif old.section == "Facts" and new.section == "Facts" and _fact_body(old.text) != _fact_body(new.text):
            free = _next_id(doc, retired, "F")
            err(
                Finding(
                    new.line,
                    f"{old.id} was rewritten in place: a fact never changes; move it to ## Dropped with a reason"
                    f" and add the corrected fact under a new id ({free})",
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
