#!/usr/bin/env python3
"""What keyword feedback costs a semantic search: the same queries with and without it,
alternated (A, B, A, B...) on benchmarks/eval2's store (240 notes) and on a store of
generated notes (--notes, bench_store.py's generator). Prints p50/p95 per arm and the ratio.

Usage:
    python benchmarks/bench_feedback.py [--notes 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_search  # noqa: E402
from bench_store import Corpus  # noqa: E402

import notewell  # noqa: E402
from notewell.search import passages  # noqa: E402
from notewell.search.embedders import HashEmbedder  # noqa: E402


def pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * p // 100)]


def arms(store: object, queries: list[str], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"without feedback": [], "with feedback": []}
    weight = passages.FEEDBACK_WEIGHT
    for _round in range(rounds):
        for arm in times:
            passages.FEEDBACK_WEIGHT = weight if arm == "with feedback" else 0.0
            for q in queries:
                started = time.perf_counter()
                store.search_notes(q, mode="semantic", limit=10)
                times[arm].append((time.perf_counter() - started) * 1000)
    passages.FEEDBACK_WEIGHT = weight
    return times


def report(name: str, times: dict[str, list[float]]) -> None:
    cells = "; ".join(f"{arm} p50 {pct(t, 50):.1f} ms, p95 {pct(t, 95):.1f} ms" for arm, t in times.items())
    a, b = (pct(t, 50) for t in times.values())
    print(f"{name}: {cells}; p50 with/without = {b / a:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    embedder = eval_search.choose_embedder("default")
    with tempfile.TemporaryDirectory(prefix="nw-fb-") as tmp:
        built = eval_search.build("eval2", embedder, Path(tmp))
        queries = [q["query"] for q in built.queries]
        built.store.search_notes("warm up", mode="semantic")
        report(
            f"eval2 ({len(built.notes)} notes, {len(queries)} queries x {args.rounds})",
            arms(built.store, queries, args.rounds),
        )
        built.store.close()
        corpus = Corpus(11)
        store = notewell.open(Path(tmp) / "gen", watch=False, embedder=HashEmbedder(512))
        store.add_notes([corpus.note(i) for i in range(args.notes)])
        store.embed_pending()
        qs = [q for _cat, q, _f in Corpus(1).queries(100, 2)]
        report(
            f"generated ({args.notes} notes, hash vectors, {len(qs)} queries x {args.rounds})",
            arms(store, qs, args.rounds),
        )
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
