#!/usr/bin/env python3
"""What older revisions' vectors cost when a conversation is imported again each time it grows.

The Claude Code importer writes a grown conversation as a new revision of the same note, and
every passage of a note is embedded; the vectors of each superseded text are kept so that
older revisions stay searchable by meaning. This measures, for --conversations conversations
(bench_embed_long's generator: Claude Code transcripts with its mix of requests and answers)
each imported after every turn up to --revisions turns, with store.embed_pending() after
each import as the background thread would (never asserts):

  - storage: rows of old_vectors and note_vectors, the bytes of old_vectors' vectors, and the
    size of index.db once the store is closed;
  - the write path: the seconds of each embed_pending() after an import (it re-embeds the
    grown note, keeps the superseded text's vectors and embeds older revisions waiting), and
    of each import;
  - older-revision semantic search (the store's older engine, as the search plan calls it
    for the places the current texts leave): the first search after the last change, which
    loads the older vectors' matrix, then p50/p95 over --queries queries;
  - what it finds: each query is a passage that some older revision held and the final text
    does not; the top hit should be that note at the newest revision holding the passage.

The vectors are 512-d (2 KB each, as the bundled model's) from the hash embedder, which is
instant: storage and search cost do not depend on what the vectors say, and the write path
is timed without the model's share (the same in every tree).

With --old-src (a tree of the code to compare against, e.g. `git archive main | tar -x -C
DIR`), each round runs the old tree and this one in subprocesses, alternated (old, new, then
new, old...), on fresh stores, and prints both with the ratios of their medians.

    python benchmarks/bench_old_vectors.py [--conversations 4] [--revisions 50] [--queries 300]
    python benchmarks/bench_old_vectors.py --old-src /tmp/old-tree --rounds 4
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

DIM = 512


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def long_seeds(count: int, turns: int) -> list[int]:
    """The first *count* seeds whose conversation has at least *turns* requests."""
    from bench_embed_long import conversation_turns

    seeds: list[int] = []
    seed = 0
    while len(seeds) < count:
        if conversation_turns(seed) >= turns:
            seeds.append(seed)
        seed += 1
    return seeds


def worker(args: argparse.Namespace) -> dict[str, Any]:
    """Build one store under the notewell on sys.path in a temporary folder, measure it (see
    the module's docstring), and remove the folder."""
    work = Path(tempfile.mkdtemp(prefix="nw-oldvec-"))
    try:
        return measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from bench_embed_long import write_conversation

    import notewell
    from notewell.model.header import parse_note
    from notewell.search.embedders import HashEmbedder
    from notewell.search.filters import Filters
    from notewell.search.passages import passages
    from notewell.search.request import SearchRequest
    from notewell.services.conversation_import import import_conversations

    transcripts = work / "transcripts"
    root = work / "notes"
    seeds = long_seeds(args.conversations, args.revisions)
    embed_s: list[float] = []
    import_s: list[float] = []
    held: dict[str, dict[str, int]] = {}  # note id -> passage text -> newest revision holding it
    with notewell.open(root, watch=False, embedder=HashEmbedder(DIM)) as store:
        for turns in range(1, args.revisions + 1):
            for seed in seeds:
                _session, path = write_conversation(transcripts, seed, turns)
                started = time.perf_counter()
                import_conversations(store, "claude-code", path)
                import_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            store.embed_pending()
            embed_s.append(time.perf_counter() - started)
            for card in store.list_notes(limit=1000):
                note = store.get_note(card.id)
                for _a, _b, text in passages(note.title, parse_note(note.text).body):
                    held.setdefault(note.id, {})[text] = note.revision
        finals = {c.id: store.get_note(c.id) for c in store.list_notes(limit=1000)}
        removed = [
            (nid, text, revision)
            for nid, texts in held.items()
            for text, revision in texts.items()
            if revision < finals[nid].revision
        ]
        rng = random.Random(5)
        queries = [rng.choice(removed) for _ in range(args.queries)] if removed else []
        request = SearchRequest.make("x", mode="semantic", limit=10, wait=False, filters={})
        times: list[float] = []
        first = found = 0.0
        with store.backend.searching(request) as (_records, engines):
            for n, (nid, text, revision) in enumerate(queries):
                started = time.perf_counter()
                cards = engines.older_semantic(text, 10, Filters(), set(), [])
                took = time.perf_counter() - started
                if n == 0:
                    first = took  # the matrix of older vectors is loaded by this one
                else:
                    times.append(took)
                found += bool(cards) and (cards[0].id, cards[0].matched_revision) == (nid, revision)
    db = root / ".notewell" / "index.db"
    with sqlite3.connect(db) as conn:
        old_rows, old_bytes = conn.execute(
            "SELECT count(*), coalesce(sum(length(vector)), 0) FROM old_vectors"
        ).fetchone()
        (current_rows,) = conn.execute("SELECT count(*) FROM note_vectors").fetchone()
        (revisions,) = conn.execute("SELECT count(*) FROM old_revisions WHERE searchable = 1").fetchone()
    return {
        "notes": len(finals),
        "characters": sum(len(n.text) for n in finals.values()),
        "older_revisions": revisions,
        "distinct_passages": sum(len(t) for t in held.values()),
        "removed_passages": len(removed),
        "old_rows": old_rows,
        "old_vector_bytes": old_bytes,
        "current_rows": current_rows,
        "index_bytes": db.stat().st_size,
        "embed_s": embed_s,
        "import_s": import_s,
        "first_search_ms": first * 1000,
        "search_ms": [t * 1000 for t in times],
        "found": found / max(1, len(queries)),
    }


def run_worker(args: argparse.Namespace, src: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        f"--conversations={args.conversations}",
        f"--revisions={args.revisions}",
        f"--queries={args.queries}",
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def show(tag: str, r: dict[str, Any]) -> None:
    print(
        f"{tag:4} old_vectors {r['old_rows']:6,} rows {r['old_vector_bytes'] / 1e6:6.2f} MB;"
        f" note_vectors {r['current_rows']:5,}; index.db {r['index_bytes'] / 1e6:6.2f} MB;"
        f" embed after import p50 {pct(r['embed_s'], 0.5) * 1000:6.1f} p95 {pct(r['embed_s'], 0.95) * 1000:6.1f} ms"
        f" (sum {sum(r['embed_s']):5.1f} s); import p50 {pct(r['import_s'], 0.5) * 1000:5.1f} ms;"
        f" older search first {r['first_search_ms']:6.1f} ms, p50 {pct(r['search_ms'], 0.5):5.2f}"
        f" p95 {pct(r['search_ms'], 0.95):5.2f} ms; top hit right {r['found']:.3f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--revisions", type=int, default=50, help="imports of each conversation, one turn more each")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--old-src", type=Path, help="a tree of the code to compare against (its src/ is used)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    new_src = HERE.parent / "src"
    trees = {"new": new_src} if args.old_src is None else {"old": args.old_src / "src", "new": new_src}
    results: dict[str, list[dict[str, Any]]] = {tag: [] for tag in trees}
    for n in range(args.rounds):
        order = list(trees) if n % 2 == 0 else list(reversed(trees))  # neither always runs first
        for tag in order:
            r = run_worker(args, trees[tag])
            results[tag].append(r)
            show(tag, r)
    r = results["new"][0]
    print(
        f"\n{args.conversations} conversations x {args.revisions} imports: {r['notes']} notes of"
        f" {r['characters']:,} characters now,"
        f" {r['older_revisions']} older revisions, {r['distinct_passages']:,} distinct passages"
        f" ({r['removed_passages']:,} no longer in the current texts)"
    )
    if "old" not in results:
        return

    def med(tag: str, pick: Any) -> float:
        return statistics.median(pick(x) for x in results[tag])

    figures = {
        "old_vectors rows": lambda x: x["old_rows"],
        "old_vectors MB": lambda x: x["old_vector_bytes"] / 1e6,
        "index.db MB": lambda x: x["index_bytes"] / 1e6,
        "embed after import, p50 ms": lambda x: pct(x["embed_s"], 0.5) * 1000,
        "embed after import, sum s": lambda x: sum(x["embed_s"]),
        "older search, first ms": lambda x: x["first_search_ms"],
        "older search, p50 ms": lambda x: pct(x["search_ms"], 0.5),
        "older search, p95 ms": lambda x: pct(x["search_ms"], 0.95),
        "top hit right": lambda x: x["found"],
    }
    print(f"\n{'median of the rounds':30} {'old':>10} {'new':>10} {'new/old':>8}")
    for name, pick in figures.items():
        old, new = med("old", pick), med("new", pick)
        print(f"{name:30} {old:10.3f} {new:10.3f} {new / old if old else float('nan'):8.3f}")


if __name__ == "__main__":
    main()
