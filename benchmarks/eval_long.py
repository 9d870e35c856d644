#!/usr/bin/env python3
"""Search quality on evaluation sets of LONG notes: Recall@5 and MRR@10 per kind of query, for
notewell's keyword, semantic and hybrid search beside baselines computed here, with the same
material cut into notes three ways.

A set is a folder (``benchmarks/eval3/<set>/`` by default) of three JSON Lines files:
``conversations.jsonl`` (long sessions between a person and a coding agent, turn by turn, each
turn with an id ``c1.7``, a role, a time, its text and the tool calls it made),
``notes.jsonl`` (long notes by agents: logs, digests, runbooks) and ``queries.jsonl`` (a query,
its kind, the turn ids and note ids that answer it, and its ``split``: ``tune`` may be used to
choose constants, ``test`` never is; an optional ``lang``). Each set and each granularity gets a
fresh store (``notewell.open(path, watch=False)``), embedded before it is searched:

- ``conversation``: each conversation is written as a Claude Code transcript (JSONL: user and
  assistant lines with sessionId, uuid, parentUuid, timestamp, cwd and gitBranch; each tool call
  a ``tool_use`` block answered by a ``tool_result``, an error when the set marks it ``failed``;
  the set's title as the session's ``custom-title``) and brought in by notewell's own importer
  (``import_conversations(store, "claude-code", folder)``, as ``notewell import claude-code``
  does): one note per conversation, or parts of under 96 KB when it is longer; a turn belongs to
  the part whose header (``messages: 41-84``) counts it.
- ``window``: a note per 5 consecutive exchanges (10 turns), titled with the conversation's title
  and the window's place, its body laid out as the importer lays out a conversation (an opening
  line, then each turn: who and when, the text, the tools line).
- ``exchange``: a note per exchange (a request and its answer), laid out the same way.

A turn over 4,000 characters is cut there at every granularity, as the importer cuts it (the
set's first line counts them), so that the granularities hold the same words.

At every granularity the set's notes go in as ordinary notes (title, kind and tags in the
header). A query's relevant notes are the distinct notes holding its relevant turns and notes.

Systems: notewell's ``keyword``, ``semantic`` and ``hybrid`` (``store.search_notes``, limit 10);
``words`` (notes ranked by how many of the query's terms they hold as case-insensitive
substrings of title and body, ties in note order, notes holding none left out; the terms are its
distinct non-stop words, and for Chinese its CJK character pairs); ``fts5_or`` (raw SQLite FTS5
in memory, ``porter unicode61 remove_diacritics 2``, title and body columns, ``bm25(t, 3.0,
1.0)``, the same terms quoted and ORed: as locomo.py's baseline, it cannot split Chinese, whose
runs unicode61 keeps whole); ``best`` (per query, whichever of keyword and semantic has the
better R@5, then MRR@10: an oracle no search can be, reported to show what hybrid could gain).
Recall@5 is the share of a query's distinct relevant notes in the top 5; MRR@10 is 1/rank of
the first one in the top 10; both are averaged over queries, per kind, per language (when the
queries say), and over all, for the tune and test splits apart (never pooled).

Usage:
    python benchmarks/eval_long.py                            # every set in benchmarks/eval3, all of it
    python benchmarks/eval_long.py --sets /tmp/a,/tmp/b --granularity conversation --embedder hash
    python benchmarks/eval_long.py --split tune --systems keyword,hybrid --json out.json

For tuning, import it, build once and score again after changing notewell's module constants;
loaded with ``split="tune"`` a set holds no test query at all (nor its answer)::

    evalset = eval_long.load(folder, split="tune")
    built = eval_long.build(evalset, "window", "default", Path(tmp))
    eval_long.score(built, "hybrid")   # {"decision": (r5, mrr), ..., "all": (r5, mrr)}
    notewell.search.fusion.HYBRID_SEMANTIC = 0.5
    eval_long.score(built, "hybrid")
    eval_long.close(built)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines import STOP_WORDS, TextBaselines

import notewell
from notewell.model.conversations.conversation import TEXT_CHARS, TOOL_CHARS, clean, first_line
from notewell.model.header import compose_note, parse_note
from notewell.services.conversation_import import import_conversations, part_note_id

ROOT = Path(__file__).resolve().parent
DEFAULT_SETS = ROOT / "eval3"
SET_FILES = ("conversations.jsonl", "notes.jsonl", "queries.jsonl")
GRANULARITIES = ("conversation", "window", "exchange")
NOTEWELL_SYSTEMS = ("keyword", "semantic", "hybrid")
SYSTEMS = (*NOTEWELL_SYSTEMS, "words", "fts5_or", "best")
SPLITS = ("tune", "test")
KINDS = ("decision", "first", "who", "fact", "deep", "digest", "paraphrase")  # the data spec's, in its order
WINDOW_EXCHANGES = 5
LIMIT = 10
TRANSCRIPT_MODEL = "claude-sonnet-4-5-20250929"  # the model the transcripts' answers name

_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_TOOL = re.compile(r"(?s)([^()\s]+)(?:\((.*)\))?( failed)?")
_MESSAGES = re.compile(r'messages:\s*"?(\d+)-(\d+)"?')
# The input key Claude Code gives each tool's argument (the importer shows the first it knows).
_TOOL_KEYS = {"Bash": "command", "Grep": "pattern", "Glob": "pattern", "WebFetch": "url", "WebSearch": "query"}
_TOOL_KEYS |= {"Task": "description", "NotebookEdit": "notebook_path"}
_NAMESPACE = uuid.UUID("6f2c1d2e-8a0b-4f57-9d43-5e1f3b7a0c11")


# -- the sets -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    id: str  # "c1.7"
    role: str  # "user" or "assistant"
    time: str  # ISO 8601, UTC
    text: str
    tools: tuple[str, ...] = ()  # "Read(src/x.py)", "Bash(pytest -q) failed"


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    title: str
    cwd: str
    branch: str
    started: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Note:
    id: str
    title: str
    kind: str
    tags: tuple[str, ...]
    created: str
    text: str


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    kind: str
    relevant: tuple[str, ...]  # turn ids and note ids, distinct
    answer: str
    split: str
    lang: str | None = None


@dataclass(frozen=True, slots=True)
class EvalSet:
    name: str
    folder: Path
    conversations: tuple[Conversation, ...]
    notes: tuple[Note, ...]
    queries: tuple[Query, ...]  # only the split loaded ("both": every query)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _conversation(row: dict[str, Any]) -> Conversation:
    turns = tuple(
        Turn(str(t["id"]), t["role"], t["time"], t.get("text") or "", tuple(t.get("tools") or ())) for t in row["turns"]
    )
    cwd = row.get("cwd") or "/home/dev/project"
    return Conversation(row["id"], row["title"], cwd, row.get("branch") or "main", row.get("started", ""), turns)


def _query(row: dict[str, Any]) -> Query:
    relevant = tuple(dict.fromkeys(str(r) for r in row["relevant"]))
    return Query(row["query"], row["kind"], relevant, str(row.get("answer", "")), row["split"], row.get("lang"))


def load(set_dir: str | Path, split: str = "both") -> EvalSet:
    """The set in *set_dir*. With *split* ``tune`` (or ``test``) the other split's queries are
    dropped as they are read: a tuning script never holds the test queries or their answers."""
    if split not in (*SPLITS, "both"):
        raise ValueError(f"split must be tune, test or both, got {split!r}")
    folder = Path(set_dir)
    conversations = tuple(_conversation(r) for r in _rows(folder / "conversations.jsonl"))
    notes = tuple(
        Note(r["id"], r["title"], r.get("kind") or "note", tuple(r.get("tags") or ()), r.get("created", ""), r["text"])
        for r in _rows(folder / "notes.jsonl")
    )
    queries = tuple(_query(r) for r in _rows(folder / "queries.jsonl") if split == "both" or r.get("split") == split)
    known = {t.id for c in conversations for t in c.turns} | {n.id for n in notes}
    unknown = sorted({r for q in queries for r in q.relevant} - known)
    if unknown:
        raise ValueError(f"{folder}: relevant ids naming no turn or note: {', '.join(unknown[:10])}")
    bad = sorted({q.split for q in queries} - set(SPLITS))
    if bad:
        raise ValueError(f"{folder}: splits must be tune or test, got {', '.join(map(str, bad))}")
    return EvalSet(folder.name, folder, conversations, notes, queries)


def set_folders(spec: str | None) -> list[Path]:
    """The folders ``--sets`` names (comma-separated), else every complete set under DEFAULT_SETS."""
    if spec:
        return [Path(p.strip()) for p in spec.split(",") if p.strip()]
    if not DEFAULT_SETS.is_dir():
        return []
    return sorted(p for p in DEFAULT_SETS.iterdir() if all((p / f).is_file() for f in SET_FILES))


# -- notes laid out as the importer lays them out ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One note of a built store: its key, title and body, and the turn and note ids it holds."""

    key: str  # "c1" (or "c1/part2"), "c1/w3", "c1/x7", "n2"
    title: str
    body: str
    holds: tuple[str, ...]


def tool_parts(tool: str) -> tuple[str, str, bool]:
    """A tool call as the set writes it, ``Bash(pytest -q) failed``: (name, argument, failed)."""
    m = _TOOL.fullmatch(tool.strip())
    if m is None:
        return tool.strip() or "tool", "", False
    return m.group(1), (m.group(2) or "").strip(), bool(m.group(3))


def condensed(tool: str) -> str:
    """The tools line's form of a call, as the importer condenses a ``tool_use`` block."""
    name, arg, failed = tool_parts(tool)
    arg = first_line(arg, TOOL_CHARS) if arg else ""
    return (f"{name}({arg})" if arg else name) + (" failed" if failed else "")


def _stamp(at: str) -> str:
    return f" · {at[:16].replace('T', ' ')} UTC" if at else ""


def turn_block(turn: Turn, number: int) -> str:
    """A turn as the importer writes it: who and when, the text (cut at TEXT_CHARS), the tools."""
    lines = [f"**{number}. {turn.role}**{_stamp(turn.time)}"]
    text = clean(turn.text).strip()
    if text:
        more = len(text) - TEXT_CHARS
        lines.append(text if more <= 0 else text[:TEXT_CHARS].rstrip() + f"\n[… {more:,} more characters not imported]")
    if turn.tools:
        lines.append("tools: " + " · ".join(condensed(t) for t in turn.tools))
    return "\n".join(lines)


def opening(conv: Conversation, turns: tuple[Turn, ...]) -> str:
    """The importer's first line: the span, the requests, the folder and branch, the model."""
    times = sorted(t.time for t in turns if t.time)
    span = ""
    if times:
        start, end = times[0][:16].replace("T", " "), times[-1][:16].replace("T", " ")
        span = f" of {start}" + ("" if end == start else f" to {end[11:] if end[:10] == start[:10] else end}") + " UTC"
    requests = sum(1 for t in turns if t.role == "user")
    return (
        f"Claude Code session{span}: {requests} request{'s' * (requests != 1)}, in {conv.cwd} (branch {conv.branch}),"
        f" model {TRANSCRIPT_MODEL}."
    )


def span_unit(conv: Conversation, key: str, title: str, lo: int, hi: int) -> Unit:
    """A note of turns ``lo..hi-1`` of *conv* (0-based), laid out as an imported conversation."""
    turns = conv.turns[lo:hi]
    body = opening(conv, turns) + "\n\n" + "\n\n".join(turn_block(t, lo + i + 1) for i, t in enumerate(turns)) + "\n"
    return Unit(key, title, body, tuple(t.id for t in turns))


def exchanges(conv: Conversation) -> list[tuple[int, int]]:
    """[lo, hi) turn indexes of each exchange: a request and the answers up to the next request."""
    starts = [i for i, t in enumerate(conv.turns) if t.role == "user" or i == 0]
    return [(lo, hi) for lo, hi in zip(starts, [*starts[1:], len(conv.turns)], strict=True)]


def window_units(conv: Conversation) -> list[Unit]:
    spans = exchanges(conv)
    count = (len(spans) + WINDOW_EXCHANGES - 1) // WINDOW_EXCHANGES
    out = []
    for w in range(count):
        group = spans[w * WINDOW_EXCHANGES : (w + 1) * WINDOW_EXCHANGES]
        first, last = w * WINDOW_EXCHANGES + 1, w * WINDOW_EXCHANGES + len(group)
        where = f"exchange {first}" if first == last else f"exchanges {first}-{last}"
        title = f"{conv.title}, {where} of {len(spans)}"
        out.append(span_unit(conv, f"{conv.id}/w{w + 1}", title, group[0][0], group[-1][1]))
    return out


def exchange_units(conv: Conversation) -> list[Unit]:
    spans = exchanges(conv)
    return [
        span_unit(conv, f"{conv.id}/x{n}", f"{conv.title}, exchange {n} of {len(spans)}", lo, hi)
        for n, (lo, hi) in enumerate(spans, 1)
    ]


def note_unit(note: Note) -> Unit:
    return Unit(note.id, note.title, note.text, (note.id,))


def note_text(unit: Unit, *, conversation: bool) -> str:
    """The text stored for *unit*: header (title, kind, tags) and body."""
    if conversation:
        return compose_note(
            unit.body, title=unit.title, kind="conversation", tags=["imported", "claude-code"], model=TRANSCRIPT_MODEL
        )
    return compose_note(unit.body, title=unit.title)


# -- Claude Code transcripts, brought in by the importer ---------------------------------------


def session_id(evalset: EvalSet, conv: Conversation) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{evalset.name}:{conv.id}"))


class _Transcript:
    """The lines of one session's transcript, written as Claude Code writes them."""

    def __init__(self, conv: Conversation, session: str) -> None:
        self.session, self.count = session, 0
        self.base = {"isSidechain": False, "userType": "external", "cwd": conv.cwd, "sessionId": session}
        self.base |= {"version": "2.1.37", "gitBranch": conv.branch}
        self.rows: list[dict[str, Any]] = []
        self.parent: str | None = None

    def ident(self, prefix: str = "") -> str:
        self.count += 1
        made = uuid.uuid5(_NAMESPACE, f"{self.session}:{self.count}")
        return f"{prefix}{made.hex[:24]}" if prefix else str(made)

    def line(self, kind: str, message: dict[str, Any], at: str, **extra: Any) -> None:
        ident = self.ident()
        row = {"parentUuid": self.parent, **self.base, "type": kind, "message": message, "uuid": ident}
        self.rows.append(row | {"timestamp": at} | extra)
        self.parent = ident

    def answer(self, turn: Turn) -> None:
        """An answer: each tool call and its result, then the words (one message id for all)."""
        msg = self.ident("msg_")
        head = {"model": TRANSCRIPT_MODEL, "id": msg, "type": "message", "role": "assistant"}
        for tool in turn.tools:
            name, arg, failed = tool_parts(tool)
            call = self.ident("toolu_")
            args = {_TOOL_KEYS.get(name, "file_path"): arg} if arg else {}
            block = {"type": "tool_use", "id": call, "name": name, "input": args}
            self.line("assistant", head | {"content": [block]}, turn.time, requestId=f"req_{msg}")
            result = {"tool_use_id": call, "type": "tool_result", "content": "(output)", "is_error": failed}
            self.line("user", {"role": "user", "content": [result]}, turn.time, toolUseResult={"type": "text"})
        if turn.text.strip():
            text = {"type": "text", "text": turn.text}
            self.line("assistant", head | {"content": [text]}, turn.time, requestId=f"req_{msg}")


def transcript(conv: Conversation, session: str) -> str:
    """*conv* as a Claude Code session transcript (JSONL)."""
    lines = _Transcript(conv, session)
    for turn in conv.turns:
        if turn.role == "user":
            lines.line("user", {"role": "user", "content": turn.text}, turn.time)
        else:
            lines.answer(turn)
    lines.rows.append({"type": "custom-title", "customTitle": conv.title, "sessionId": session})
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines.rows)


def imported_units(store: Any, evalset: EvalSet, folder: Path) -> tuple[list[Unit], dict[str, str]]:
    """Each conversation written as a transcript under *folder* and imported: its notes (one per
    part) and their store ids (id -> key). The parts' ``messages`` headers map turns to parts."""
    projects = folder / "projects"
    for conv in evalset.conversations:
        place = projects / conv.cwd.replace("/", "-")
        place.mkdir(parents=True, exist_ok=True)
        session = session_id(evalset, conv)
        (place / f"{session}.jsonl").write_text(transcript(conv, session), encoding="utf-8")
    report = import_conversations(store, "claude-code", projects, author="eval-long")
    if report.errors or report.conversations != len(evalset.conversations):
        raise RuntimeError(f"{evalset.name}: import: {report.conversations} conversations, errors {report.errors}")
    units: list[Unit] = []
    key_of: dict[str, str] = {}
    for conv in evalset.conversations:
        for note_id, unit in part_units(store, conv, session_id(evalset, conv)):
            units.append(unit)
            key_of[note_id] = unit.key
    return units, key_of


def part_units(store: Any, conv: Conversation, session: str) -> list[tuple[str, Unit]]:
    """The imported parts of *conv*: (note id, unit), each holding the turns its header counts."""
    found: list[tuple[str, Unit]] = []
    while True:
        note_id = part_note_id("claude-code", session, len(found) + 1)
        try:
            text = store.get_note(note_id).text
        except notewell.NotFoundError:
            break
        parsed = parse_note(text)
        span = next((m for line in parsed.extra if (m := _MESSAGES.fullmatch(line.strip()))), None)
        if span is None:
            raise RuntimeError(f"{conv.id}: part {len(found) + 1} has no messages line")
        lo, hi = int(span.group(1)), int(span.group(2))
        turns = conv.turns[lo - 1 : hi]
        missing = [t.id for n, t in enumerate(turns, lo) if f"**{n}. {t.role}**" not in parsed.body]
        if missing or hi > len(conv.turns):
            raise RuntimeError(f"{conv.id}: part {len(found) + 1} ({lo}-{hi}) does not hold {missing or 'its turns'}")
        key = conv.id if len(found) == 0 else f"{conv.id}/part{len(found) + 1}"
        header = parsed.header or {}  # the baselines read the title and the summary (the set's title)
        title = " - ".join(str(header[k]) for k in ("title", "summary") if header.get(k))
        found.append((note_id, Unit(key, title, parsed.body, tuple(t.id for t in turns))))
    held = sum(len(u.holds) for _, u in found)
    if held != len(conv.turns):
        raise RuntimeError(f"{conv.id}: the import holds {held} of its {len(conv.turns)} turns (roles must alternate)")
    return found


# -- the stores ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Built:
    """One set at one granularity in its own open store."""

    evalset: EvalSet
    granularity: str
    store: Any
    root: Path
    units: list[Unit]  # in the order written: conversations (their notes in order), then the notes
    key_of: dict[str, str]  # store note id -> unit key
    holder: dict[str, str] = field(default_factory=dict)  # turn id / note id -> key of the note holding it
    build_s: float = 0.0
    embed_s: float = 0.0
    _baselines: TextBaselines | None = None

    def relevant(self, query: Query) -> set[str]:
        """The query's distinct relevant notes, as unit keys."""
        return {self.holder[r] for r in query.relevant}

    def baselines(self) -> TextBaselines:
        if self._baselines is None:
            self._baselines = TextBaselines([u.title for u in self.units], [u.body for u in self.units])
        return self._baselines

    def sizes(self) -> dict[str, int]:
        """Notes, their characters (title and body) in all, mean and longest."""
        lengths = [len(u.title) + len(u.body) for u in self.units]
        total = sum(lengths)
        return {"notes": len(lengths), "chars": total, "mean_chars": total // max(1, len(lengths)),
                "max_chars": max(lengths, default=0)}  # fmt: skip

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._baselines is not None:
            self._baselines.close()
            self._baselines = None


def resolve_embedder(embedder: Any) -> Any:
    """``"default"`` -> the bundled model, ``"hash"`` -> HashEmbedder, None -> None (no semantic
    search); anything else is passed on as it is. Resolve once and pass the object to share it."""
    if embedder == "default":
        from notewell.search.embedders import default_embedder

        return default_embedder()
    if embedder == "hash":
        from notewell.search.embedders import HashEmbedder

        return HashEmbedder()
    return embedder


def conversation_units(evalset: EvalSet, granularity: str) -> list[Unit]:
    """The notes the conversations make at ``window`` or ``exchange`` granularity."""
    if granularity == "window":
        return [u for c in evalset.conversations for u in window_units(c)]
    if granularity == "exchange":
        return [u for c in evalset.conversations for u in exchange_units(c)]
    raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}")


def build(evalset: EvalSet, granularity: str, embedder: Any, root: Path) -> Built:
    """A fresh store under *root* holding *evalset* at *granularity*, embedded when *embedder*
    is not None. The store stays open: :func:`close` it."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}")
    embedder = resolve_embedder(embedder)
    where = Path(root) / f"{evalset.name}-{granularity}"
    started = time.perf_counter()
    store = notewell.open(where / "store", watch=False, embedder=embedder)
    if granularity == "conversation":
        units, key_of = imported_units(store, evalset, where)
    else:
        units = conversation_units(evalset, granularity)
        made = store.add_notes([note_text(u, conversation=True) for u in units])
        key_of = {n.id: u.key for n, u in zip(made, units, strict=True)}
    notes = [note_unit(n) for n in evalset.notes]
    texts = [compose_note(n.text, title=n.title, kind=n.kind, tags=list(n.tags)) for n in evalset.notes]
    key_of |= {made.id: u.key for made, u in zip(store.add_notes(texts), notes, strict=True)}
    built = Built(evalset, granularity, store, where, units + notes, key_of)
    built.holder = {held: u.key for u in built.units for held in u.holds}
    built.build_s = time.perf_counter() - started
    if embedder is not None:
        started = time.perf_counter()
        store.embed_pending()
        built.embed_s = time.perf_counter() - started
    return built


def close(built: Built | Iterable[Built]) -> None:
    for b in [built] if isinstance(built, Built) else built:
        b.close()


# -- searching and scoring ----------------------------------------------------------------------


def query_terms(query: str) -> list[str]:
    """The query's distinct terms, lowercased: its non-stop words, and its CJK character pairs
    (a lone character alone) in place of its Chinese runs."""
    lowered = query.lower()
    words = [w for w in _WORD.findall(_CJK.sub(" ", lowered)) if w not in STOP_WORDS]
    pairs = [run[i : i + 2] for run in _CJK.findall(lowered) for i in range(max(1, len(run) - 1))]
    return list(dict.fromkeys(words + pairs))


def words_search(built: Built, query: str, limit: int = LIMIT) -> list[str]:
    return [built.units[i].key for i in built.baselines().words(query_terms(query), limit)]


def fts5_or_search(built: Built, query: str, limit: int = LIMIT) -> list[str]:
    return [built.units[i].key for i in built.baselines().fts5_or(query_terms(query), limit)]


def search(built: Built, system: str, query: str, limit: int = LIMIT) -> list[str]:
    """The unit keys *system* ranks first for *query*, best first (not ``best``: see evaluate)."""
    if system in NOTEWELL_SYSTEMS:
        try:
            cards = built.store.search_notes(query, mode=system, limit=limit)
        except notewell.InvalidQueryError:
            return []
        return [built.key_of[c.id] for c in cards]
    if system == "words":
        return words_search(built, query, limit)
    if system == "fts5_or":
        return fts5_or_search(built, query, limit)
    raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {system!r}")


def metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    """Recall@5 over the distinct relevant notes, and 1/rank of the first one in the top 10."""
    recall = len(set(ranked[:5]) & relevant) / len(relevant) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in relevant), 0.0)
    return recall, rr


@dataclass(frozen=True, slots=True)
class Result:
    query: Query
    recall5: float
    rr10: float
    seconds: float


def _queries(built: Built, split: str) -> list[Query]:
    if split not in (*SPLITS, "both"):
        raise ValueError(f"split must be tune, test or both, got {split!r}")
    return [q for q in built.evalset.queries if split == "both" or q.split == split]


def evaluate(built: Built, system: str, split: str = "tune") -> list[Result]:
    """One result per query of *split*. ``best`` takes, per query, keyword's or semantic's
    result, whichever has the better (R@5, MRR@10)."""
    if system == "best":
        return best_of(evaluate(built, "keyword", split), evaluate(built, "semantic", split))
    out = []
    for q in _queries(built, split):
        started = time.perf_counter()
        ranked = search(built, system, q.text)
        out.append(Result(q, *metrics(ranked, built.relevant(q)), time.perf_counter() - started))
    return out


def best_of(keyword: list[Result], semantic: list[Result]) -> list[Result]:
    """Per query, keyword's result or semantic's, whichever has the better (R@5, MRR@10)."""
    return [max(k, s, key=lambda r: (r.recall5, r.rr10)) for k, s in zip(keyword, semantic, strict=True)]


def row_labels(results: Iterable[Result]) -> list[str]:
    """The table's rows: each kind (the spec's first, in its order), each language when queries name one, all."""
    results = list(results)
    kinds = sorted({r.query.kind for r in results}, key=lambda k: (KINDS.index(k) if k in KINDS else len(KINDS), k))
    langs = sorted({r.query.lang for r in results if r.query.lang})
    return kinds + [f"lang {lang}" for lang in langs] + ["all"]


def _in_row(result: Result, label: str) -> bool:
    if label == "all":
        return True
    if label.startswith("lang "):
        return result.query.lang == label[5:]
    return result.query.kind == label


def summarise(results: Iterable[Result]) -> dict[str, tuple[float, float]]:
    """Mean (R@5, MRR@10) per row of :func:`row_labels`, averaged over queries."""
    results = list(results)
    out = {}
    for label in row_labels(results):
        rows = [r for r in results if _in_row(r, label)]
        if rows:
            out[label] = (sum(r.recall5 for r in rows) / len(rows), sum(r.rr10 for r in rows) / len(rows))
    return out


def score(built: Built, system: str, split: str = "tune") -> dict[str, tuple[float, float]]:
    """*system*'s searches for every query of *split*, averaged: {kind: (R@5, MRR@10), ..., "all": ...}."""
    return summarise(evaluate(built, system, split))


def evaluate_all(built: Built, systems: list[str], split: str) -> dict[str, list[Result]]:
    """Every system's results for *split*, keyword's and semantic's searched once for ``best`` too."""
    out: dict[str, list[Result]] = {}
    needed = [s for s in systems if s != "best"]
    if "best" in systems:
        needed += [s for s in ("keyword", "semantic") if s not in needed]
    for system in needed:
        out[system] = evaluate(built, system, split)
    if "best" in systems:
        out["best"] = best_of(out["keyword"], out["semantic"])
    return {s: out[s] for s in systems}


# -- the command --------------------------------------------------------------------------------


def table(results: dict[str, list[Result]], systems: list[str]) -> list[str]:
    """Rows: kinds, languages, all; columns: each system's R@5 / MRR@10."""
    first = results[systems[0]]
    summaries = {s: summarise(results[s]) for s in systems}
    lines = [f"{'kind':14s} {'n':>4s}  " + "  ".join(f"{s:>15s}" for s in systems)]
    lines.append(f"{'':14s} {'':>4s}  " + "  ".join(f"{'R@5 / MRR@10':>15s}" for _ in systems))
    for label in row_labels(first):
        n = sum(1 for r in first if _in_row(r, label))
        cells = [f"{summaries[s][label][0]:.3f} / {summaries[s][label][1]:.3f}" for s in systems]
        lines.append(f"{label:14s} {n:4d}  " + "  ".join(f"{c:>15s}" for c in cells))
    return lines


def figures(results: dict[str, list[Result]]) -> dict[str, Any]:
    """The JSON report's figures of one split: per system, each row's n, R@5, MRR@10, search time."""
    out: dict[str, Any] = {}
    for system, got in results.items():
        rows = {}
        for label, (r5, mrr) in summarise(got).items():
            n = sum(1 for r in got if _in_row(r, label))
            rows[label] = {"n": n, "recall5": round(r5, 4), "mrr10": round(mrr, 4)}
        out[system] = {"rows": rows, "search_s": round(sum(r.seconds for r in got), 3)}
    return out


def size_line(built: Built) -> str:
    s = built.sizes()
    return (
        f"{s['notes']} notes, {s['chars']:,} characters (mean {s['mean_chars']:,}, max {s['max_chars']:,});"
        f" build {built.build_s:.1f} s, embedding {built.embed_s:.1f} s"
    )


def run_granularity(built: Built, systems: list[str], splits: list[str]) -> dict[str, Any]:
    """Print one set x granularity's tables (each split apart) and return its figures."""
    print(f"\n== {built.evalset.name}, {built.granularity} granularity: {size_line(built)}")
    report: dict[str, Any] = built.sizes() | {"build_s": round(built.build_s, 3), "embed_s": round(built.embed_s, 3)}
    report["splits"] = {}
    for split in splits:
        results = evaluate_all(built, systems, split)
        count = len(results[systems[0]])
        if not count:
            continue
        searched = sum(r.seconds for s in systems if s != "best" for r in results[s])
        print(f"-- {split} ({count} queries; searching {searched:.1f} s)")
        for line in table(results, systems):
            print(line)
        report["splits"][split] = figures(results)
    return report


def run_set(folder: Path, args: argparse.Namespace, systems: list[str], embedder: Any, root: Path) -> dict[str, Any]:
    evalset = load(folder, args.split)
    splits = list(SPLITS) if args.split == "both" else [args.split]
    counts = {s: sum(1 for q in evalset.queries if q.split == s) for s in splits}
    turns = [t for c in evalset.conversations for t in c.turns]
    cut = sum(1 for t in turns if len(clean(t.text).strip()) > TEXT_CHARS)
    print(
        f"\n# set {evalset.name} ({folder}): {len(evalset.conversations)} conversations ({len(turns)} turns,"
        f" {cut} over {TEXT_CHARS:,} characters: cut there, as the importer cuts them), {len(evalset.notes)} notes,"
        " queries " + ", ".join(f"{s} {n}" for s, n in counts.items())
    )
    report: dict[str, Any] = {"folder": str(folder), "conversations": len(evalset.conversations)}
    report |= {"turns": len(turns), "turns_cut": cut, "notes": len(evalset.notes), "queries": counts}
    report["granularities"] = {}
    for granularity in args.granularities:
        built = build(evalset, granularity, embedder, root)
        try:
            report["granularities"][granularity] = run_granularity(built, systems, splits)
        finally:
            built.close()
    return report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", metavar="DIR[,DIR]", help=f"set folders (default: every set in {DEFAULT_SETS})")
    ap.add_argument("--granularity", default="all", help=f"comma-separated, of {','.join(GRANULARITIES)} (or all)")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {','.join(SYSTEMS)}")
    ap.add_argument("--embedder", choices=("default", "hash"), default="default")
    ap.add_argument("--split", choices=(*SPLITS, "both"), default="both", help="which queries (reported apart)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every figure to FILE")
    args = ap.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(args.systems) - set(SYSTEMS))
    if unknown or not args.systems:
        ap.error(f"unknown systems {', '.join(unknown) or '(none given)'}; choose from {', '.join(SYSTEMS)}")
    chosen = GRANULARITIES if args.granularity == "all" else [g.strip() for g in args.granularity.split(",")]
    if not chosen or set(chosen) - set(GRANULARITIES):
        ap.error(f"--granularity takes {', '.join(GRANULARITIES)} or all")
    args.granularities = list(dict.fromkeys(chosen))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    folders = set_folders(args.sets)
    missing = [str(f) for f in folders if not all((f / name).is_file() for name in SET_FILES)]
    if not folders or missing:
        print(f"eval_long: no set at {', '.join(missing) or DEFAULT_SETS} (give --sets)", file=sys.stderr)
        return 2
    semantic = any(s in ("semantic", "hybrid", "best") for s in args.systems)
    embedder = resolve_embedder(args.embedder) if semantic else None  # one model for every store
    print(f"systems: {', '.join(args.systems)}; embedder: {args.embedder if semantic else 'none'}")
    report: dict[str, Any] = {"embedder": args.embedder if semantic else None, "systems": args.systems}
    report |= {"split": args.split, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="nw-eval-long-") as tmp:
        for folder in folders:
            report["sets"][folder.name] = run_set(folder, args, args.systems, embedder, Path(tmp))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
