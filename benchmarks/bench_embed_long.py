#!/usr/bin/env python3
"""What embedding every passage of long notes costs: a 1,000-conversation Claude Code import.

Since 4f3602d every passage of a note is embedded (before, at most 24 per note), a passage
whose text the note's vectors already hold keeps its vector, and embedding goes in groups of
at most 256 passages. An imported conversation is one note of up to 96 KB, so this measures,
on one generated import (it never asserts):

  1. the import: Claude Code transcripts written with the test fixtures' line writer
     (tests/services/conversation_fixtures.claude_code_lines: command markup, meta lines,
     streamed blocks, a tool call and its result per answer), their words rewritten from
     benchmarks/bench_store's Zipf vocabulary so that no two answers repeat. The mix: each
     conversation has 5-80 requests (log-uniform: median 20, mean 27), each request 40-800
     characters and each answer 300-4,000 (both log-uniform: medians 180 and 1,100), prose
     paragraphs, bullet lists, code blocks and headings; one conversation in 20 answers in
     Chinese. Imported with the real importer into a fresh store; printed: conversations,
     notes, characters, and passages (notewell's passages() over each note's title and body,
     as the store embeds them), with what the old rule (24 per note) would have embedded.
  2. embedding throughput: passages/s and notes/s of store.embed_pending() on the same random
     sample of notes, under this code and under the code before (8619f08, --old-src),
     alternated in subprocesses on copies of the un-embedded store (old, new, old, new...);
     then the whole store embedded with store.embed_pending() (the time to embed the import).
     When that would take longer than --budget minutes (estimated from the sample), or with
     --sample N, only N random notes are embedded and the total is extrapolated from their
     rate (the printout says so); the other notes then get random unit vectors under the
     model's id (search timing does not depend on what the vectors say).
  3. while store.start_embedding() embeds a copy of the un-embedded store in the background:
     the latency of add_note, edit_note (a conversation note, a line appended), keyword
     search and hybrid search, p50/p95/max, from the same process and from a second process,
     against the same with no embedding running, phases alternated (idle, embedding, idle,
     embedding...).
  4. on the embedded store: keyword, semantic and hybrid search, --queries each (interleaved),
     p50/p95/max; the first semantic search (loading the matrix); index.db's size on disk and
     the vector matrix's memory (passages x 512 x 4 bytes).
  5. a conversation imported again after it grew by three turns: the passages embedded
     again and the seconds, against embedding the whole grown note (and the old rule's 24).

Usage:
    python benchmarks/bench_embed_long.py                          # 1,000 conversations, the default model
    python benchmarks/bench_embed_long.py --quick                  # smoke run: 30 conversations, hash embedder
    python benchmarks/bench_embed_long.py --conversations 300 --sample 60 --old-src /tmp/old-src
    python benchmarks/bench_embed_long.py --old-src /tmp/old-src --compare-only --rounds 4   # step 2's old/new only

--old-src is a tree of the code before (git archive 8619f08 | tar -x -C DIR): its src/ is put
on PYTHONPATH for the old runs; without it the comparison of step 2 is skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_store import FUNCTION_WORDS, Corpus  # noqa: E402 - the note generator's vocabulary
from tests.services.conversation_fixtures import FILES, VERBS, claude_code_lines  # noqa: E402

OLD_MAX_PASSAGES = 24  # passages.MAX_PASSAGES before 4f3602d
STOP = set(FUNCTION_WORDS)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))] if s else float("nan")


def log_uniform(rng: random.Random, low: float, high: float) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


# -- 1. the conversations --------------------------------------------------------------------

CORPUS = Corpus(39)
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _prose(rng: random.Random, size: int, zh: bool) -> str:
    """Answer-like text of about *size* characters: paragraphs, lists, code, headings."""
    sentence = CORPUS._zh_sentence if zh else CORPUS._sentence
    blocks: list[str] = []
    total = 0
    while total < size:
        r = rng.random()
        if r < 0.08 and blocks:
            block = "## " + " ".join(rng.choices(CORPUS.vocab, cum_weights=CORPUS.query_cw, k=rng.randint(2, 4)))
        elif r < 0.25:
            block = "\n".join("- " + sentence(rng) for _ in range(rng.randint(2, 5)))
        elif r < 0.35:
            word = CORPUS.vocab
            code = [
                f"    {rng.choice(word)}_{rng.choice(word)} = {rng.choice(word)}({rng.randint(0, 99)})"
                for _ in range(rng.randint(2, 8))
            ]
            block = "```python\n" + "\n".join(code) + "\n```"
        else:
            block = " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))
        blocks.append(block)
        total += len(block) + 2
    return "\n\n".join(blocks)[:size].rstrip()


def _request(rng: random.Random, zh: bool) -> str:
    size = log_uniform(rng, 40, 800)
    head = f"Can you {rng.choice(VERBS)} {rng.choice(FILES)}? "
    return head + _prose(rng, max(1, size - len(head)), zh)


def conversation_lines(seed: int, turns: int) -> tuple[str, list[dict[str, Any]]]:
    """Session *seed*'s lines with *turns* requests (the first N turns of a longer version
    are the same lines: a grown conversation)."""
    rng = random.Random(seed)
    session = f"{rng.getrandbits(128):032x}"
    session = f"{session[:8]}-{session[8:12]}-4{session[13:16]}-a{session[17:20]}-{session[20:]}"
    cwd = f"/home/dev/project-{seed % 8}"
    lines = claude_code_lines(rng, session, turns, start=START + timedelta(hours=seed), cwd=cwd)
    zh = seed % 20 == 7
    turn = 0
    for row in lines:
        message = row.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if row["type"] == "user" and isinstance(content, str) and not content.startswith("<"):
            turn += 1
            message["content"] = _request(random.Random(f"{seed}:{turn}:q"), zh)
        elif row["type"] == "assistant" and content and content[0].get("type") == "text":
            trng = random.Random(f"{seed}:{turn}:a")
            content[0]["text"] = _prose(trng, log_uniform(trng, 300, 4000), zh)
    return session, lines


def conversation_turns(seed: int) -> int:
    return log_uniform(random.Random(f"{seed}:turns"), 5, 80)


def write_conversation(root: Path, seed: int, turns: int) -> tuple[str, Path]:
    session, lines = conversation_lines(seed, turns)
    folder = root / f"-home-dev-project-{seed % 8}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), encoding="utf-8")
    return session, path


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- stores -------------------------------------------------------------------------------------


class RandomEmbedder:
    """Random unit vectors under another model's id: fills a store whose real vectors were
    not computed (search timing does not depend on what they say)."""

    def __init__(self, model_id: str, dim: int) -> None:
        import numpy as np

        self.model_id, self.dim = model_id, dim
        self._rng = np.random.default_rng(5)

    def embed_documents(self, texts: list[str]) -> Any:
        import numpy as np

        m = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


def open_store(path: Path, embedder: str | Any) -> Any:
    import notewell
    from notewell.search.embedders import HashEmbedder

    chosen = HashEmbedder() if embedder == "hash" else embedder
    return notewell.open(path, watch=True, embedder=chosen)


def counted(store: Any) -> dict[str, int]:
    """Load the store's embedder (outside any timing) and count the passages it is asked to embed."""
    embedder = store.backend.embedders.get()
    embedder.embed_documents(["warm the model up"])
    seen = {"passages": 0}
    inner = embedder.embed_documents

    def embed_documents(texts: list[str]) -> Any:
        seen["passages"] += len(texts)
        return inner(texts)

    embedder.embed_documents = embed_documents
    return seen


def keep_queued(store: Any, ids: list[str]) -> list[tuple[str, str]]:
    """Leave only *ids* in the embedding queue; returns the rows taken out."""
    index = store.backend.index
    keep = set(ids)
    rows = [r for r in index.conn.execute("SELECT note_id, queued_at FROM embed_queue") if r[0] not in keep]
    with index.write():
        index.conn.executemany("DELETE FROM embed_queue WHERE note_id = ?", [(r[0],) for r in rows])
    return rows


def queue_again(store: Any, rows: list[tuple[str, str]]) -> None:
    index = store.backend.index
    with index.write():
        index.conn.executemany("INSERT OR IGNORE INTO embed_queue(note_id, queued_at) VALUES (?, ?)", rows)


def vector_rows(store: Any) -> int:
    return store.backend.index.conn.execute("SELECT count(*) FROM note_vectors").fetchone()[0]


def worker_embed(store_path: Path, ids_file: Path, embedder: str) -> None:
    """Subprocess: embed the listed notes of a store copy with whichever notewell is on the path."""
    import notewell

    ids = json.loads(ids_file.read_text())
    store = open_store(store_path, embedder)
    seen = counted(store)
    keep_queued(store, ids)
    started = time.perf_counter()
    result = store.embed_pending()
    elapsed = time.perf_counter() - started
    out = {
        "notes": result["embedded"],
        "passages": seen["passages"],
        "rows": vector_rows(store),
        "seconds": elapsed,
        "notewell": notewell.__file__,
    }
    store.close()
    print(json.dumps(out))


# -- 3. latency probes ---------------------------------------------------------------------------


def probe(store: Any, plan: dict[str, Any], ops: int, tag: str) -> dict[str, list[float]]:
    """*ops* rounds of: keyword search, hybrid search, add_note, edit_note (a line appended to a
    conversation note). Milliseconds per kind."""
    rng = random.Random(tag)
    times: dict[str, list[float]] = {"add_note": [], "edit_note": [], "keyword": [], "hybrid": []}
    for i in range(ops):
        t = time.perf_counter()
        store.search_notes(rng.choice(plan["keyword"]), limit=10)
        times["keyword"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        store.search_notes(rng.choice(plan["semantic"]), limit=10, mode="hybrid")
        times["hybrid"].append((time.perf_counter() - t) * 1000)
        text = f"---\ntitle: Probe {tag} {i}\ntags: [bench]\n---\n\n{_prose(rng, 500, False)}\n"
        t = time.perf_counter()
        store.add_note(text)
        times["add_note"].append((time.perf_counter() - t) * 1000)
        nid = rng.choice(plan["edit"])
        current = store.get_note(nid).text
        t = time.perf_counter()
        store.edit_note(nid, current + f"\n\nA line the benchmark added ({tag} {i}): {_prose(rng, 80, False)}\n")
        times["edit_note"].append((time.perf_counter() - t) * 1000)
    return times


def worker_probe(store_path: Path, plan_file: Path, embedder: str, ops: int, tag: str) -> None:
    """Subprocess: the same probe from a second process (its model loaded before timing)."""
    store = open_store(store_path, embedder)
    counted(store)
    store.search_notes("warm up", limit=10, mode="hybrid")
    print(json.dumps(probe(store, json.loads(plan_file.read_text()), ops, tag)))
    store.close()


def run_worker(args: list[str], pythonpath: str | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"worker {args[0]} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(xs: list[float]) -> str:
    return f"p50 {pct(xs, 50):7.1f}  p95 {pct(xs, 95):7.1f}  max {max(xs):7.1f} ms  (n={len(xs)})"


# -- the run -------------------------------------------------------------------------------------


def query_plan(notes: list[tuple[str, str, str]], rng: random.Random, count: int) -> dict[str, list[str]]:
    """Keyword queries (two or three content words of a note) and semantic ones (8-12
    consecutive words of one of its paragraphs), drawn from the notes' own text."""
    keyword: list[str] = []
    semantic: list[str] = []
    while len(keyword) < count or len(semantic) < count:
        _nid, _title, body = rng.choice(notes)
        words = [w.strip(".,:;?!`()#-") for w in body.split()]
        content = [w for w in words if w.isalpha() and len(w) > 3 and w.lower() not in STOP]
        if len(content) >= 3 and len(keyword) < count:
            keyword.append(" ".join(rng.sample(content, rng.choice((2, 2, 3)))))
        paragraphs = body.split("\n\n")[1:]  # not the opening line (dates, requests, folder)
        paragraphs = [p for p in paragraphs if len(p.split()) >= 14 and not p.startswith(("```", "**"))]
        if paragraphs and len(semantic) < count:
            ws = rng.choice(paragraphs).lstrip("- ").split()
            n = rng.randint(8, 12)
            at = rng.randrange(0, len(ws) - n + 1)
            semantic.append(" ".join(ws[at : at + n]))
    return {"keyword": keyword, "semantic": semantic}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--sample", type=int, default=0, help="embed only N random notes and extrapolate (0: all)")
    ap.add_argument("--compare-sample", type=int, default=40, help="notes embedded by old and new code alike")
    ap.add_argument("--rounds", type=int, default=2, help="old/new alternations, and idle/embedding ones")
    ap.add_argument("--compare-only", action="store_true", help="stop after the old/new comparison of step 2")
    ap.add_argument("--budget", type=float, default=25.0, help="minutes the whole embedding may take")
    ap.add_argument("--old-src", type=Path, default=None, help="a tree of the code before (git archive 8619f08)")
    ap.add_argument("--probe-ops", type=int, default=10, help="rounds of the 4 operations per phase and process")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--embedder", choices=("default", "hash"), default="default")
    ap.add_argument("--dir", type=Path, default=None, help="work here (kept) instead of a temporary folder")
    ap.add_argument("--quick", action="store_true", help="smoke run: 30 conversations, the hash embedder")
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, *rest = args.worker
        if kind == "embed":
            worker_embed(Path(rest[0]), Path(rest[1]), args.embedder)
        else:
            worker_probe(Path(rest[0]), Path(rest[1]), args.embedder, int(rest[2]), rest[3])
        return
    if args.quick:
        args.conversations, args.compare_sample, args.rounds = 30, 5, 1
        args.embedder, args.probe_ops, args.queries = "hash", 4, 30
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        run(args, args.dir)
    else:
        with tempfile.TemporaryDirectory(prefix="nw-embed-long-") as tmp:
            run(args, Path(tmp))


def run(args: argparse.Namespace, work: Path) -> None:
    import notewell
    from notewell.backends.sqlite.embedding import note_passages
    from notewell.model.header import parse_note
    from notewell.search.passages import passages
    from notewell.services.conversation_import import import_conversations

    figures: list[str] = []

    def say(line: str = "") -> None:
        figures.append(line)
        print(line, flush=True)

    rng = random.Random(39)
    log(f"notewell from {notewell.__file__}; embedder {args.embedder}; work in {work}")
    say(f"notewell {notewell.__file__}, embedder {args.embedder}, {os.cpu_count()} cores; load average {load()}")

    # 1. generate and import ------------------------------------------------------------------
    transcripts = work / "transcripts"
    started = time.perf_counter()
    sessions: dict[int, tuple[str, Path, int]] = {}
    for seed in range(args.conversations):
        turns = conversation_turns(seed)
        session, path = write_conversation(transcripts, seed, turns)
        sessions[seed] = (session, path, turns)
    written = folder_bytes(transcripts)
    log(f"1. wrote {args.conversations} transcripts ({written / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s")
    pristine = work / "store"
    store = open_store(pristine, args.embedder)
    started = time.perf_counter()
    report = import_conversations(store, "claude-code", transcripts)
    imported_s = time.perf_counter() - started
    if report.errors:
        raise SystemExit(f"the import failed: {report.errors[:3]}")
    rows = store.backend.index.conn.execute("SELECT id, title FROM note_index ORDER BY id").fetchall()
    notes: list[tuple[str, str, str]] = []  # (id, title, body)
    counts: dict[str, int] = {}
    chars = 0
    for nid, title in rows:
        text = store.get_note(nid).text
        chars += len(text)
        notes.append((nid, title, parse_note(text).body))
        counts[nid] = len(note_passages(title, text))
    store.close()
    unembedded = work / "unembedded"  # what the import left: the old/new runs and step 3 start from it
    shutil.copytree(pristine, unembedded)
    total = sum(counts.values())
    old_total = sum(min(n, OLD_MAX_PASSAGES) for n in counts.values())
    per = sorted(counts.values())
    turns = sorted(t for _s, _p, t in sessions.values())
    say("== 1. the import ==")
    say(
        f"conversations {report.conversations:,} (requests: median {statistics.median(turns):.0f},"
        f" {turns[0]}-{turns[-1]}, {sum(turns):,} in all), transcripts {written / 1e6:.1f} MB,"
        f" imported in {imported_s:.1f} s"
    )
    say(
        f"notes {len(notes):,}, characters {chars:,} ({chars / len(notes):,.0f} per note,"
        f" the longest body {max(len(b) for _i, _t, b in notes):,})"
    )
    say(
        f"passages {total:,} ({total / len(notes):.1f} per note; median {statistics.median(per):.0f},"
        f" p95 {pct(per, 95)}, max {per[-1]}); the old rule (at most 24 per note) {old_total:,}"
        f" = {old_total / total:.0%}; notes over 24 passages {sum(n > OLD_MAX_PASSAGES for n in per):,}"
    )

    # 2. throughput, old against new, then the whole store ------------------------------------
    say("")
    say(f"== 2. embedding throughput (load average {load()}) ==")
    sample_ids = rng.sample(sorted(counts), min(args.compare_sample, len(counts)))
    ids_file = work / "sample.json"
    ids_file.write_text(json.dumps(sample_ids))
    codes = {"new": str(Path(notewell.__file__).resolve().parent.parent)}
    if args.old_src is not None and (args.old_src / "src" / "notewell").is_dir():
        codes = {"old": str((args.old_src / "src").resolve()), **codes}
    else:
        say("(no --old-src: the code before is not timed)")
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in codes}
    for r in range(args.rounds):
        for code, src in codes.items():  # alternated: old, new, old, new ...
            copy = work / f"copy-{code}-{r}"
            shutil.copytree(unembedded, copy)
            out = run_worker(["--embedder", args.embedder, "--worker", "embed", str(copy), str(ids_file)], src)
            shutil.rmtree(copy)
            runs[code].append(out)
            log(
                f"2. {code} round {r + 1}: {out['notes']} notes, {out['passages']} passages in {out['seconds']:.1f} s"
                f" = {out['passages'] / out['seconds']:.1f} passages/s ({out['notewell']})"
            )
    sample_passages = sum(counts[i] for i in sample_ids)
    sample_old = sum(min(counts[i], OLD_MAX_PASSAGES) for i in sample_ids)
    say(
        f"the same {len(sample_ids)} random notes ({sample_passages:,} passages; {sample_old:,} under the old rule),"
        f" embedded by each code in turn in subprocesses, {args.rounds} round(s), the model loaded before timing:"
    )
    rate: dict[str, float] = {}
    for code, outs in runs.items():
        secs = " / ".join(f"{o['seconds']:.1f}" for o in outs)
        rates = [o["passages"] / o["seconds"] for o in outs]
        per_note = " / ".join(f"{o['notes'] / o['seconds']:.2f}" for o in outs)
        rate[code] = statistics.median(rates)
        say(
            f"  {code}: {outs[0]['passages']:,} passages embedded ({outs[0]['rows']:,} vectors written), {secs} s"
            f" = {' / '.join(f'{x:.1f}' for x in rates)} passages/s, {per_note} notes/s"
        )
    if "old" in rate:
        old_s = statistics.median(o["seconds"] for o in runs["old"])
        new_s = statistics.median(o["seconds"] for o in runs["new"])
        say(
            f"  new/old (medians): passages/s x{rate['new'] / rate['old']:.2f}; seconds for the sample"
            f" x{new_s / old_s:.2f} (x{sample_passages / sample_old:.2f} the passages)"
        )
    estimate = total / rate["new"]
    at_old = ""
    if "old" in rate:
        at_old = f"; the old rule's {old_total:,} at {rate['old']:.1f}/s: ~{old_total / rate['old'] / 60:.0f} min"
    say(
        f"  the whole store at the new code's {rate['new']:.1f} passages/s: {total:,} passages in"
        f" ~{estimate / 60:.0f} min{at_old}"
    )
    if args.compare_only:
        return
    sample = args.sample
    if not sample and estimate > args.budget * 60:
        sample = max(args.compare_sample, round(len(counts) * args.budget * 60 / 2 / estimate))
        say(f"  over --budget {args.budget:.0f} min: embedding a sample of {sample} notes instead")
    store = open_store(pristine, args.embedder)
    seen = counted(store)
    model_id, dim = store.backend.embedders.get().model_id, store.backend.embedders.get().dim
    chosen = rng.sample(sorted(counts), min(sample, len(counts))) if sample else sorted(counts)
    taken = keep_queued(store, chosen) if sample else []
    log(f"2. embedding {len(chosen):,} notes ({sum(counts[i] for i in chosen):,} passages) with store.embed_pending()")
    last = [time.perf_counter()]

    def progress(done: int, of: int) -> None:
        if time.perf_counter() - last[0] > 60:
            last[0] = time.perf_counter()
            log(f"2.   {done:,}/{of:,} notes, {seen['passages']:,} passages")

    started = time.perf_counter()
    result = store.embed_pending(progress=progress)
    embed_s = time.perf_counter() - started
    embedded = seen["passages"]
    full_rate = embedded / embed_s
    if sample:
        queue_again(store, taken)
        store.close()
        filler = open_store(pristine, RandomEmbedder(model_id, dim))
        filler.embed_pending()
        filler.close()
        store = open_store(pristine, args.embedder)
        say(
            f"a sample of {result['embedded']:,} notes: {embedded:,} passages in {embed_s:.1f} s = {full_rate:.1f}"
            f" passages/s; EXTRAPOLATED to the whole store: {total:,} passages in {total / full_rate:,.0f} s"
            f" = {total / full_rate / 60:.1f} min (the other notes got random vectors for steps 4-5)"
        )
    else:
        say(
            f"the whole store, store.embed_pending(): {result['embedded']:,} notes, {embedded:,} passages in"
            f" {embed_s:,.1f} s = {embed_s / 60:.1f} min: {full_rate:.1f} passages/s,"
            f" {result['embedded'] / embed_s:.2f} notes/s, {embed_s / report.conversations:.2f} s per conversation"
        )
    say(f"  vectors in the index {vector_rows(store):,} (passages counted beforehand {total:,})")
    if "old" in rate:
        say(
            f"  the old rule on the whole store: {old_total:,} passages, ~{old_total / rate['old'] / 60:.1f} min at the"
            f" old code's {rate['old']:.1f} passages/s; {total - old_total:,} passages ({1 - old_total / total:.0%})"
            " were never embedded"
        )
    store.close()

    plan = query_plan(notes, random.Random(7), args.queries)
    plan["edit"] = [nid for nid, _t, body in notes if len(body) < 80_000][:50]  # conversation notes with room
    plan_file = work / "plan.json"
    plan_file.write_text(json.dumps(plan))

    # 3. latency while the background embedding runs (on the un-embedded copy) ----------------
    say("")
    say(f"== 3. writes and searches while store.start_embedding() embeds the fresh import (load {load()}) ==")
    store = open_store(unembedded, args.embedder)
    counted(store)
    store.search_notes("warm up", limit=10, mode="hybrid")
    phases: dict[str, list[float]] = {}
    pending_start, rows_start = store.pending_embeddings(), vector_rows(store)
    embedding_s = 0.0
    stops: list[float] = []
    for r in range(args.rounds):
        for phase in ("idle", "embedding"):  # alternated: idle, embedding, idle, embedding ...
            if phase == "embedding":
                store.start_embedding(idle=0.5)
                began = time.perf_counter()
                time.sleep(2)  # the thread is inside a batch
            for where in ("same process", "second process"):
                tag = f"{phase}-{where[:4]}-{r}"
                if where == "same process":
                    got = probe(store, plan, args.probe_ops, tag)
                else:
                    got = run_worker(
                        ["--embedder", args.embedder, "--worker", "probe", str(unembedded), str(plan_file)]
                        + [str(args.probe_ops), tag]
                    )
                for op, xs in got.items():
                    phases.setdefault(f"{op}|{where}|{phase}", []).extend(xs)
            if phase == "embedding":
                t = time.perf_counter()
                store.stop_embedding()
                while store._embedding.running():  # stop_embedding() gives up waiting after 60 s
                    time.sleep(0.2)
                stops.append(time.perf_counter() - t)
                embedding_s += time.perf_counter() - began
            log(f"3. round {r + 1} {phase} done; {store.pending_embeddings():,} notes wait")
    pending_end, rows_end = store.pending_embeddings(), vector_rows(store)
    store.close()
    say(
        f"{args.rounds} round(s) of an idle and an embedding phase, {args.probe_ops} of each operation per phase"
        f" and process (the second process loads its model before timing); {pending_start:,} notes waited at the"
        f" start, {pending_end:,} at the end: the background thread wrote {rows_end - rows_start:,} vectors in"
        f" {embedding_s:.0f} s of embedding phases ({(rows_end - rows_start) / max(embedding_s, 1e-9):.1f}/s while"
        f" probed); stop_embedding() waited {', '.join(f'{s:.1f}' for s in stops)} s for the batch in hand"
    )
    for op in ("add_note", "edit_note", "keyword", "hybrid"):
        for where in ("same process", "second process"):
            idle, busy = phases[f"{op}|{where}|idle"], phases[f"{op}|{where}|embedding"]
            say(f"  {op:9} {where:14} idle      {summary(idle)}")
            say(f"  {'':9} {'':14} embedding {summary(busy)}  p95 x{pct(busy, 95) / pct(idle, 95):.1f}")

    # 4. search on the embedded store --------------------------------------------------------
    say("")
    say(f"== 4. search on the embedded store, no embedding running (load average {load()}) ==")
    store = open_store(pristine, args.embedder)
    seen = counted(store)
    t = time.perf_counter()
    store.search_notes(plan["semantic"][0], limit=10, mode="semantic")
    first = time.perf_counter() - t
    store.search_notes(plan["keyword"][0], limit=10)
    lat: dict[str, list[float]] = {"keyword": [], "semantic": [], "hybrid": []}
    for i in range(args.queries):  # interleaved: keyword, semantic, hybrid, keyword ...
        for mode, q in (
            ("keyword", plan["keyword"][i]),
            ("semantic", plan["semantic"][i]),
            ("hybrid", plan["semantic"][-1 - i]),
        ):
            t = time.perf_counter()
            store.search_notes(q, limit=10, mode=mode)
            lat[mode].append((time.perf_counter() - t) * 1000)
    vectors = vector_rows(store)
    db = pristine / ".notewell" / "index.db"
    wal = db.with_name("index.db-wal")
    say(f"first semantic search (loads the matrix): {first * 1000:.0f} ms; then {args.queries} queries of each mode:")
    for mode, xs in lat.items():
        say(f"  {mode:9} {summary(xs)}")
    say(
        f"index.db {db.stat().st_size / 1e6:.0f} MB (+ WAL {wal.stat().st_size / 1e6 if wal.exists() else 0:.0f} MB),"
        f" the notes beside it {(folder_bytes(pristine) - folder_bytes(pristine / '.notewell')) / 1e6:.0f} MB;"
        f" the vector matrix {vectors:,} x {dim} x 4 = {vectors * dim * 4 / 1e6:.0f} MB"
    )

    # 5. a conversation that grew ------------------------------------------------------------
    say("")
    say(f"== 5. a conversation imported again after it grew by three turns (load average {load()}) ==")
    by_id = {nid: (title, body) for nid, title, body in notes}
    single = [s for s, (session, _p, _t) in sessions.items() if single_note(by_id, session) is not None]
    single = [s for s in single if len(by_id[single_note(by_id, sessions[s][0]) or ""][1]) < 80_000]  # room for 3 turns
    seed = max(single, key=lambda s: counts[single_note(by_id, sessions[s][0]) or ""])
    session, path, turns_before = sessions[seed]
    nid = single_note(by_id, session) or ""
    before = counts[nid]
    write_conversation(transcripts, seed, turns_before + 3)
    grown = import_conversations(store, "claude-code", path)
    note = store.get_note(nid)
    parts = note_passages(note.title, note.text)
    held = {t for _a, _b, t in passages(by_id[nid][0], by_id[nid][1])}
    fresh = [k for k, (_a, _b, t) in enumerate(parts) if t not in held]
    seen["passages"] = 0
    started = time.perf_counter()
    store.embed_pending()
    again_s = time.perf_counter() - started
    again = seen["passages"]
    embedder = store.backend.embedders.get()
    started = time.perf_counter()
    embedder.embed_documents([p[2] for p in parts])
    whole_s = time.perf_counter() - started
    old_rule = f"the old rule re-embedded min(24, n) = {min(len(parts), OLD_MAX_PASSAGES)} passages"
    if len(parts) > OLD_MAX_PASSAGES:
        old_rule += " and never reached the new turns"
    say(
        f"the conversation of {turns_before} requests, one note of {before} passages ({len(by_id[nid][1]):,}"
        f" characters); +3 requests, imported again ({grown.notes} note written) -> {len(parts)} passages"
    )
    say(f"passages whose text is new (by position, 0 = title and opening): {spans(fresh)}")
    say(
        f"embedded again: {again} passages in {again_s:.2f} s (store.embed_pending()); the whole note, all"
        f" {len(parts)} passages through the model: {whole_s:.2f} s (x{whole_s / max(again_s, 1e-9):.1f}); {old_rule}"
    )
    store.close()
    (work / "figures.txt").write_text("\n".join(figures) + "\n")
    log(f"figures also in {work / 'figures.txt'}" if args.dir else "done")


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def spans(xs: list[int]) -> str:
    """[0, 5, 6, 7] -> '0, 5-7'."""
    out: list[str] = []
    for x in xs:
        if out and x == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{x}"
        else:
            out.append(str(x))
    return ", ".join(out) or "none"


def single_note(by_id: dict[str, tuple[str, str]], session: str) -> str | None:
    """The note of a conversation imported as one note (None: several parts, or none)."""
    from notewell.services.conversation_import import part_note_id

    first = part_note_id("claude-code", session, 1)
    return first if first in by_id and part_note_id("claude-code", session, 2) not in by_id else None


if __name__ == "__main__":
    main()
