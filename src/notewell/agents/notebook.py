"""The working-context notebook for one long task: edit, validate, checkpoint, read back.

A notebook lives in ``<root>/<task>/`` (root: ``--root``, ``$AGENT_CONTEXT_ROOT`` or
``./.agent-context``, which ignores itself in git): ``notebook.md`` is the working copy the
agent edits, ``revisions/0001.md``… the accepted revisions, ``raw/`` the untouched raw
log, ``state.json`` the budget, the ids retired so far and what ``nudge`` already said.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError, StorageError
from ..model.notebook_doc import EXAMPLE_LINES, NotebookDoc, parse_notebook, render_template
from ..model.notebook_rules import (
    DEFAULT_BUDGET,
    Finding,
    estimate_tokens,
    fact_status,
    far_over_budget,
    newly_retired,
    text_problems,
    trim_advice,
    trimmable,
    validate_notebook,
)
from ..model.numbers import whole_number
from ..model.timestamps import now_iso
from ..services.contract import NoteStore
from ..settings import setting
from .raw_log import RawEvent, RawLog, TamperedError

__all__ = ["AcceptResult", "NOTEBOOK_ROOT", "Notebook", "chosen_task", "default_budget", "notebook_root"]

NOTEBOOK_ROOT = ".agent-context"
_TASK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
TIERS = (50, 75, 90)
_EVENT = re.compile(r"\bE\d{4,}\b")
# state.json's "retired" holds the ids in Dropped too (before, only ids whose line was deleted:
# status then reported every dropped id as taken off state.json). A state without this mark is
# read by the old rule until its next accept writes the new one.
_RETIRED_RULE = ("retired_rule", "dropped")


def default_budget() -> int:
    """$NOTEWELL_NOTEBOOK_BUDGET, else DEFAULT_BUDGET."""
    given = setting("NOTEWELL_NOTEBOOK_BUDGET")
    if given is None:
        return DEFAULT_BUDGET
    try:
        return int(given)
    except ValueError:
        raise InvalidArgumentError(f"NOTEWELL_NOTEBOOK_BUDGET is a number of tokens, got {given!r}") from None


def notebook_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Where notebooks live: *root*, else $AGENT_CONTEXT_ROOT, else ./.agent-context."""
    return Path(root or os.environ.get("AGENT_CONTEXT_ROOT") or NOTEBOOK_ROOT).expanduser()


def chosen_task(
    task: str | None = None, root: str | os.PathLike[str] | None = None, *, naming: str = "the task argument"
) -> str:
    """The notebook a caller means: *task*, else $NOTEWELL_NOTEBOOK, else the only notebook
    under the root; NotFoundError when there is none, InvalidArgumentError when it is unclear
    (saying to name one with *naming*, the interface's way of naming it)."""
    if task:
        return task
    if setting("NOTEWELL_NOTEBOOK"):
        return setting("NOTEWELL_NOTEBOOK")
    where = notebook_root(root)
    found = sorted(p.parent.name for p in where.glob("*/state.json")) if where.is_dir() else []
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFoundError(f"no notebook under {where} (notewell notebook init TASK --goal ...)")
    raise InvalidArgumentError(f"several notebooks under {where} ({', '.join(found)}): name one with {naming}")


@dataclass(frozen=True, slots=True)
class AcceptResult:
    accepted: bool
    revision: int  # the revision in force afterwards
    errors: list[Finding]
    warnings: list[Finding]


class Notebook:
    """One task's notebook."""

    def __init__(self, task: str, *, root: str | os.PathLike[str] | None = None) -> None:
        if not isinstance(task, str) or not _TASK.fullmatch(task):
            raise InvalidArgumentError(f"a task name is letters, digits, '.', '_' or '-' (at most 80); got {task!r}")
        self.task = task
        self.root = notebook_root(root)
        self.dir = self.root / task
        self.path = self.dir / "notebook.md"
        self.revisions = self.dir / "revisions"
        self.raw = RawLog(self.dir / "raw")
        self._state_path = self.dir / "state.json"

    # -- set-up and state -------------------------------------------------------

    @classmethod
    def init(
        cls, task: str, *, goal: str, budget: int | None = None, root: str | os.PathLike[str] | None = None
    ) -> Notebook:
        """A new notebook with *goal*, accepted as revision 1; *budget* in tokens (default:
        $NOTEWELL_NOTEBOOK_BUDGET, else DEFAULT_BUDGET)."""
        book = cls(task, root=root)
        budget = default_budget() if budget is None else budget
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidArgumentError("give the goal: the outcome, in one or two lines (--goal)")
        for problem in text_problems(goal):
            raise InvalidArgumentError(f"the goal cannot be kept: {problem}")
        whole_number("the budget (tokens)", budget, 200, 100_000)
        if book.path.exists():
            raise InvalidArgumentError(f"a notebook for {task!r} exists at {book.path}")
        book.root.mkdir(parents=True, exist_ok=True)
        ignore = book.root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# working notebooks: disposable, may hold client data\n*\n", encoding="utf-8")
        book.revisions.mkdir(parents=True, exist_ok=True)
        text = render_template(task, " ".join(goal.split()))
        book._write(book.path, text)
        book._write(book.revisions / "0001.md", text)
        chained = book._chain_up_to(1)
        state = {"budget": budget, "retired": [], "said": {}, "created_at": now_iso(), **chained}
        book._save_state({**state, _RETIRED_RULE[0]: _RETIRED_RULE[1]})
        return book

    def _require(self) -> None:
        if not self._state_path.exists():
            raise NotFoundError(f"no notebook for {self.task!r} under {self.root} (notewell notebook init)")

    def state(self) -> dict[str, Any]:
        self._require()
        try:
            return json.loads(self._state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StorageError(f"cannot read {self._state_path}: {exc}") from None

    def _save_state(self, state: dict[str, Any]) -> None:
        self._write(self._state_path, json.dumps(state, indent=1, ensure_ascii=False))

    @staticmethod
    def _write(path: Path, text: str) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {exc.strerror}") from None

    def revision(self) -> int:
        """The number of the accepted revision in force."""
        self._require()
        numbers = [int(p.stem) for p in self.revisions.glob("[0-9]*.md") if p.stem.isdigit()]
        return max(numbers, default=0)

    def accepted_text(self, number: int | None = None) -> str:
        number = self.revision() if number is None else number
        try:
            return (self.revisions / f"{number:04d}.md").read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"no accepted revision {number} of {self.task!r}") from None

    def working_text(self) -> str:
        self._require()
        try:
            return self.path.read_text(encoding="utf-8-sig")  # an editor on Windows may add a BOM
        except FileNotFoundError:
            return ""
        except UnicodeDecodeError:
            raise InvalidArgumentError(f"{self.path} is not UTF-8 text") from None

    # -- the loop ---------------------------------------------------------------

    def log(self, data: bytes, label: str) -> tuple[RawEvent, str]:
        """Store raw output once; returns the event and the one-line pointer to keep instead."""
        self._require()
        event = self.raw.log(data, label)
        return event, f"[{event.id}] {event.label} ({event.bytes} bytes; notewell notebook recall {event.id})"

    def recall(self, event_id: str, *, grep: str | None = None, offset: int = 0, limit: int = 2000) -> str:
        self._require()
        return self.raw.recall(event_id, grep=grep, offset=offset, limit=limit)

    def check(self, text: str | None = None) -> tuple[list[Finding], list[Finding]]:
        """Validate *text* (default: the working copy) as the next revision."""
        state = self.state()
        text = self.working_text() if text is None else text
        budget = int(state.get("budget", DEFAULT_BUDGET))
        if (too_long := far_over_budget(text, budget)) is not None:
            return [too_long], []
        history = self.history_problems()
        if history:
            return [Finding(0, f"the accepted history was changed: {problem}") for problem in history], []
        previous = parse_notebook(self.accepted_text())
        try:
            raw_problems = self.raw.problems()
        except TamperedError as exc:
            return [Finding(0, exc.message)], []
        return validate_notebook(
            parse_notebook(text),
            text,
            previous=previous,
            # Derived from the chained revisions too: an id taken off state.json stays retired.
            retired=set(state.get("retired", [])) | self._history()[0],
            raw_ids=self.raw.ids(),
            budget=budget,
            raw_problems=raw_problems,
        )

    # -- the accepted history, chained ------------------------------------------

    @property
    def _chain_path(self) -> Path:
        return self.revisions / "chain.jsonl"

    @staticmethod
    def _link(number: int, text: str, prev: str) -> dict[str, Any]:
        """The record of accepted revision *number*: its text's hash and the previous record's."""
        record: dict[str, Any] = {"revision": number, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
        record["prev"] = prev
        record["hash"] = hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()
        return record

    def _chain(self) -> list[dict[str, Any]] | None:
        """The records of the accepted revisions, or None for a notebook made before the chain."""
        try:
            lines = self._chain_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {self._chain_path}: {exc.strerror}") from None
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                record = {}
            records.append(record if isinstance(record, dict) else {})
        return records

    def history_problems(self) -> list[str]:
        """How the accepted revisions differ from their chained records (an empty list: intact).
        Each record holds its revision's hash and the previous record's, as the raw log's index
        does for events: a checkpoint edited in place, or one taken away, shows here."""
        self._recover()
        records = self._chain()
        known = self.state().get("chain_length")
        if records is None:
            if known:
                return [f"the chain of accepted revisions ({self._chain_path.name}) was removed"]
            return []  # made before the chain: trusted as found, and chained at the next accept
        problems, prev = [], ""
        if isinstance(known, int) and len(records) < known:
            problems.append(f"the chain holds {len(records)} of the {known} records written: revisions were cut off")
        elif isinstance(known, int) and known and records[known - 1].get("hash") != self.state().get("chain_head"):
            problems.append("the chain's records differ from the ones written")
        for number, record in enumerate(records, 1):
            path = self.revisions / f"{number:04d}.md"
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                problems.append(f"accepted revision {number} is missing or unreadable")
                prev = str(record.get("hash", ""))
                continue
            expected = self._link(number, text, prev)
            if record != expected:
                if record.get("revision") != number or record.get("prev") != prev:
                    problems.append(f"the record of revision {number} is out of its chain")
                elif record.get("sha256") != expected["sha256"]:
                    problems.append(f"revision {number} was changed after it was accepted")
                else:
                    problems.append(f"the record of revision {number} was edited")
            prev = str(record.get("hash", ""))
        extra = self.revision() - len(records)
        if extra > 0:
            problems.append(f"{extra} accepted revision(s) after {len(records)} have no record in the chain")
        return problems

    def _pending(self, number: int) -> Path:
        return self.revisions / f".{number:04d}.md.pending"

    def _chain_up_to(self, number: int, text: str | None = None) -> dict[str, Any]:
        """Records for every accepted revision up to *number* (the last one's *text*, when given,
        is the revision about to be placed); a notebook made before the chain gets them for the
        revisions it has, as found. Returns the chain's head and length, for state.json."""
        records = self._chain() or []
        prev = str(records[-1].get("hash", "")) if records else ""
        for n in range(len(records) + 1, number + 1):
            body = text if text is not None and n == number else self.accepted_text(n)
            records.append(self._link(n, body, prev))
            prev = records[-1]["hash"]
        self._write(self._chain_path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        return {"chain_length": len(records), "chain_head": prev}

    def _recover(self) -> None:
        """Finish or drop an accept a crash cut short: a staged revision its record names is put
        in place; one without a record is dropped."""
        staged = sorted(self.revisions.glob(".[0-9]*.md.pending"))
        if not staged:
            return
        records = self._chain() or []
        for path in staged:
            number = int(path.name[1:5])
            final = self.revisions / f"{number:04d}.md"
            record = records[number - 1] if 0 < number <= len(records) else None
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if record is not None and record.get("sha256") == digest and not final.exists():
                os.replace(path, final)
                state = self.state()
                state.update({"chain_length": len(records), "chain_head": str(records[-1].get("hash", ""))})
                self._save_state(state)
            else:
                os.unlink(path)

    def _history(self) -> tuple[set[str], set[str]]:
        """(retired, cited) over the accepted revisions: the ids they retired, by the rule accept
        writes to state.json, and the raw events any of them cited (an event cited by a fact
        dropped since was recorded all the same)."""
        retired: set[str] = set()
        cited: set[str] = set()
        before: NotebookDoc | None = None
        for number in range(1, self.revision() + 1):
            text = self.accepted_text(number)
            doc = parse_notebook(text)
            retired |= newly_retired(before, doc)
            cited.update(_EVENT.findall("\n".join(ln for ln in text.splitlines() if ln.strip() not in EXAMPLE_LINES)))
            before = doc
        return retired, cited

    def accept(self) -> AcceptResult:
        """Validate the working copy; on success checkpoint it as the next revision."""
        text = self.working_text()
        errors, warnings = self.check(text)
        current = self.revision()
        if errors:
            return AcceptResult(False, current, errors, warnings)
        if text == self.accepted_text(current):
            return AcceptResult(True, current, [], warnings)
        state = self.state()
        retiring = newly_retired(parse_notebook(self.accepted_text(current)), parse_notebook(text))
        state["retired"] = sorted(set(state.get("retired", [])) | retiring)
        state[_RETIRED_RULE[0]] = _RETIRED_RULE[1]
        self._chain_up_to(current)  # a notebook made before the chain: its history as found
        # Staged, recorded, placed: the record is the commit point, so a crash before it leaves
        # a staged file that is dropped, and one after it a staged file that is put in place.
        pending = self._pending(current + 1)
        self._write(pending, text)
        state.update(self._chain_up_to(current + 1, text))
        os.replace(pending, self.revisions / f"{current + 1:04d}.md")
        self._save_state(state)
        return AcceptResult(True, current + 1, [], warnings)

    def restore(self) -> int:
        """Put the accepted revision back as the working copy; returns its number."""
        self._write(self.path, self.accepted_text())
        return self.revision()

    def show(self) -> str:
        """The accepted revision: what to read back."""
        return self.accepted_text()

    def history(self) -> list[dict[str, Any]]:
        out = []
        for number in range(1, self.revision() + 1):
            path = self.revisions / f"{number:04d}.md"
            text = path.read_text(encoding="utf-8")
            at = os.stat(path).st_mtime
            out.append({"revision": number, "items": len(parse_notebook(text).items), "tokens": estimate_tokens(text),
                        "at": at})  # fmt: skip
        return out

    def diff(self, a: int | None = None, b: int | None = None) -> str:
        """What changed between accepted revisions *a* and *b* (default: the last two), or from
        the accepted revision to the working copy when only the working copy differs."""
        current = self.revision()
        if a is None and b is None:
            working = self.working_text()
            if working != self.accepted_text(current):
                old, new, names = self.accepted_text(current), working, (f"r{current}", "working")
            else:
                a, b = max(1, current - 1), current
        if a is not None or b is not None:
            a = a if a is not None else max(1, current - 1)
            b = b if b is not None else current
            old, new, names = self.accepted_text(a), self.accepted_text(b), (f"r{a}", f"r{b}")
        lines = difflib.unified_diff(old.splitlines(), new.splitlines(), *names, lineterm="")
        return "\n".join(lines)

    def status(self) -> dict[str, Any]:
        state = self.state()
        accepted = self.accepted_text()
        doc = parse_notebook(accepted)
        tokens = estimate_tokens(accepted)
        retired, cited = self._history()
        try:
            ids = {e.id for e in self.raw.events()}
        except TamperedError:  # reported under "tampered"; the rest of the status still helps
            ids = set()
        return {
            "task": self.task,
            "revision": self.revision(),
            "tokens": tokens,
            "budget": state.get("budget", DEFAULT_BUDGET),
            "used_percent": round(100 * tokens / max(1, int(state.get("budget", DEFAULT_BUDGET)))),
            "sections": {
                name: len(doc.in_section(name)) for name in ("Facts", "Tracker", "Notes", "Ruled out", "Dropped")
            },
            "unaccepted_edits": self.working_text() != accepted,
            "trimmable": trimmable(doc),
            "raw_events": len(ids),
            "uncited_events": sorted(ids - cited),
            "tampered": self.raw.verify()
            + [f"the accepted history: {p}" for p in self.history_problems()]
            + self._state_problems(state, retired, doc),
        }

    @staticmethod
    def _state_problems(state: dict[str, Any], retired: set[str], accepted: NotebookDoc) -> list[str]:
        if state.get(_RETIRED_RULE[0]) != _RETIRED_RULE[1]:  # written by the old rule: not the Dropped ids
            retired = retired - {i.id for i in accepted.in_section("Dropped")}
        missing = sorted(retired - set(state.get("retired", [])))
        if missing:
            return [f"state.json no longer lists retired ids {', '.join(missing)} (they stay retired)"]
        return []

    def nudge(self) -> str | None:
        """A reminder only when one is newly due (an unaccepted edit, three or more raw events not
        yet recorded, a budget tier crossed); None otherwise, so a hook can run it every turn."""
        status = self.status()
        state = self.state()
        said = state.get("said", {})
        due: list[str] = []
        if status["unaccepted_edits"]:
            digest = hashlib.sha256(self.working_text().encode("utf-8")).hexdigest()
            if said.get("edit") != digest:
                due.append("notebook.md has edits not accepted yet: run notewell notebook accept (or restore)")
                said["edit"] = digest
        else:
            said.pop("edit", None)
        uncited = status["uncited_events"]
        if len(uncited) >= 3 and said.get("uncited") != len(uncited):
            due.append(f"{len(uncited)} raw events are not recorded in the notebook yet: {', '.join(uncited[:5])}")
            said["uncited"] = len(uncited)
        tier = max((t for t in TIERS if status["used_percent"] >= t), default=0)
        if tier > int(said.get("tier", 0)):
            advice = trim_advice(parse_notebook(self.accepted_text()))
            due.append(f"the notebook uses {status['used_percent']}% of its budget: {advice}")
        said["tier"] = tier
        state["said"] = said
        self._save_state(state)
        return "\n".join(due) if due else None

    # -- what outlives the notebook -------------------------------------------

    def promote(self, store: NoteStore, ids: list[str], *, author: str | None = None) -> list[dict[str, Any]]:
        """Turn accepted facts (kind conclusion), ruled-out items (dead_end) and notes (note)
        into durable notes in *store*, each citing its source; promoting again returns the
        note made the first time."""
        if not ids:
            raise InvalidArgumentError("name the items to promote, like F003 R001")
        doc = parse_notebook(self.accepted_text())
        items = {i.id: i for i in doc.items if i.section in _PROMOTE}
        unknown = [i for i in ids if i not in items]
        if unknown:
            raise NotFoundError(
                f"not in the accepted revision's facts, notes or ruled-out items: {', '.join(unknown)}"
                " (accept the notebook first; tracker items are not promoted)"
            )
        state = self.state()
        done: dict[str, str] = state.setdefault("promoted", {})
        events = {e.id: e for e in self.raw.events()}
        out = []
        for item_id in ids:
            if item_id in done:
                out.append({"id": item_id, "note_id": done[item_id], "new": False})
                continue
            item = items[item_id]
            kind = _PROMOTE[item.section]
            head = item.head
            source = item.field("source") or item.field("reason") or ""
            lines = [head, ""]
            if item.section == "Facts":
                lines.append(
                    f"Source: {source} ({'verified' if fact_status(item.text) == 'verified' else 'unverified'})"
                )
            elif item.section == "Ruled out":
                lines.append(f"Ruled out because: {item.field('reason')}")
            cited = sorted(set(re.findall(r"\bE\d{4,}\b", item.text)))
            for event_id in cited:
                event = events.get(event_id)
                if event is not None:
                    lines.append(
                        f"Raw event {event_id}: {event.label} ({event.bytes} bytes, sha256 {event.sha256[:16]}…)"
                    )
            lines.append(f"From the working notebook '{self.task}', item {item_id}, revision {self.revision()}.")
            title = head if len(head) <= 120 else head[:117] + "…"
            header = "---\n" + f"title: {_quote(title)}\nkind: {kind}\ntags: [notebook, {_tag(self.task)}]\n---\n"
            note = store.add_note(header + "\n".join(lines) + "\n", author=author)
            done[item_id] = note.id
            out.append({"id": item_id, "note_id": note.id, "new": True})
        self._save_state(state)
        return out


_PROMOTE = {"Facts": "conclusion", "Ruled out": "dead_end", "Notes": "note"}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _tag(task: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", task.lower()).strip("-") or "task"
