"""Crash consistency: a writer killed with SIGKILL at random moments, then checked.

    python stress/crash.py --kills 200 --seed 1 [--dir D] [--rebuild-every 10]

Each round starts a writer process on the same store. The writer does a random mix of
writes (adds with tags and builds_on links to earlier notes, batch adds, edits, add_tag,
set_summary, deletes, attempts started and ended with summaries, notes on attempts, edits
of frozen notes that must be refused). Before each operation it appends an *intent* line
(the op and the exact text it will write, or for add_tag/set_summary the text it expects
from the note's current text) and after the operation returns an *ack* line (op, id,
sha256 of the text the store returned); both are flushed and fsynced. The parent kills it
after a random delay (some before the writer has even opened the store, some within
milliseconds of the first write, some later), then, with no writer running:

1. checks the raw folder: every note file (and every kept revision) is UTF-8 and equal,
   byte for byte, to some text the writer wrote: nothing torn;
2. opens the store (timed: the recovery open, ``notewell.open`` + ``refresh()``);
3. resolves the one operation that can be in doubt (intent without ack): it must have
   happened entirely or not at all, and nothing else may differ; the answer is appended
   to the ack log so that the next writer continues from the exact state;
4. checks every acked write: live notes hold exactly their acked text, attempt and kind,
   deleted notes stay deleted (no file, ``not_found``), attempts are running or ended as
   acked with their summary note; a sample of notes is found by search;
5. checks the index against the folder: ``PRAGMA integrity_check``, FTS5
   ``integrity-check``, and a full compare of every note file parsed afresh
   (``parse_note``) with the index rows: ids, paths, titles, kinds, tags (also the
   note_tags table), links (builds_on, also note_links), content hashes, the FTS rows;
6. every ``--rebuild-every`` rounds (and after the last), copies the store, runs
   ``reindex()`` on the copy and compares the rebuilt index with the live one (the same
   fields plus attempt, note kind, author, times and revision, and the attempts table).

Prints the figures at the end. Exit status 1 when anything did not match.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
AUTHOR = "crash-writer"
TAGS = ["cache", "sat", "perf", "bug", "后端", "io", "über-wichtig", "db"]
KINDS = ["finding", "blocker", "decision", "dead_end", "idea"]
OUTCOMES = ["succeeded", "failed", "abandoned"]
WORDS = (
    "restart clause phase saving worker refill cache stampede index segment merge journal revision "
    "header parser token stem query snippet latency budget crash fsync rename link atomic torn "
    "page wal checkpoint vector matrix attempt project digest frozen summary backlog"
).split()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mark(seq: int) -> str:
    """A word unique to the text written by op *seq* (what the search check looks for)."""
    return f"u{seq}z"


# -- the two logs --------------------------------------------------------------------


class Log:
    """An append-only JSON-lines file; every line is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    def write(self, obj: dict[str, Any]) -> None:
        self.fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def read_log(path: Path) -> list[dict[str, Any]]:
    """Complete lines only (a writer killed mid-line leaves a torn tail: not acked)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines() if line.strip()]


def cut_torn_tail(path: Path) -> None:
    """Drop a torn last line so that the next append starts on a line of its own."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())


# -- the model: what the acks say the store holds ---------------------------------------


@dataclass
class NoteState:
    sha: str
    attempt: str | None
    kind: str  # note_kind: note or summary
    deleted: bool = False
    seq: int = 0  # the op that wrote the current text


@dataclass
class AttemptState:
    project: str
    ended: bool = False
    outcome: str | None = None
    summary: str | None = None


@dataclass
class Model:
    notes: dict[str, NoteState] = field(default_factory=dict)
    attempts: dict[str, AttemptState] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # sha -> every text the writer wrote or expected
    seq: int = 0  # the last op decided (acked or resolved)
    acked: int = 0  # ack lines folded (acked ops + resolutions)

    @classmethod
    def fold(cls, intents: list[dict[str, Any]], acks: list[dict[str, Any]]) -> Model:
        m = cls()
        for intent in intents:
            m.learn(intent)
        for ack in acks:
            m.apply(ack)
        return m

    def learn(self, intent: dict[str, Any]) -> None:
        for key in ("text", "summary_text"):
            if intent.get(key):
                self.texts[sha(intent[key])] = intent[key]
        for text in intent.get("texts", []):
            self.texts[sha(text)] = text

    def text(self, note_id: str) -> str:
        return self.texts[self.notes[note_id].sha]

    def apply(self, ack: dict[str, Any]) -> None:
        self.seq = max(self.seq, ack["seq"])
        self.acked += 1
        if ack.get("text"):
            self.texts[sha(ack["text"])] = ack["text"]
        op = ack["op"]
        if op == "add":
            for n in ack["notes"]:
                self.notes[n["id"]] = NoteState(
                    n["sha"], ack.get("attempt"), ack.get("note_kind", "note"), seq=ack["seq"]
                )
        elif op in ("edit", "add_tag", "set_summary"):
            self.notes[ack["id"]].sha = ack["sha"]
            self.notes[ack["id"]].seq = ack["seq"]
        elif op == "delete":
            self.notes[ack["id"]].deleted = True
        elif op == "start_attempt":
            self.attempts[ack["id"]] = AttemptState(ack["project"])
        elif op == "end_attempt":
            a = self.attempts[ack["id"]]
            if ack.get("summary"):
                s = ack["summary"]
                self.notes[s["id"]] = NoteState(s["sha"], ack["id"], "summary", seq=ack["seq"])
            a.ended, a.outcome, a.summary = True, ack["outcome"], (ack.get("summary") or {}).get("id")
        # "void", "frozen_rejected", "error": nothing changed

    def live(self) -> list[str]:
        return [i for i, n in self.notes.items() if not n.deleted]

    def running(self) -> list[str]:
        return [i for i, a in self.attempts.items() if not a.ended]

    def editable(self) -> list[str]:
        return [
            i for i in self.live() if self.notes[i].attempt is None or not self.attempts[self.notes[i].attempt].ended
        ]

    def frozen(self) -> list[str]:
        return [i for i in self.live() if self.notes[i].attempt and self.attempts[self.notes[i].attempt].ended]


# -- the writer -------------------------------------------------------------------------


def note_text(rng: random.Random, seq: int, model: Model) -> str:
    """A note in one of several shapes: header with inline or item lists, no header, CRLF."""
    known = list(model.notes)
    links = rng.sample(known, k=min(len(known), rng.choice([0, 0, 1, 2, 3])))
    if model.attempts and rng.random() < 0.1:
        links.append(rng.choice(list(model.attempts)))
    tags = rng.sample(TAGS, k=rng.choice([0, 1, 2, 3]))
    title = f"Note {seq} {rng.choice(WORDS)} {rng.choice(WORDS)}"
    size = rng.randint(20_000, 80_000) if rng.random() < 0.08 else rng.randint(80, 1500)
    words: list[str] = [mark(seq)]
    length = 0
    while length < size:
        words.append(rng.choice(WORDS))
        length += len(words[-1]) + 1
        if rng.random() < 0.05:
            words.append("\n\n")
    body = " ".join(words).replace(" \n\n ", "\n\n") + "\n"
    shape = rng.random()
    if shape < 0.15:
        text = f"# {title}\n\n{body}"  # no header: the title comes from the heading
    else:
        lines = ["---", f"title: {title}", f"kind: {rng.choice(KINDS)}"]
        if shape < 0.3:
            lines += ["tags:", *(f"  - {t}" for t in tags)] if tags else []
        elif tags:
            lines.append(f"tags: [{', '.join(tags)}]")
        if links:
            lines.append(f"builds_on: [{', '.join(links)}]")
        lines += ["---", "", body]
        text = "\n".join(lines)
    if rng.random() < 0.05:
        text = text.replace("\n", "\r\n")
    return text


def choose(rng: random.Random, model: Model, seq: int) -> dict[str, Any]:
    """The next operation, with everything it will write."""
    from notewell.model.header_edit import with_summary, with_tags

    weights = {"add": 30, "add_batch": 3, "start_attempt": 4 if len(model.running()) < 2 else 0}
    if model.editable():
        weights.update(edit=18, add_tag=10, set_summary=8, delete=10)
    if model.running():
        weights["end_attempt"] = 4
    if model.frozen():
        weights["frozen_edit"] = 2
    op = rng.choices(list(weights), weights=list(weights.values()))[0]
    intent: dict[str, Any] = {"seq": seq, "op": op}
    running = model.running()
    if op in ("add", "add_batch"):
        intent["attempt"] = rng.choice(running) if running and rng.random() < 0.5 else None
        if op == "add":
            intent["text"] = note_text(rng, seq, model)
        else:
            intent["texts"] = [note_text(rng, seq, model) + f"\npart {i}\n" for i in range(rng.randint(2, 4))]
    elif op in ("edit", "add_tag", "set_summary", "delete"):
        target = rng.choice(model.editable())
        intent["id"] = target
        if op == "edit":
            intent["text"] = note_text(rng, seq, model)
        elif op == "add_tag":
            intent["tags"] = rng.sample(TAGS, k=rng.randint(1, 2))
            intent["text"] = with_tags(model.text(target), intent["tags"])[0]  # the text the writer expects
        elif op == "set_summary":
            intent["summary"] = f"{mark(seq)} {rng.choice(WORDS)} {rng.choice(WORDS)}"
            intent["text"] = with_summary(model.text(target), intent["summary"])
    elif op == "frozen_edit":
        intent["id"] = rng.choice(model.frozen())
        intent["text"] = note_text(rng, seq, model)
    elif op == "start_attempt":
        intent["project"] = f"proj-{seq}"
    elif op == "end_attempt":
        attempt = rng.choice(running)
        intent["id"] = attempt
        intent["outcome"] = rng.choice(OUTCOMES)
        if rng.random() < 0.7:
            intent["summary_text"] = (
                f"---\ntitle: Summary of {model.attempts[attempt].project}\n---\n\n{mark(seq)} what was learnt.\n"
            )
    return intent


def perform(store: Any, model: Model, intent: dict[str, Any]) -> dict[str, Any]:
    """Run one op; the ack line that records what the store answered."""
    import notewell

    op, seq = intent["op"], intent["seq"]
    ack: dict[str, Any] = {"seq": seq, "op": op}
    if op == "add":
        note = store.add_note(intent["text"], author=AUTHOR, attempt=intent["attempt"])
        ack.update(notes=[{"id": note.id, "sha": sha(note.text)}], attempt=intent["attempt"], note_kind="note")
        if note.text != intent["text"]:
            ack.update(text=note.text, unexpected="add returned another text")
    elif op == "add_batch":
        notes = store.add_notes(intent["texts"], author=AUTHOR, attempt=intent["attempt"])
        ack.update(op="add", notes=[{"id": n.id, "sha": sha(n.text)} for n in notes], attempt=intent["attempt"])
        if [n.text for n in notes] != intent["texts"]:
            ack["unexpected"] = "add_notes returned other texts"
    elif op in ("edit", "add_tag", "set_summary"):
        if op == "edit":
            note = store.edit_note(intent["id"], intent["text"])
        elif op == "add_tag":
            note = store.add_tag(intent["id"], *intent["tags"])
        else:
            note = store.set_summary(intent["id"], intent["summary"])
        ack.update(id=note.id, sha=sha(note.text))
        if note.text != intent["text"]:
            ack.update(text=note.text, unexpected=f"{op} wrote another text than expected")
    elif op == "delete":
        store.delete_note(intent["id"])
        ack["id"] = intent["id"]
    elif op == "frozen_edit":
        try:
            note = store.edit_note(intent["id"], intent["text"])
        except notewell.FrozenError:
            ack["op"] = "frozen_rejected"
        else:
            ack.update(op="edit", id=note.id, sha=sha(note.text), unexpected="a frozen note was edited")
    elif op == "start_attempt":
        attempt = store.start_attempt(intent["project"], author=AUTHOR)
        ack.update(id=attempt.id, project=attempt.project)
        if attempt.project != intent["project"]:
            ack["unexpected"] = "project slug differs"
    elif op == "end_attempt":
        attempt = store.end_attempt(intent["id"], outcome=intent["outcome"], summary=intent.get("summary_text"))
        ack.update(id=attempt.id, outcome=attempt.outcome)
        if attempt.summary_note_id:
            summary = store.get_note(attempt.summary_note_id)
            ack["summary"] = {"id": summary.id, "sha": sha(summary.text)}
            if summary.text != intent.get("summary_text"):
                ack.update(text=summary.text, unexpected="summary note text differs")
        elif intent.get("summary_text"):
            ack["unexpected"] = "end_attempt kept no summary note"
    return ack


def writer_main(store_dir: Path, logs: Path, seed: int, round_no: int) -> None:
    import notewell

    intent_log, ack_log = logs / "intents.jsonl", logs / "acks.jsonl"
    model = Model.fold(read_log(intent_log), read_log(ack_log))
    rng = random.Random(f"{seed}-{round_no}")
    store = notewell.open(store_dir, watch=False, embedder=None)
    intents, acks = Log(intent_log), Log(ack_log)
    print("ready", flush=True)
    seq = model.seq
    while True:
        seq += 1
        intent = choose(rng, model, seq)
        intents.write(intent)
        model.learn(intent)
        try:
            ack = perform(store, model, intent)
        except notewell.NotewellError as exc:  # none is expected: the harness records it as a mismatch
            ack = {"seq": seq, "op": "error", "unexpected": f"{type(exc).__name__}: {exc}"}
            acks.write(ack)
            raise
        acks.write(ack)
        model.apply(ack)


# -- the checks -----------------------------------------------------------------------


@dataclass
class Round:
    recovery_s: float = 0.0
    acked: int = 0
    checks: int = 0
    doubt: str = ""  # the op in doubt and what became of it
    problems: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)  # effects of an un-acked op that are partial, not wrong


def note_files(root: Path) -> dict[str, bytes]:
    """Every note file of the store (relative path -> bytes), hidden files and folders left out."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".md") and not name.startswith("."):
                full = Path(dirpath) / name
                out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


def check_files(root: Path, model: Model, r: Round) -> None:
    """No torn file: every note file and every kept revision is a text the writer wrote."""
    known = set(model.texts)
    for path, data in note_files(root).items():
        r.checks += 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            r.problems.append(f"torn: {path} is not UTF-8")
            continue
        if sha(text) not in known:
            r.problems.append(f"torn: {path} ({len(data)} bytes) is no text the writer wrote")
    revisions = root / ".notewell-history" / "revisions"
    if revisions.is_dir():
        for full in revisions.rglob("*.md"):
            if full.name.startswith("."):
                continue
            r.checks += 1
            if hashlib.sha256(full.read_bytes()).hexdigest() not in known:
                r.problems.append(f"torn revision: {full.relative_to(root)}")


def resolve(store: Any, model: Model, intent: dict[str, Any] | None, live_ids: set[str], r: Round) -> list[dict]:
    """What became of the op in doubt (intent, no ack): ack lines that say it. Anything the
    op cannot explain is a problem; a note that appeared without the attempt it was meant for
    is recorded as partial (the file is written before the journal record)."""
    import notewell

    extras = live_ids - set(model.live())
    if intent is None:
        for nid in sorted(extras):
            r.problems.append(f"note {nid} exists though no write made it")
        return []
    op, seq = intent["op"], intent["seq"]
    out: list[dict[str, Any]] = []

    def added(texts: list[str], attempt: str | None, kind: str) -> list[dict[str, str]]:
        wanted = {sha(t) for t in texts}
        found = []
        for nid in sorted(extras):
            note = store.get_note(nid)
            if sha(note.text) not in wanted:
                continue
            wanted.discard(sha(note.text))
            extras.discard(nid)
            found.append({"id": nid, "sha": sha(note.text), "attempt": note.attempt_id, "note_kind": note.note_kind})
            if note.attempt_id != attempt or note.note_kind != kind:
                r.partial.append(
                    f"op {seq} ({op}) not acked: note {nid} appeared with attempt {note.attempt_id}/{note.note_kind}"
                    f" instead of {attempt}/{kind}"
                )
            if note.author != AUTHOR:
                r.partial.append(f"op {seq} ({op}) not acked: note {nid} appeared with author {note.author!r}")
        return found

    if op in ("add", "add_batch"):
        texts = [intent["text"]] if op == "add" else intent["texts"]
        found = added(texts, intent["attempt"], "note")
        for n in found:
            note = {"id": n["id"], "sha": n["sha"]}
            out.append({"seq": seq, "op": "add", "notes": [note], "attempt": n["attempt"], "note_kind": n["note_kind"]})
        r.doubt = f"{op}: {len(found)}/{len(texts)} happened"
    elif op in ("edit", "add_tag", "set_summary", "frozen_edit"):
        nid = intent["id"]
        before, after = model.notes[nid].sha, sha(intent["text"])
        try:
            now = sha(store.get_note(nid).text)
        except notewell.NotFoundError:
            now = None
        if now == after and after != before and op != "frozen_edit":
            out.append({"seq": seq, "op": op, "id": nid, "sha": after})
            r.doubt = f"{op}: happened"
        elif now == before:
            r.doubt = f"{op}: did not happen"
        else:
            r.problems.append(f"op {seq} ({op}) not acked: {nid} holds neither the old nor the new text")
    elif op == "delete":
        nid = intent["id"]
        if nid in live_ids:
            r.doubt = "delete: did not happen"
        else:
            out.append({"seq": seq, "op": "delete", "id": nid})
            r.doubt = "delete: happened"
    elif op == "start_attempt":
        known = set(model.attempts)
        found = [a for a in store.list_attempts(project=intent["project"], limit=100) if a.id not in known]
        if len(found) > 1:
            r.problems.append(f"op {seq} start_attempt not acked: {len(found)} attempts appeared")
        if found:
            out.append({"seq": seq, "op": "start_attempt", "id": found[0].id, "project": found[0].project})
        r.doubt = f"start_attempt: {'happened' if found else 'did not happen'}"
    elif op == "end_attempt":
        aid = intent["id"]
        attempt = store.get_attempt(aid)
        summary = added([intent["summary_text"]], aid, "summary") if intent.get("summary_text") else []
        if attempt.ended_at is not None:
            if attempt.outcome != intent["outcome"]:
                r.problems.append(f"op {seq} end_attempt not acked: outcome {attempt.outcome!r}")
            if intent.get("summary_text") and not summary:
                r.problems.append(f"op {seq} end_attempt not acked: ended without its summary note")
            if (summary[0]["id"] if summary else None) != attempt.summary_note_id:
                r.problems.append(f"op {seq} end_attempt not acked: summary_note_id {attempt.summary_note_id}")
            ack = {"seq": seq, "op": "end_attempt", "id": aid, "outcome": attempt.outcome}
            if summary:
                ack["summary"] = {"id": summary[0]["id"], "sha": summary[0]["sha"]}
            out.append(ack)
            r.doubt = "end_attempt: happened"
        else:
            for n in summary:  # with the attempt and kind it has (an adopted file has none: partial)
                note = {"id": n["id"], "sha": n["sha"]}
                kind = n["note_kind"]
                out.append({"seq": seq, "op": "add", "notes": [note], "attempt": n["attempt"], "note_kind": kind})
            r.doubt = "end_attempt: " + ("summary written, attempt not ended" if summary else "did not happen")
    for nid in sorted(extras):
        r.problems.append(f"note {nid} exists though no write made it (op in doubt: {seq} {op})")
    if not out:
        out.append({"seq": seq, "op": "void"})
    return out


def check_model(store: Any, model: Model, live_ids: set[str], rng: random.Random, r: Round) -> None:
    """Every acked write is there, exactly."""
    import notewell

    root = Path(store.root)
    for nid, n in model.notes.items():
        r.checks += 1
        if n.deleted:
            if nid in live_ids or (root / f"{nid}.md").exists():
                r.problems.append(f"deleted note {nid} is back")
            try:
                store.get_note(nid)
                r.problems.append(f"deleted note {nid} is served")
            except notewell.NotFoundError:
                pass
            continue
        if nid not in live_ids:
            r.problems.append(f"acked note {nid} (op {n.seq}) is missing")
            continue
        note = store.get_note(nid)
        if sha(note.text) != n.sha:
            r.problems.append(f"note {nid} does not hold its acked text (op {n.seq})")
        if note.attempt_id != n.attempt or note.note_kind != n.kind:
            r.problems.append(
                f"note {nid}: attempt/kind {note.attempt_id}/{note.note_kind}, acked {n.attempt}/{n.kind}"
            )
    for aid, a in model.attempts.items():
        r.checks += 1
        got = store.get_attempt(aid)
        if (got.ended_at is not None, got.outcome, got.summary_note_id, got.project) != (
            a.ended,
            a.outcome,
            a.summary,
            a.project,
        ):
            r.problems.append(
                f"attempt {aid}: ended={got.ended_at is not None} outcome={got.outcome} summary={got.summary_note_id},"
                f" acked ended={a.ended} outcome={a.outcome} summary={a.summary}"
            )
    from notewell.model.header import parse_note

    live = model.live()
    for nid in rng.sample(live, k=min(5, len(live))):
        r.checks += 1
        found = re.search(r"\bu\d+z\b", parse_note(model.text(nid)).body)  # the mark in the searchable body
        if found is None:
            r.problems.append(f"harness: no mark in the body of {nid}")
            continue
        word = found.group(0)
        ids = [c.id for c in store.search_notes(word, limit=20)]
        if nid not in ids:
            r.problems.append(f"search {word!r} does not find {nid}")
    if store.problems():
        r.problems.append(f"unreadable files reported: {store.problems()}")


def index_rows(db: Path, r: Round | None = None) -> dict[str, dict[str, Any]]:
    """The index's view of every note (and, with *r*, its SQLite and FTS5 integrity checks)."""
    from notewell.backends.sqlite.fts_rows import keyword_index_problems

    conn = sqlite3.connect(db, isolation_level=None)
    try:
        if r is not None:
            r.checks += 3
            result = conn.execute("PRAGMA integrity_check").fetchall()
            if result != [("ok",)]:
                r.problems.append(f"PRAGMA integrity_check: {result[:5]}")
            # FTS5's own check, and every word list against tables made afresh from the stored rows.
            r.problems += keyword_index_problems(conn)
            titled = {i for (i,) in conn.execute("SELECT id FROM titles_fts_docsize")}
            if titled != {i for (i,) in conn.execute("SELECT rowid FROM note_index")}:
                r.problems.append("titles_fts does not hold exactly the indexed notes")
        tags: dict[int, set[str]] = {}
        for tag, rowid in conn.execute("SELECT tag, note FROM note_tags"):
            tags.setdefault(rowid, set()).add(tag)
        links: dict[int, set[str]] = {}
        for target, rowid in conn.execute("SELECT target, note FROM note_links"):
            links.setdefault(rowid, set()).add(target)
        fts = {rowid: True for (rowid,) in conn.execute("SELECT id FROM notes_fts_docsize")}
        texts = {rowid: sha(text) for rowid, text in conn.execute("SELECT rowid, text FROM note_text")}
        out: dict[str, dict[str, Any]] = {}
        cols = (
            "rowid, id, path, title, kind, tags, builds_on, sha256, attempt_id, note_kind, author, created_at, revision"
        )
        for row in conn.execute(f"SELECT {cols} FROM note_index"):
            rowid, nid, path, title, kind, tag_json, links_json, digest, attempt, note_kind, author, created, rev = row
            out[nid] = {
                "path": path,
                "title": title,
                "kind": kind,
                "tags": json.loads(tag_json),
                "builds_on": json.loads(links_json),
                "sha256": digest,
                "attempt_id": attempt,
                "note_kind": note_kind,
                "author": author,
                "created_at": created,
                "revision": rev,
                "_tag_rows": tags.pop(rowid, set()),
                "_link_rows": links.pop(rowid, set()),
                "_fts_row": fts.pop(rowid, False),
                "_text_sha": texts.pop(rowid, None),
            }
        if r is not None:
            for name, left in (("note_tags", tags), ("note_links", links), ("notes_fts", fts), ("note_text", texts)):
                if left:
                    r.problems.append(f"{name} has rows of no note: rowids {sorted(left)[:5]}")
        out["_attempts"] = {
            a[0]: a[1:]
            for a in conn.execute("SELECT id, project, started_at, ended_at, outcome, summary_note FROM attempts")
        }
        return out
    finally:
        conn.close()


def check_index(root: Path, r: Round) -> dict[str, dict[str, Any]]:
    """The live index against a fresh parse of the folder."""
    from notewell.model.header import parse_note
    from notewell.model.note import derive_title

    rows = index_rows(root / ".notewell" / "index.db", r)
    by_path = {v["path"]: k for k, v in rows.items() if not k.startswith("_")}
    files = note_files(root)
    for path, data in files.items():
        r.checks += 1
        nid = by_path.get(path)
        if nid is None:
            r.problems.append(f"index: {path} is not indexed")
            continue
        text = data.decode("utf-8", errors="replace")
        parsed = parse_note(text)
        header = parsed.header or {}
        expected = {
            "id": path.rsplit("/", 1)[-1][:-3],
            "title": derive_title(parsed, path),
            "kind": header.get("kind"),
            "tags": list(header.get("tags", [])),
            "builds_on": list(header.get("builds_on", [])),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        row = rows[nid]
        got = {"id": nid, **{k: row[k] for k in expected if k != "id"}}
        if got != expected:
            diff = {k: (got[k], expected[k]) for k in expected if got[k] != expected[k]}
            r.problems.append(f"index: {path} differs from the file: {diff}")
        if row["_tag_rows"] != set(expected["tags"]) or row["_link_rows"] != set(expected["builds_on"]):
            r.problems.append(f"index: note_tags/note_links of {path} differ from its header")
        if not row["_fts_row"] or row["_text_sha"] != expected["sha256"]:
            r.problems.append(f"index: FTS row or stored text of {path} differs from the file")
    for path in set(by_path) - set(files):
        r.problems.append(f"index: {path} is indexed but not in the folder")
    return rows


def check_rebuild(root: Path, live: dict[str, dict[str, Any]], r: Round) -> None:
    """Rebuild a copy of the store from its folder (reindex) and compare with the live index."""
    import notewell

    with tempfile.TemporaryDirectory(prefix="nw-crash-copy-") as tmp:
        copy = Path(tmp) / "store"
        shutil.copytree(root, copy)
        s = notewell.open(copy, watch=False, embedder=None)
        try:
            s.reindex()
        finally:
            s.close()
        rebuilt = index_rows(copy / ".notewell" / "index.db")
    r.checks += 1
    if set(rebuilt) != set(live):
        r.problems.append(f"rebuild: ids differ: {sorted(set(rebuilt) ^ set(live))[:5]}")
    for nid in set(rebuilt) & set(live):
        if nid == "_attempts":
            if rebuilt[nid] != live[nid]:
                r.problems.append("rebuild: the attempts table differs")
            continue
        a = {k: v for k, v in live[nid].items() if not k.startswith("_")}
        b = {k: v for k, v in rebuilt[nid].items() if not k.startswith("_")}
        if a != b:
            r.problems.append(f"rebuild: {nid} differs: { {k: (a[k], b[k]) for k in a if a[k] != b.get(k)} }")


def verify(root: Path, logs: Path, rng: random.Random, rebuild: bool) -> Round:
    import notewell

    r = Round()
    intent_log, ack_log = logs / "intents.jsonl", logs / "acks.jsonl"
    for p in (intent_log, ack_log):
        cut_torn_tail(p)
    intents, acks = read_log(intent_log), read_log(ack_log)
    model = Model.fold(intents, acks)
    for ack in acks:
        if ack.get("unexpected"):
            r.problems.append(f"writer: op {ack['seq']} ({ack['op']}): {ack['unexpected']}")
    doubt = [i for i in intents if i["seq"] > model.seq]
    if len(doubt) > 1:
        r.problems.append(f"harness: {len(doubt)} ops in doubt")
    r.acked = sum(1 for a in acks if not a.get("resolved"))
    check_files(root, model, r)
    t0 = time.perf_counter()
    store = notewell.open(root, watch=False, embedder=None)
    store.refresh()
    r.recovery_s = time.perf_counter() - t0
    try:
        live_ids = {p.rsplit("/", 1)[-1][:-3] for p in note_files(root)}
        resolution = resolve(store, model, doubt[0] if doubt else None, live_ids, r)
        log = Log(ack_log)
        for ack in resolution:
            ack["resolved"] = True
            log.write(ack)
            model.apply(ack)
        log.close()
        check_model(store, model, live_ids, rng, r)
    finally:
        store.close()
    rows = check_index(root, r)
    if rebuild:
        check_rebuild(root, rows, r)
    return r


# -- the parent -------------------------------------------------------------------------


@dataclass
class Stats:
    kills: int = 0
    rounds: list[Round] = field(default_factory=list)
    acked_ops: int = 0
    checks: int = 0
    mismatches: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    doubts: dict[str, int] = field(default_factory=dict)
    rebuild_compares: int = 0
    notes_live: int = 0
    notes_deleted: int = 0
    attempts: int = 0
    stray_temp: int = 0
    seconds: float = 0.0
    kill_moments: dict[str, int] = field(default_factory=dict)

    def recovery(self) -> tuple[float, float]:
        times = sorted(r.recovery_s for r in self.rounds)
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        return statistics.median(times), p95


def _writer_env() -> dict[str, str]:
    env = dict(os.environ)
    import notewell

    src = str(Path(notewell.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["NOTEWELL_AUTOWATCH"] = "off"
    return env


def run(
    kills: int, seed: int, workdir: Path, *, rebuild_every: int = 10, max_delay: float = 0.6, log: Any = None
) -> Stats:
    """Kill a writer *kills* times and check the store after each kill (at most *max_delay* s after
    the writer is ready)."""
    root, logs = workdir / "store", workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    stats = Stats()
    started = time.perf_counter()
    env = _writer_env()
    for round_no in range(1, kills + 1):
        cmd = [
            sys.executable,
            str(HERE),
            "--writer",
            "--dir",
            str(workdir),
            "--seed",
            str(seed),
            "--round",
            str(round_no),
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        pick = rng.random()
        if pick < 0.15:
            moment = "during start-up/open"
            time.sleep(rng.uniform(0.0, 0.35))
        else:
            line = proc.stdout.readline() if proc.stdout else b""
            if pick < 0.45:
                moment, delay = "within 20 ms of ready", rng.uniform(0.0, 0.02)
            else:
                moment, delay = f"20-{max_delay * 1000:.0f} ms after ready", rng.uniform(0.02, max_delay)
            if line.strip() != b"ready":
                moment = "writer never ready"
            time.sleep(delay)
        stats.kill_moments[moment] = stats.kill_moments.get(moment, 0) + 1
        proc.send_signal(signal.SIGKILL)
        _out, err = proc.communicate()
        stats.kills += 1
        if proc.returncode != -signal.SIGKILL:
            stats.mismatches.append(
                f"round {round_no}: the writer exited by itself ({proc.returncode}): {err.decode()[-800:]}"
            )
        rebuild = rebuild_every > 0 and (round_no % rebuild_every == 0 or round_no == kills)
        r = verify(root, logs, rng, rebuild)
        stats.rounds.append(r)
        stats.rebuild_compares += rebuild
        stats.checks += r.checks
        stats.mismatches += [f"round {round_no}: {p}" for p in r.problems]
        stats.partial += [f"round {round_no}: {p}" for p in r.partial]
        if r.doubt:
            stats.doubts[r.doubt] = stats.doubts.get(r.doubt, 0) + 1
        if log is not None:
            print(
                f"round {round_no:4d}: {moment:24s} recovery {r.recovery_s * 1000:7.1f} ms, acked {r.acked:6d},"
                f" in doubt: {r.doubt or '-'}{'  PROBLEMS: ' + '; '.join(r.problems[:3]) if r.problems else ''}",
                file=log,
                flush=True,
            )
    model = Model.fold(read_log(logs / "intents.jsonl"), read_log(logs / "acks.jsonl"))
    stats.acked_ops = sum(1 for a in read_log(logs / "acks.jsonl") if not a.get("resolved"))
    stats.notes_live = len(model.live())
    stats.notes_deleted = len(model.notes) - stats.notes_live
    stats.attempts = len(model.attempts)
    stats.stray_temp = sum(1 for p in root.rglob(".*.tmp"))
    stats.seconds = time.perf_counter() - started
    return stats


def report(stats: Stats, out: Any = sys.stdout) -> None:
    p50, p95 = stats.recovery()
    print("crash consistency: writer killed with SIGKILL, store checked after every kill", file=out)
    print(f"  kills                         {stats.kills}", file=out)
    for moment, n in sorted(stats.kill_moments.items()):
        print(f"    {moment:28s}{n}", file=out)
    print(f"  acked ops (all re-verified after every later kill)  {stats.acked_ops}", file=out)
    print(f"  checks made                   {stats.checks}", file=out)
    print("  op in doubt at the kill (intent written, no ack):", file=out)
    for doubt, n in sorted(stats.doubts.items()):
        print(f"    {doubt:48s}{n}", file=out)
    print(f"  rebuild compares (reindex of a copy vs live index)  {stats.rebuild_compares}", file=out)
    print(
        f"  store at the end              {stats.notes_live} live notes, {stats.notes_deleted} deleted,"
        f" {stats.attempts} attempts",
        file=out,
    )
    print(f"  stray temp files left by kills  {stats.stray_temp}", file=out)
    print(f"  partial effects of un-acked ops  {len(stats.partial)}", file=out)
    for p in stats.partial[:10]:
        print(f"    {p}", file=out)
    print(f"  mismatches                    {len(stats.mismatches)}", file=out)
    for m in stats.mismatches[:20]:
        print(f"    {m}", file=out)
    print(f"  recovery open (open + refresh) p50 / p95  {p50 * 1000:.1f} / {p95 * 1000:.1f} ms", file=out)
    print(f"  total time                    {stats.seconds:.1f} s", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--rebuild-every", type=int, default=10, help="compare with a rebuilt copy every N rounds")
    parser.add_argument("--quiet", action="store_true", help="only the figures at the end")
    parser.add_argument("--writer", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.writer:
        writer_main(args.dir / "store", args.dir / "logs", args.seed, args.round)
        return 0
    if args.dir is None:
        with tempfile.TemporaryDirectory(prefix="nw-crash-") as tmp:
            stats = run(
                args.kills,
                args.seed,
                Path(tmp),
                rebuild_every=args.rebuild_every,
                log=None if args.quiet else sys.stdout,
            )
    else:
        args.dir.mkdir(parents=True, exist_ok=True)
        stats = run(
            args.kills, args.seed, args.dir, rebuild_every=args.rebuild_every, log=None if args.quiet else sys.stdout
        )
    report(stats)
    return 1 if stats.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
