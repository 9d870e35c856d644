#!/usr/bin/env python3
"""Retrieval quality on the public LoCoMo benchmark: Recall@5 and MRR@10 per question category,
for notewell's keyword, semantic and hybrid search beside two baselines computed here, and the
published window protocol's hit@k and session nDCG@k.

The data (not part of the project; read from its path at run time): LoCoMo's locomo10.json, 10
long conversations between two people in 19-32 dated sessions, and 1,986 questions, each with its
evidence as dialogue ids (``D3:5`` = session 3, turn 5) and a category: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial. Evidence ids are read leniently (``D8:6; D9:17``,
``D:11:26``, ``D30:05``, ``D9:1 D4:4``); the ones naming no turn of the conversation (``D``, and
two turns past the end of their session) are dropped and counted. A question left with no
evidence is not scored: 4 open-domain ones. The errors.json beside the data lists 99 questions
with wrong gold *answers*; their evidence is mostly sound, so every question is kept.

Each conversation goes into a fresh store of its own, at one of four granularities:

- ``session``: a note per session, titled ``Session N, <date and time>``, the turns as lines
  ``Speaker: text`` (a shared image adds `` [shares a photo: <caption>]``); evidence ``D3:5`` is
  session 3's note.
- ``turn``: a note per turn, titled ``<date and time>, <speaker>``, with that one line as body;
  evidence is the turn's own note.
- ``window``: each session cut into windows of 6 consecutive turns, each starting 5 turns after
  the one before (an overlap of one turn; a session of 6 turns or fewer is one window, the last
  window ends with the session, none crosses a session's end): the published protocol's chunks
  (below). Titled and written as ``session`` (``Session N, <date and time>``, lines
  ``Speaker: text``); evidence ``D3:6`` is every window holding that turn.
- ``part``: the way a long imported conversation becomes long notes: consecutive whole sessions
  packed into notes of at most PART_CHARS (20,000) characters of body, each session under a
  heading ``## Session N, <date and time>``, titled ``Sessions N-M, <first date> to <last
  date>``; evidence ``D3:5`` is the note holding session 3. This measures ranking on long notes:
  a conversation makes only 3-6 of them, so R@5 is near 1 by construction and MRR@10 (is the
  note holding the evidence first?) is the figure that says something.

Systems: notewell's ``keyword``, ``semantic`` and ``hybrid`` (``store.search_notes``, limit 10),
``grep`` (the NoteTool chapter's substring search, widened to the question's words: notes ranked by
how many distinct non-stop words of the question they hold as case-insensitive substrings, ties in
note order, notes with none left out) and ``fts5_or`` (raw SQLite FTS5 in memory, ``porter
unicode61 remove_diacritics 2``, title and body columns, ``bm25(t, 3.0, 1.0)``, the question's
words quoted and ORed).

Two ways of scoring (``--protocol``):

- ``notes`` (the default): categories 1-4 (1,536 questions; adversarial ones left out), each
  searched once per system. Recall@5 is the share of a question's evidence that the top 5 holds,
  evidence turns held by the same notes counting once: at ``session`` and ``part`` granularity
  the share of its distinct evidence notes, at ``turn`` the share of its evidence turns, at
  ``window`` the share of its evidence turns some window in the top 5 holds (a turn two windows
  share is found in either; turns the same windows hold count once). MRR@10 is 1/rank of the
  first note in the top 10 holding any evidence. Averages are over questions.
- ``engram``: the published window protocol below, at ``session``, ``turn`` or ``window``
  granularity (a ``part`` note holds several sessions): every question with evidence (1,982),
  adversarial included; hit@5, hit@10, nDCG@5 and nDCG@10 over the distinct sessions of the top 10
  notes.

The published window protocol. Engram v0.1.3 reported on LoCoMo's issue tracker
(https://github.com/snap-research/locomo/issues/38, 2026-04-17: "Engram v0.1.3: 93.9% R@5 on
LoCoMo — zero-LLM retrieval, $0/query") a table of R@5 93.9% (1862/1982), R@10 95.0%, NDCG@5
0.894 and NDCG@10 0.896 over "1982 questions, 10 conversations", and one per category. It says
"We evaluate whether the correct evidence turns are retrieved in the top-k", and names "Session
chunking (~6 turns, 1-turn overlap) to avoid embedding dilution on long sessions" and a
"Timestamp prefix" among its techniques, with bge-large-en-v1.5 embeddings, BM25, reciprocal-rank
fusion and a cross-encoder reranker, no LLM. The issue says no more of the protocol; the rest is
read from the code it links (github.com/Nitin-Gupta1109/engram at version 0.1.3:
benchmarks/locomo_bench.py; engram/ingestion/parser.py, ``_chunk_turns``, ``_render_turn`` and
``session_to_documents``):

- Chunks are cut per session (``session_to_documents`` is called once per session), never across
  a session's end: a session of at most 6 turns is one chunk, a longer one chunks of 6 consecutive
  turns starting 5 apart. (Engram's loop also closes every longer session with a chunk of its last
  turn alone, a repeat of the turn ending the chunk before; that one is not made here.)
- A chunk's text is ``[<session date_time>] `` followed by its turns one per line as
  ``<speaker's name>: <text>``, both speakers' turns, no image captions. Engram also indexes, per
  session, a "<name> has mentioned: ..." and a "Topics discussed: ..." document drawn from the
  first speaker's turns; these belong to its system, not to the protocol, and are not made here.
- Scoring: the top 10 documents (``top_k * 2``) are mapped to their sessions and repeats dropped,
  the first kept: a ranked list of at most 10 distinct sessions. "R@5" (hit@5 here) is 1 when
  an evidence session is among the first 5 of that list, "R@10" (hit@10) among all of it, so the
  top 5 sessions may come from up to 10 chunks, and hit@10 looks at fewer than 10 sessions when
  chunks of one session repeat. It is about sessions, not the evidence turns the issue names.
  nDCG@k: binary relevance of each of the list's first k sessions (an evidence session 1, else 0),
  a session counted once, DCG = sum rel_i / log2(i + 1) over ranks i = 1..k, divided by the DCG of
  those same k relevances sorted best first (not of the question's evidence sessions), so a
  question whose only retrieved evidence session is first scores 1 even when another evidence
  session was missed; 0 when none is retrieved. All four are averaged over questions, per
  category and overall.
- Questions: every one whose evidence list is not empty: 1,986 less the 4 open-domain ones with
  none; the 446 adversarial ones are scored (each cites the turn whose premise it twists).
  Engram maps an evidence id to the session before its first colon (``D8:6; D9:17`` -> session
  8 only, ``D:11:26`` and ``D`` -> none, ``D4:36`` past its session's end -> session 4); here the
  evidence is read as above (sessions 8 and 9, 11; ``D4:36`` dropped), which changes the evidence
  sessions of 6 questions (conv-26 1, conv-43 1, conv-47 1, conv-49 3).
- The issue's category names are shifted from LoCoMo's: its "single-hop (282)" is category 1
  (LoCoMo's multi-hop), "temporal (321)" 2, "multi-hop (92)" 3 (open-domain), "contextual (841)" 4
  (single-hop), "adversarial (446)" 5. The tables here use LoCoMo's names.

Usage:
    python benchmarks/locomo.py                                  # session and turn notes, all systems
    python benchmarks/locomo.py --conversations 1 --embedder hash   # a quick smoke run
    python benchmarks/locomo.py --granularity session --systems keyword,fts5_or --json out.json
    python benchmarks/locomo.py --granularity window --protocol engram   # the published protocol
    python benchmarks/locomo.py --granularity window,part --protocol both

For tuning, import it, build once and score again after changing notewell's module constants::

    convs = locomo.load(locomo.DEFAULT_DATA)
    built = locomo.build(convs, "session", "default", Path(tmp))
    locomo.score(built, "hybrid")   # {1: (r5, mrr), ..., "all": (r5, mrr)}
    locomo.score(built, "hybrid", protocol="engram")   # {1: (hit5, hit10, ndcg5, ndcg10), ..., 5: ..., "all": ...}
    notewell.search.fusion.HYBRID_SEMANTIC = 0.5
    locomo.score(built, "hybrid")
    locomo.close(built)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines import STOP_WORDS, TextBaselines

import notewell
from notewell.model.header import compose_note

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"
GRANULARITIES = ("session", "turn", "window", "part")
NOTEWELL_SYSTEMS = ("keyword", "semantic", "hybrid")
SYSTEMS = (*NOTEWELL_SYSTEMS, "grep", "fts5_or")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
CATEGORY_NAMES = {**CATEGORIES, ADVERSARIAL: "adversarial"}
TUNING_CONVERSATIONS = 5  # the first five chose notewell's constants; the rest are held out

WINDOW_TURNS = 6  # the published protocol's chunks: 6 consecutive turns of one session,
WINDOW_OVERLAP = 1  # each sharing one turn with the one before
PART_CHARS = 20_000  # a part note's body holds whole sessions up to this many characters

# What each protocol scores: its metrics (names as in the JSON report, labels as printed) and the
# granularities it is defined at (the published one scores sessions: a part note holds several).
PROTOCOLS = ("notes", "engram")
METRICS = {"notes": ("recall5", "mrr10"), "engram": ("hit5", "hit10", "ndcg5", "ndcg10")}
LABELS = {
    "recall5": "R@5",
    "mrr10": "MRR@10",
    "hit5": "hit@5",
    "hit10": "hit@10",
    "ndcg5": "nDCG@5",
    "ndcg10": "nDCG@10",
}
PROTOCOL_GRANULARITIES = {"notes": GRANULARITIES, "engram": ("session", "turn", "window")}
# Engram v0.1.3's figures (snap-research/locomo#38), printed beside the engram protocol's tables.
PUBLISHED = {"hit5": 0.939, "hit10": 0.950, "ndcg5": 0.894, "ndcg10": 0.896}


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

    def heading(self) -> str:
        return f"Session {self.number}, {self.date_time}"

    def body(self) -> str:
        return "\n".join(t.line() for t in self.turns)


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
    questions: list[Question]  # those with evidence to retrieve, adversarial ones left out
    dropped: list[str] = field(default_factory=list)  # evidence ids naming no turn, as written
    adversarial: int = 0  # adversarial questions, with evidence or not
    without_evidence: int = 0  # non-adversarial questions left with no evidence
    adversarial_questions: list[Question] = field(default_factory=list)  # those with evidence

    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    def scored(self, protocol: str = "notes") -> list[Question]:
        """The questions *protocol* scores: categories 1-4 (``notes``), or every question with
        evidence, adversarial ones included (``engram``)."""
        check_protocol(protocol)
        return self.questions if protocol == "notes" else self.questions + self.adversarial_questions


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")


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
        adversarial = q.get("category") == ADVERSARIAL
        if adversarial:
            out.adversarial += 1
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
            out.without_evidence += not adversarial
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        question = Question(q["question"], str(answer), int(q["category"]), tuple(evidence))
        (out.adversarial_questions if adversarial else out.questions).append(question)
    return out


def load(path: str | Path = DEFAULT_DATA) -> list[Conversation]:
    """The conversations in a locomo10.json."""
    return [conversation_from(r) for r in json.loads(Path(path).read_text(encoding="utf-8"))]


# -- the notes ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One note a conversation makes: its key, title, body, and the turns and sessions it holds."""

    key: str  # "S3" (a session), "D3:5" (a turn), "S3:6-11" (a window), "S1-S4" (a part)
    title: str
    body: str
    turns: tuple[str, ...]  # dia ids
    sessions: tuple[int, ...]


def windows(turns: tuple[Turn, ...], size: int = WINDOW_TURNS, overlap: int = WINDOW_OVERLAP) -> list[range]:
    """Index ranges of one session's windows: *size* consecutive turns, each window starting
    ``size - overlap`` turns after the one before, the last one ending with the session."""
    if not 0 <= overlap < size:
        raise ValueError(f"a window of {size} turns cannot overlap the next by {overlap}")
    out = [range(min(size, len(turns)))]
    while out[-1].stop < len(turns):
        start = out[-1].stop - overlap
        out.append(range(start, min(start + size, len(turns))))
    return out


def parts(sessions: list[Session], limit: int | None = None) -> list[list[Session]]:
    """Consecutive whole sessions packed into groups whose bodies (as :func:`part_body` writes
    them) stay within *limit* (PART_CHARS) characters; a longer session is a group of its own."""
    limit = PART_CHARS if limit is None else limit
    out: list[list[Session]] = []
    size = 0
    for s in sessions:
        cost = len(_part_block(s)) + 2  # the blank line before the next block
        if out and size + cost <= limit + 2:
            out[-1].append(s)
            size += cost
        else:
            out.append([s])
            size = cost
    return out


def _part_block(session: Session) -> str:
    return f"## {session.heading()}\n{session.body()}"


def part_body(group: list[Session]) -> str:
    return "\n\n".join(_part_block(s) for s in group)


def part_title(group: list[Session]) -> str:
    first, last = group[0], group[-1]
    if first is last:
        return first.heading()
    return f"Sessions {first.number}-{last.number}, {first.date_time} to {last.date_time}"


def cut(conversation: Conversation, granularity: str) -> list[Unit]:
    """The notes the conversation makes at *granularity*, in order."""
    sessions = conversation.sessions
    if granularity == "session":
        return [
            Unit(f"S{s.number}", s.heading(), s.body(), tuple(t.dia_id for t in s.turns), (s.number,)) for s in sessions
        ]
    if granularity == "turn":
        return [
            Unit(t.dia_id, f"{s.date_time}, {t.speaker}", t.line(), (t.dia_id,), (s.number,))
            for s in sessions
            for t in s.turns
        ]
    if granularity == "window":
        return [
            Unit(
                f"S{s.number}:{w.start + 1}-{w.stop}",
                s.heading(),
                "\n".join(s.turns[i].line() for i in w),
                tuple(s.turns[i].dia_id for i in w),
                (s.number,),
            )
            for s in sessions
            for w in windows(s.turns)
        ]
    if granularity == "part":
        return [
            Unit(
                f"S{g[0].number}-S{g[-1].number}",
                part_title(g),
                part_body(g),
                tuple(t.dia_id for s in g for t in s.turns),
                tuple(s.number for s in g),
            )
            for g in parts(sessions)
        ]
    raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}")


def units_of(conversation: Conversation, granularity: str) -> list[tuple[str, str, str]]:
    """(unit key, title, body) of each note the conversation makes at *granularity*."""
    return [(u.key, u.title, u.body) for u in cut(conversation, granularity)]


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
    units: list[str]  # per note: its unit key ("S3" for a session, "D3:5" for a turn, ...)
    unit_of: dict[str, str]  # note id -> unit key
    holders: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dia id -> unit keys holding it
    sessions: dict[str, tuple[int, ...]] = field(default_factory=dict)  # unit key -> sessions it holds
    build_s: float = 0.0
    embed_s: float = 0.0
    _baselines: TextBaselines | None = None

    @property
    def questions(self) -> list[Question]:
        return self.conversation.questions

    def relevant(self, question: Question) -> set[str]:
        """The notes holding any of the question's evidence, as unit keys."""
        return {key for d in question.evidence for key in self.holders[d]}

    def evidence(self, question: Question) -> list[frozenset[str]]:
        """The question's evidence as the notes that hold it: one set of unit keys per evidence
        turn, turns held by the same notes counted once (a session note holding three of them
        is one item of evidence; a turn two windows share is found in either)."""
        return list(dict.fromkeys(frozenset(self.holders[d]) for d in question.evidence))

    def evidence_sessions(self, question: Question) -> set[int]:
        return {int(d[1:].split(":")[0]) for d in question.evidence}

    def session_of(self, key: str) -> int:
        """The one session a note belongs to (the published protocol scores sessions)."""
        (number,) = self.sessions[key]
        return number

    def baselines(self) -> TextBaselines:
        if self._baselines is None:
            self._baselines = TextBaselines(self.titles, self.bodies)
        return self._baselines

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._baselines is not None:
            self._baselines.close()
            self._baselines = None


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
        units = cut(conv, granularity)
        where = Path(root) / f"{conv.sample_id}-{granularity}"
        store = notewell.open(where, watch=False, embedder=embedder)
        notes = store.add_notes([compose_note(u.body, title=u.title) for u in units])
        holders: dict[str, list[str]] = {}
        for u in units:
            for dia_id in u.turns:
                holders.setdefault(dia_id, []).append(u.key)
        built = Built(
            conversation=conv,
            granularity=granularity,
            store=store,
            root=where,
            titles=[u.title for u in units],
            bodies=[u.body for u in units],
            units=[u.key for u in units],
            unit_of={n.id: u.key for n, u in zip(notes, units, strict=True)},
            holders={d: tuple(keys) for d, keys in holders.items()},
            sessions={u.key: u.sessions for u in units},
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
    return [built.units[i] for i in built.baselines().words(question_words(question), limit)]


def fts5_or_search(built: Built, question: str, limit: int = 10) -> list[str]:
    return [built.units[i] for i in built.baselines().fts5_or(question_words(question), limit)]


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


def metrics(ranked: list[str], relevant: Collection[str | Collection[str]]) -> tuple[float, float]:
    """Recall@5 and 1/rank of the first relevant note in the top 10. *relevant* lists the
    evidence: each item a note's key, or the keys of the notes any of which holds it."""
    items = [frozenset((r,)) if isinstance(r, str) else frozenset(r) for r in relevant]
    top5 = set(ranked[:5])
    recall = sum(1 for item in items if item & top5) / len(items) if items else 0.0
    wanted = frozenset().union(*items)
    rr = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in wanted), 0.0)
    return recall, rr


def distinct(ranked: Iterable[Any]) -> list[Any]:
    """*ranked* with repeats dropped, the first of each kept."""
    return list(dict.fromkeys(ranked))


def dcg(relevances: list[float]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg(ranked: list[Any], relevant: Collection[Any], k: int) -> float:
    """The published protocol's nDCG@k: binary relevance of *ranked*'s first k, over the DCG of
    those same relevances sorted best first (0 when none is relevant)."""
    rels = [1.0 if x in relevant else 0.0 for x in ranked[:k]]
    ideal = dcg(sorted(rels, reverse=True))
    return dcg(rels) / ideal if ideal else 0.0


def session_metrics(sessions: list[int], relevant: Collection[int]) -> tuple[float, float, float, float]:
    """hit@5, hit@10, nDCG@5 and nDCG@10 of a ranked list of distinct sessions."""
    hit5 = float(any(s in relevant for s in sessions[:5]))
    hit10 = float(any(s in relevant for s in sessions[:10]))
    return hit5, hit10, ndcg(sessions, relevant, 5), ndcg(sessions, relevant, 10)


@dataclass(frozen=True, slots=True)
class Result:
    category: int
    scores: tuple[float, ...]  # the protocol's METRICS, in order
    seconds: float


def judge(built: Built, question: Question, ranked: list[str], protocol: str) -> tuple[float, ...]:
    """The question's scores under *protocol*, given the unit keys a system ranked first."""
    if protocol == "notes":
        return metrics(ranked, built.evidence(question))
    if built.granularity not in PROTOCOL_GRANULARITIES["engram"]:
        raise ValueError(f"the engram protocol scores sessions: a {built.granularity} note holds several")
    sessions = distinct(built.session_of(key) for key in ranked[:10])
    return session_metrics(sessions, built.evidence_sessions(question))


def evaluate_protocols(
    built: Built | Iterable[Built], system: str, protocols: Iterable[str], limit: int = 10
) -> dict[str, list[Result]]:
    """One result per question each protocol scores, of every conversation in *built*; a
    question two protocols score is searched once."""
    protocols = list(protocols)
    for p in protocols:
        check_protocol(p)
    out: dict[str, list[Result]] = {p: [] for p in protocols}
    for b in [built] if isinstance(built, Built) else built:
        scored = {p: {id(q) for q in b.conversation.scored(p)} for p in protocols}
        asked = {id(q): q for p in protocols for q in b.conversation.scored(p)}
        for qid, q in asked.items():
            started = time.perf_counter()
            ranked = search(b, system, q.text, limit)
            seconds = time.perf_counter() - started
            for p in protocols:
                if qid in scored[p]:
                    out[p].append(Result(q.category, judge(b, q, ranked, p), seconds))
    return out


def evaluate(built: Built | Iterable[Built], system: str, limit: int = 10, protocol: str = "notes") -> list[Result]:
    """One result per question *protocol* scores, of every conversation in *built*."""
    return evaluate_protocols(built, system, [protocol], limit)[protocol]


def summarise(results: Iterable[Result]) -> dict[int | str, tuple[float, ...]]:
    """Each metric's mean per category and over all ("all"), averaged over questions."""
    groups: dict[int | str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.category, []).append(r)
        groups.setdefault("all", []).append(r)
    return {
        k: tuple(sum(col) / len(rs) for col in zip(*(r.scores for r in rs), strict=True))
        for k, rs in sorted(groups.items(), key=lambda kv: (kv[0] == "all", str(kv[0])))
    }


def score(
    built: Built | Iterable[Built], system: str, limit: int = 10, protocol: str = "notes"
) -> dict[int | str, tuple[float, ...]]:
    """Run *system*'s searches for every question *protocol* scores and average: ``notes``
    gives {category: (R@5, MRR@10), "all": ...} over categories 1-4, ``engram`` {category:
    (hit@5, hit@10, nDCG@5, nDCG@10), "all": ...} over categories 1-5."""
    return summarise(evaluate(built, system, limit, protocol))


# -- the command --------------------------------------------------------------------------------


def table(results: dict[str, list[Result]], systems: list[str], protocol: str = "notes", pick: int = 0) -> list[str]:
    """Rows per category and all: each system's metrics *pick* and *pick* + 1 of *protocol*."""
    names = METRICS[protocol][pick : pick + 2]
    header = " / ".join(LABELS[n] for n in names)
    width = max(15, len(header))
    counts: dict[int, int] = {}
    for r in results[systems[0]]:
        counts[r.category] = counts.get(r.category, 0) + 1
    summaries = {s: summarise(results[s]) for s in systems}
    lines = [f"{'category':16s} {'n':>5s}  " + "  ".join(f"{s:>{width}s}" for s in systems)]
    lines.append(f"{'':16s} {'':>5s}  " + "  ".join(f"{header:>{width}s}" for _ in systems))
    rows: list[tuple[str, int | str, int]] = [
        (f"{c} {CATEGORY_NAMES.get(c, '?')}", c, counts[c]) for c in sorted(counts)
    ]
    rows.append(("all", "all", sum(counts.values())))
    for label, key, n in rows:
        cells = [" / ".join(f"{summaries[s][key][pick + i]:.3f}" for i in range(len(names))) for s in systems]
        lines.append(f"{label:16s} {n:5d}  " + "  ".join(f"{c:>{width}s}" for c in cells))
    return lines


def tables(results: dict[str, list[Result]], systems: list[str], protocol: str) -> list[str]:
    """Every metric of *protocol*, two to a table."""
    out: list[str] = []
    for pick in range(0, len(METRICS[protocol]), 2):
        out += ([""] if out else []) + table(results, systems, protocol, pick)
    return out


def figures(results: list[Result], protocol: str) -> dict[str, dict[str, Any]]:
    """Every category's count and mean metrics, as the JSON report holds them."""
    return {
        str(k): {
            "name": CATEGORY_NAMES.get(k, "all") if isinstance(k, int) else "all",
            "n": sum(1 for r in results if k == "all" or r.category == k),
            **{name: round(v, 4) for name, v in zip(METRICS[protocol], means, strict=True)},
        }
        for k, means in summarise(results).items()
    }


def _granularities(value: str) -> list[str]:
    named = {"both": ["session", "turn"], "all": list(GRANULARITIES)}
    out: list[str] = []
    for g in (x.strip() for x in value.split(",")):
        for one in named.get(g, [g]):
            if one not in GRANULARITIES:
                raise argparse.ArgumentTypeError(
                    f"unknown granularity {g!r}; choose from {', '.join(GRANULARITIES)}, both, all"
                )
            if one not in out:
                out.append(one)
    return out


SPLITS = ("tuning, 1-5", "held out, 6-10")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"locomo10.json (default {DEFAULT_DATA})")
    ap.add_argument(
        "--granularity",
        type=_granularities,
        default="both",
        help=f"comma-separated, of {', '.join(GRANULARITIES)}; both = session,turn (the default); all",
    )
    ap.add_argument(
        "--protocol",
        choices=(*PROTOCOLS, "both"),
        default="notes",
        help="notes: R@5/MRR@10 of the evidence notes, categories 1-4 (the default); engram: the published"
        " window protocol's hit@5/hit@10/nDCG@5/nDCG@10 of evidence sessions, every question with evidence"
        " (session, turn and window granularity); both",
    )
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
    granularities: list[str] = args.granularity
    protocols = list(PROTOCOLS) if args.protocol == "both" else [args.protocol]
    plan = {g: [p for p in protocols if g in PROTOCOL_GRANULARITIES[p]] for g in granularities}
    if not all(plan.values()):
        ap.error(
            "the engram protocol scores sessions, and a part note holds several: "
            + ", ".join(g for g, ps in plan.items() if not ps)
            + " granularity needs --protocol notes or both"
        )
    if not args.data.is_file():
        print(f"locomo: no data at {args.data} (give --data)", file=sys.stderr)
        return 2

    conversations = load(args.data)[: args.conversations]
    semantic = any(s in ("semantic", "hybrid") for s in systems)
    embedder = resolve_embedder(args.embedder) if semantic else None  # one model for every store

    questions = sum(len(c.questions) for c in conversations)
    adversarial = sum(len(c.adversarial_questions) for c in conversations)
    dropped = [(c.sample_id, d) for c in conversations for d in c.dropped]
    print(
        f"LoCoMo: {len(conversations)} conversations, {questions} questions with evidence in categories 1-4"
        f" and {adversarial} adversarial ones ({sum(c.without_evidence for c in conversations)} without"
        f" evidence left out); {len(dropped)} evidence ids naming no turn dropped"
        + (": " + ", ".join(f"{d!r} ({sid})" for sid, d in dropped) if dropped else "")
    )
    print(f"systems: {', '.join(systems)}; embedder: {args.embedder if semantic else 'none'}")

    report: dict[str, Any] = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in conversations],
        "embedder": args.embedder if semantic else None,
        "questions": questions,
        "adversarial_questions": adversarial,
        "dropped_evidence": [{"conversation": sid, "evidence": d} for sid, d in dropped],
        "granularities": {},
    }
    for granularity in granularities:
        protocols_here = plan[granularity]
        # results[protocol][system]; by_split[split][protocol][system]: conversations 1-5 chose
        # notewell's constants (benchmarks/tune_search.py), 6-10 never did.
        results: dict[str, dict[str, list[Result]]] = {p: {s: [] for s in systems} for p in protocols_here}
        by_split: dict[str, dict[str, dict[str, list[Result]]]] = {
            name: {p: {s: [] for s in systems} for p in protocols_here} for name in SPLITS
        }
        search_s = dict.fromkeys(systems, 0.0)
        searches = dict.fromkeys(systems, 0)
        notes = 0
        build_s = embed_s = 0.0
        with tempfile.TemporaryDirectory(prefix="nw-locomo-") as tmp:
            for number, conv in enumerate(conversations, 1):  # one store at a time: build, score, close
                (built,) = build([conv], granularity, embedder, Path(tmp))
                notes += len(built.units)
                build_s += built.build_s
                embed_s += built.embed_s
                split = by_split[SPLITS[number > TUNING_CONVERSATIONS]]
                for system in systems:
                    got = evaluate_protocols(built, system, protocols_here)
                    for p, rs in got.items():
                        results[p][system] += rs
                        split[p][system] += rs
                    # each question was searched once, and engram's questions hold the notes protocol's
                    searched = got["engram" if "engram" in got else "notes"]
                    searches[system] += len(searched)
                    search_s[system] += sum(r.seconds for r in searched)
                built.close()
                shutil.rmtree(built.root, ignore_errors=True)
        print()
        print(
            f"== {granularity} granularity: {notes} notes; build {build_s:.1f} s"
            + (f", embedding {embed_s:.1f} s" if semantic else "")
        )
        if granularity == "part":
            print(
                f"   ({notes / len(conversations):.1f} notes a conversation: R@5 is near 1 by construction;"
                " MRR@10 says how often the note holding the evidence comes first)"
            )
        entry: dict[str, Any] = {"notes": notes, "build_s": round(build_s, 3), "embed_s": round(embed_s, 3)}
        for p in protocols_here:
            print()
            if p == "notes":
                print("-- notes protocol: R@5 / MRR@10 of the evidence notes, categories 1-4")
            else:
                print(
                    "-- engram protocol (snap-research/locomo#38): distinct sessions of the top 10 notes,"
                    " every question with evidence; Engram v0.1.3 published "
                    + ", ".join(f"{LABELS[k]} {v:.3f}" for k, v in PUBLISHED.items())
                )
            for line in tables(results[p], systems, p):
                print(line)
            if len(conversations) > TUNING_CONVERSATIONS:
                for name in SPLITS:
                    print(f"-- {p} protocol, conversations {name}:")
                    for line in tables(by_split[name][p], systems, p):
                        print(line)
            section = {
                s: {
                    "categories": figures(results[p][s], p),
                    "tuning": figures(by_split[SPLITS[0]][p][s], p),
                    "held_out": figures(by_split[SPLITS[1]][p][s], p),
                }
                for s in systems
            }
            if p == "notes":  # where the notes protocol's figures have always been
                entry["systems"] = section
            else:
                entry[p] = {"systems": section}
        print(
            "search time: "
            + ", ".join(
                f"{s} {search_s[s]:.2f} s ({1000 * search_s[s] / max(1, searches[s]):.1f} ms/q)" for s in systems
            )
        )
        entry["search_s"] = {s: round(search_s[s], 3) for s in systems}
        for s in entry.get("systems", {}):
            entry["systems"][s]["search_s"] = entry["search_s"][s]
        report["granularities"][granularity] = entry
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
