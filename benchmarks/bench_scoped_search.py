#!/usr/bin/env python3
"""What ranking a viewer by the notes they may see costs: keyword search for the store's owner
(who sees everything: FTS5's own bm25() where it can) against a viewer who may not see a private
project (BM25 from the figures of the visible notes only), on the same store, interleaved.

Usage:
    python benchmarks/bench_scoped_search.py                       # 20,000 public + 5,000 private
    python benchmarks/bench_scoped_search.py --public 2000 --private 500 --rounds 2

Prints p50 / p95 per round for each viewer, the ratio of the medians, and the first search
after a write (when the private notes' sizes are counted again).
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import tempfile
import time

import notewell
from notewell.model.visibility import Viewer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public", type=int, default=20_000)
    parser.add_argument("--private", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vocab = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8))) for _ in range(20_000)]
    common = vocab[:50]

    def text() -> str:
        return " ".join(rng.choice(common) if rng.random() < 0.3 else rng.choice(vocab) for _ in range(150))

    with tempfile.TemporaryDirectory() as folder, notewell.open(folder, embedder=None, watch=True) as store:
        store.add_notes([text() for _ in range(args.public)])
        store.set_project("alice:secret", private=True, owner="alice")
        attempt = store.start_attempt("alice:secret", author="alice").id
        store.add_notes([text() for _ in range(args.private)], attempt=attempt)
        queries = [" ".join(rng.sample(vocab[:3000], k)) for k in (1, 2, 3) for _ in range(20)] + common[:20]
        print(f"{args.public:,} public notes, {args.private:,} private; {len(queries)} queries a round")
        medians: dict[str, list[float]] = {"owner": [], "scoped": []}
        for number in range(args.rounds):
            for label, viewer in (("owner", None), ("scoped", Viewer(handle="bob"))):
                times = []
                for query in queries:
                    started = time.perf_counter()
                    store.search_notes(query, viewer=viewer)
                    times.append(time.perf_counter() - started)
                times.sort()
                medians[label].append(statistics.median(times))
                p95 = times[int(len(times) * 0.95)]
                p50 = medians[label][-1]
                print(f"round {number + 1} {label:6s} p50 {p50 * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms")
        ratio = statistics.median(medians["scoped"]) / statistics.median(medians["owner"])
        print(f"scoped / owner, median of the rounds' p50: {ratio:.2f}")
        store.add_note("one more public note")
        started = time.perf_counter()
        store.search_notes(common[0], viewer=Viewer(handle="bob"))
        print(f"scoped search just after a write: {(time.perf_counter() - started) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
