#!/usr/bin/env python3
"""Retrieval quality on the public LoCoMo benchmark: Recall@5 and MRR@10 per question category,
for notewell's keyword, semantic and hybrid search beside two baselines computed here.

The data (not part of the project; read from its path at run time): LoCoMo's locomo10.json, 10
long conversations between two people in 19-32 dated sessions, and 1,986 questions, each with its
evidence as dialogue ids (``D3:5`` = session 3, turn 5) and a category: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial. Adversarial questions have no evidence to retrieve and
are left out, as are the 4 others whose evidence list is empty: 1,536 questions remain. Evidence
ids are read leniently (``D8:6; D9:17``, ``D:11:26``, ``D30:05``); the ones naming no turn of the
conversation (``D``, and two turns past the end of their session) are dropped and counted. The
errors.json beside the data lists 99 questions with wrong gold *answers*; their evidence is mostly
sound, so every question is kept.

Each conversation goes into a fresh store of its own, at one of two granularities:

- ``session``: a note per session, titled ``Session N, <date and time>``, the turns as lines
  ``Speaker: text`` (a shared image adds `` [shares a photo: <caption>]``); evidence ``D3:5`` is
  session 3's note.
- ``turn``: a note per turn, titled ``<date and time>, <speaker>``, with that one line as body;
  evidence is the turn's own note.

Systems: notewell's ``keyword``, ``semantic`` and ``hybrid`` (``store.search_notes``, limit 10),
``grep`` (the NoteTool chapter's substring search, widened to the question's words: notes ranked by
how many distinct non-stop words of the question they hold as case-insensitive substrings, ties in
note order, notes with none left out) and ``fts5_or`` (raw SQLite FTS5 in memory, ``porter
unicode61 remove_diacritics 2``, title and body columns, ``bm25(t, 3.0, 1.0)``, the question's
words quoted and ORed). Recall@5 is the share of a question's distinct evidence notes in the top 5;
MRR@10 is 1/rank of the first evidence note in the top 10. Averages are over questions.

Usage:
    python benchmarks/locomo.py                                  # both granularities, all systems
    python benchmarks/locomo.py --conversations 1 --embedder hash   # a quick smoke run
    python benchmarks/locomo.py --granularity session --systems keyword,fts5_or --json out.json

For tuning, import it, build once and score again after changing notewell's module constants::

    convs = locomo.load(locomo.DEFAULT_DATA)
    built = locomo.build(convs, "session", "default", Path(tmp))
    locomo.score(built, "hybrid")   # {1: (r5, mrr), ..., "all": (r5, mrr)}
    notewell.search.fusion.HYBRID_SEMANTIC = 0.5
    locomo.score(built, "hybrid")
    locomo.close(built)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import notewell
from notewell.model.header import compose_note

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"
GRANULARITIES = ("session", "turn")
NOTEWELL_SYSTEMS = ("keyword", "semantic", "hybrid")
SYSTEMS = (*NOTEWELL_SYSTEMS, "grep", "fts5_or")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
TUNING_CONVERSATIONS = 5  # the first five chose notewell's constants; the rest are held out

# English stop words the baselines drop from a question (with the pieces \w+ makes of "I'm", "don't").
STOP_WORDS = frozenset(
    """a an the is are was were be been being am of to in on at for and or nor but with without how what
    why when where which who whom whose do does did doing done i me my mine we us our you your it its this
    that these those there here can could should would will shall may might must any some about from by as
    not no into onto than then so if has have had having just also very more most such only own same too
    s t d ll m re ve he him his she her hers they them their theirs up out over again all each both other""".split()
)

FTS5_TOKENIZER = "porter unicode61 remove_diacritics 2"

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_WORD = re.compile(r"\w+")


# -- the data -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str  # "D3:5"
    session: int
    speaker: str
    text: str
    caption: str | None = None

    def line(self) -> str:
        photo = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{photo}"


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    date_time: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # dialogue ids of turns that exist, normalised ("D3:5"), distinct


@dataclass(slots=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session]
    questions: list[Question]  # those with evidence to retrieve (not adversarial, not empty)
    dropped: list[str] = field(default_factory=list)  # evidence ids naming no turn, as written
    adversarial: int = 0
    without_evidence: int = 0  # non-adversarial questions left with no evidence

    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def parse_evidence(raw: str) -> list[str]:
    """The dialogue ids in one evidence string, normalised: ``"D8:6; D9:17"`` -> D8:6, D9:17;
    ``"D:11:26"`` -> D11:26; ``"D30:05"`` -> D30:5; ``"D"`` -> none."""
    return [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE.findall(raw)]


def conversation_from(record: dict[str, Any]) -> Conversation:
    conv = record["conversation"]
    sessions = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    for n in numbers:
        turns = []
        for i, t in enumerate(conv[f"session_{n}"]):
            ids = parse_evidence(str(t.get("dia_id", "")))
            turns.append(
                Turn(
                    dia_id=ids[0] if ids else f"D{n}:{i + 1}",
                    session=n,
                    speaker=t["speaker"],
                    text=t["text"],
                    caption=t.get("blip_caption") or None,
                )
            )
        if turns:
            sessions.append(Session(n, str(conv.get(f"session_{n}_date_time", "")), tuple(turns)))
    known = {t.dia_id for s in sessions for t in s.turns}
    out = Conversation(record.get("sample_id", "?"), conv["speaker_a"], conv["speaker_b"], sessions, [])
    for q in record["qa"]:
        if q.get("category") == ADVERSARIAL:
            out.adversarial += 1
            continue
        evidence: list[str] = []
        for raw in q.get("evidence") or []:
            ids = parse_evidence(str(raw))
            if not ids:
                out.dropped.append(str(raw))
            for dia_id in ids:
                if dia_id not in known:
                    out.dropped.append(str(raw) if len(ids) == 1 else dia_id)
                elif dia_id not in evidence:
                    evidence.append(dia_id)
        if not evidence:
            out.without_evidence += 1
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        out.questions.append(Question(q["question"], str(answer), int(q["category"]), tuple(evidence)))
    return out


def load(path: str | Path = DEFAULT_DATA) -> list[Conversation]:
    """The conversations in a locomo10.json."""
    return [conversation_from(r) for r in json.loads(Path(path).read_text(encoding="utf-8"))]


# -- the stores ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Built:
    """One conversation in its own open store, at one granularity."""

    conversation: Conversation
    granularity: str
    store: Any
    root: Path
    titles: list[str]  # per note, in the order written
    bodies: list[str]
    units: list[str]  # per note: its unit key ("S3" for a session, "D3:5" for a turn)
    unit_of: dict[str, str]  # note id -> unit key
    build_s: float = 0.0
    embed_s: float = 0.0
    _fts: sqlite3.Connection | None = None
    _lowered: list[str] | None = None

    @property
    def questions(self) -> list[Question]:
        return self.conversation.questions

    def relevant(self, question: Question) -> set[str]:
        """The question's distinct evidence notes, as unit keys."""
        if self.granularity == "session":
            return {f"S{d.split(':')[0][1:]}" for d in question.evidence}
        return set(question.evidence)

    def lowered(self) -> list[str]:
        """Each note's title and body, lowercased (what grep searches)."""
        if self._lowered is None:
            self._lowered = [f"{t}\n{b}".lower() for t, b in zip(self.titles, self.bodies, strict=True)]
        return self._lowered

    def fts(self) -> sqlite3.Connection:
        if self._fts is None:
            db = sqlite3.connect(":memory:")
            db.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='{FTS5_TOKENIZER}')")
            db.executemany(
                "INSERT INTO t (rowid, title, body) VALUES (?, ?, ?)",
                [(i, t, b) for i, (t, b) in enumerate(zip(self.titles, self.bodies, strict=True))],
            )
            self._fts = db
        return self._fts

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._fts is not None:
            self._fts.close()
            self._fts = None


def units_of(conversation: Conversation, granularity: str) -> list[tuple[str, str, str]]:
    """(unit key, title, body) of each note the conversation makes at *granularity*."""
    if granularity == "session":
        return [
            (f"S{s.number}", f"Session {s.number}, {s.date_time}", "\n".join(t.line() for t in s.turns))
            for s in conversation.sessions
        ]
    if granularity == "turn":
        return [(t.dia_id, f"{s.date_time}, {t.speaker}", t.line()) for s in conversation.sessions for t in s.turns]
    raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}")


def resolve_embedder(embedder: Any) -> Any:
    """``"default"`` -> the bundled model (made once, shared by every store), ``"hash"`` ->
    HashEmbedder, None -> None (no semantic search); anything else is passed on as it is."""
    if embedder == "default":
        from notewell.search.embedders import default_embedder

        return default_embedder()
    if embedder == "hash":
        from notewell.search.embedders import HashEmbedder

        return HashEmbedder()
    return embedder


def build(conversations: Iterable[Conversation], granularity: str, embedder: Any, root: Path) -> list[Built]:
    """A fresh store per conversation under *root*, its notes written and (when *embedder* is not
    None) embedded. The stores stay open: :func:`close` them."""
    embedder = resolve_embedder(embedder)
    out = []
    for conv in conversations:
        started = time.perf_counter()
        units = units_of(conv, granularity)
        where = Path(root) / f"{conv.sample_id}-{granularity}"
        store = notewell.open(where, watch=False, embedder=embedder)
        notes = store.add_notes([compose_note(body, title=title) for _key, title, body in units])
        built = Built(
            conversation=conv,
            granularity=granularity,
            store=store,
            root=where,
            titles=[t for _k, t, _b in units],
            bodies=[b for _k, _t, b in units],
            units=[k for k, _t, _b in units],
            unit_of={n.id: k for n, (k, _t, _b) in zip(notes, units, strict=True)},
        )
        built.build_s = time.perf_counter() - started
        if embedder is not None:
            started = time.perf_counter()
            store.embed_pending()
            built.embed_s = time.perf_counter() - started
        out.append(built)
    return out


def close(built: Iterable[Built]) -> None:
    for b in built:
        b.close()


# -- searching and scoring ----------------------------------------------------------------------


def question_words(question: str) -> list[str]:
    """The question's distinct words, lowercased, stop words dropped, in order."""
    return list(dict.fromkeys(w for w in _WORD.findall(question.lower()) if w not in STOP_WORDS))


def grep_search(built: Built, question: str, limit: int = 10) -> list[str]:
    words = question_words(question)
    hits = [(-sum(w in text for w in words), i) for i, text in enumerate(built.lowered())]
    return [built.units[i] for neg, i in sorted(hits) if neg < 0][:limit]


def fts5_or_search(built: Built, question: str, limit: int = 10) -> list[str]:
    words = question_words(question)
    if not words:
        return []
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = built.fts().execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t, 3.0, 1.0), rowid LIMIT ?", (match, limit)
    )
    return [built.units[r] for (r,) in rows]


def search(built: Built, system: str, question: str, limit: int = 10) -> list[str]:
    """The unit keys *system* ranks first for *question*, best first."""
    if system in NOTEWELL_SYSTEMS:
        try:
            cards = built.store.search_notes(question, mode=system, limit=limit)
        except notewell.InvalidQueryError:
            return []
        return [built.unit_of[c.id] for c in cards]
    if system == "grep":
        return grep_search(built, question, limit)
    if system == "fts5_or":
        return fts5_or_search(built, question, limit)
    raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {system!r}")


def metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    """Recall@5 over the distinct relevant notes, and 1/rank of the first one in the top 10."""
    recall = len(set(ranked[:5]) & relevant) / len(relevant) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in relevant), 0.0)
    return recall, rr


@dataclass(frozen=True, slots=True)
class Result:
    category: int
    recall5: float
    rr10: float
    seconds: float


def evaluate(built: Built | Iterable[Built], system: str, limit: int = 10) -> list[Result]:
    """One result per question of every conversation in *built*."""
    out = []
    for b in [built] if isinstance(built, Built) else built:
        for q in b.questions:
            started = time.perf_counter()
            ranked = search(b, system, q.text, limit)
            seconds = time.perf_counter() - started
            out.append(Result(q.category, *metrics(ranked, b.relevant(q)), seconds))
    return out


def summarise(results: Iterable[Result]) -> dict[int | str, tuple[float, float]]:
    """Mean (Recall@5, MRR@10) per category and over all ("all"), averaged over questions."""
    groups: dict[int | str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.category, []).append(r)
        groups.setdefault("all", []).append(r)
    return {
        k: (sum(r.recall5 for r in rs) / len(rs), sum(r.rr10 for r in rs) / len(rs))
        for k, rs in sorted(groups.items(), key=lambda kv: (kv[0] == "all", str(kv[0])))
    }


def score(built: Built | Iterable[Built], system: str, limit: int = 10) -> dict[int | str, tuple[float, float]]:
    """Run *system*'s searches for every question and average: {category: (R@5, MRR@10), "all": ...}."""
    return summarise(evaluate(built, system, limit))


# -- the command --------------------------------------------------------------------------------


def table(results: dict[str, list[Result]], systems: list[str]) -> list[str]:
    counts: dict[int, int] = {}
    for r in results[systems[0]]:
        counts[r.category] = counts.get(r.category, 0) + 1
    summaries = {s: summarise(results[s]) for s in systems}
    lines = [f"{'category':16s} {'n':>5s}  " + "  ".join(f"{s:>15s}" for s in systems)]
    lines.append(f"{'':16s} {'':>5s}  " + "  ".join(f"{'R@5 / MRR@10':>15s}" for _ in systems))
    rows: list[tuple[str, int | str, int]] = [(f"{c} {CATEGORIES.get(c, '?')}", c, counts[c]) for c in sorted(counts)]
    rows.append(("all", "all", sum(counts.values())))
    for label, key, n in rows:
        cells = [f"{summaries[s][key][0]:.3f} / {summaries[s][key][1]:.3f}" for s in systems]
        lines.append(f"{label:16s} {n:5d}  " + "  ".join(f"{c:>15s}" for c in cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"locomo10.json (default {DEFAULT_DATA})")
    ap.add_argument("--granularity", choices=(*GRANULARITIES, "both"), default="both")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {','.join(SYSTEMS)}")
    ap.add_argument("--conversations", type=int, metavar="N", help="only the first N conversations")
    ap.add_argument("--embedder", choices=("default", "hash"), default="default")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every figure to FILE")
    args = ap.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown or not systems:
        ap.error(f"unknown systems {', '.join(unknown) or '(none given)'}; choose from {', '.join(SYSTEMS)}")
    if args.conversations is not None and args.conversations < 1:
        ap.error("--conversations must be at least 1")
    if not args.data.is_file():
        print(f"locomo: no data at {args.data} (give --data)", file=sys.stderr)
        return 2

    conversations = load(args.data)[: args.conversations]
    granularities = list(GRANULARITIES) if args.granularity == "both" else [args.granularity]
    semantic = any(s in ("semantic", "hybrid") for s in systems)
    embedder = resolve_embedder(args.embedder) if semantic else None  # one model for every store

    questions = sum(len(c.questions) for c in conversations)
    dropped = [(c.sample_id, d) for c in conversations for d in c.dropped]
    print(
        f"LoCoMo: {len(conversations)} conversations, {questions} questions with evidence"
        f" ({sum(c.adversarial for c in conversations)} adversarial and"
        f" {sum(c.without_evidence for c in conversations)} without evidence left out);"
        f" {len(dropped)} evidence ids naming no turn dropped"
        + (": " + ", ".join(f"{d!r} ({sid})" for sid, d in dropped) if dropped else "")
    )
    print(f"systems: {', '.join(systems)}; embedder: {args.embedder if semantic else 'none'}")

    report: dict[str, Any] = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in conversations],
        "embedder": args.embedder if semantic else None,
        "questions": questions,
        "dropped_evidence": [{"conversation": sid, "evidence": d} for sid, d in dropped],
        "granularities": {},
    }
    for granularity in granularities:
        results: dict[str, list[Result]] = {s: [] for s in systems}
        # Conversations 1-5 chose notewell's constants (benchmarks/tune_search.py); 6-10 never did.
        parts: dict[str, dict[str, list[Result]]] = {"tuning, 1-5": {}, "held out, 6-10": {}}
        notes = 0
        build_s = embed_s = 0.0
        with tempfile.TemporaryDirectory(prefix="nw-locomo-") as tmp:
            for number, conv in enumerate(conversations, 1):  # one store at a time: build, score, close
                (built,) = build([conv], granularity, embedder, Path(tmp))
                notes += len(built.units)
                build_s += built.build_s
                embed_s += built.embed_s
                part = parts["tuning, 1-5" if number <= TUNING_CONVERSATIONS else "held out, 6-10"]
                for system in systems:
                    got = evaluate(built, system)
                    results[system] += got
                    part.setdefault(system, []).extend(got)
                built.close()
                shutil.rmtree(built.root, ignore_errors=True)
        print()
        print(
            f"== {granularity} granularity: {notes} notes; build {build_s:.1f} s"
            + (f", embedding {embed_s:.1f} s" if semantic else "")
        )
        for line in table(results, systems):
            print(line)
        if len(conversations) > TUNING_CONVERSATIONS:
            for name, part in parts.items():
                print(f"-- conversations {name}:")
                for line in table(part, systems):
                    print(line)
        search_s = {s: sum(r.seconds for r in results[s]) for s in systems}
        n = max(1, len(results[systems[0]]))
        print(
            "search time: " + ", ".join(f"{s} {search_s[s]:.2f} s ({1000 * search_s[s] / n:.1f} ms/q)" for s in systems)
        )
        report["granularities"][granularity] = {
            "notes": notes,
            "build_s": round(build_s, 3),
            "embed_s": round(embed_s, 3),
            "systems": {
                s: {
                    "search_s": round(search_s[s], 3),
                    "categories": {
                        str(k): {
                            "name": CATEGORIES.get(k, "all") if isinstance(k, int) else "all",
                            "n": sum(1 for r in results[s] if k == "all" or r.category == k),
                            "recall5": round(r5, 4),
                            "mrr10": round(mrr, 4),
                        }
                        for k, (r5, mrr) in summarise(results[s]).items()
                    },
                }
                for s in systems
            },
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
