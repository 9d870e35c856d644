#!/usr/bin/env python3
"""What the keyword search's recency window trades: agreement with exact BM25's top 10 against
latency, for several window sizes, on two independent generated corpora.

A query whose words are in many notes is ranked among the RANK_WINDOW most recently written
matches (plus the newest TITLE_WINDOW title matches), not among all of them: fast, but a strong
older match outside the window is missed. For each corpus (bench_store.py's generator at two
seeds and vocabularies) this builds one store of --notes notes and a raw FTS5 table of the same
texts (exact BM25, title 3x), then for each window prints p50/p95 of ``search_notes(q, limit=10)``
and the share of exact BM25's top 10 that notewell's top 10 holds (one- and two-word queries).

    python benchmarks/tune_rank_window.py --notes 100000 --windows 400,800,1600,3200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import Corpus, pct  # noqa: E402
from bench_vs_fts5 import Raw  # noqa: E402

import notewell  # noqa: E402
import notewell.backends.sqlite.keyword as sqlite_keyword  # noqa: E402

CORPORA = {"A": (20240611, 4000), "B": (7, 8000)}  # (seed, vocabulary size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--windows", default="400,800,1600,3200")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--chinese", type=float, default=0.1)
    args = ap.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, (seed, vocab) in CORPORA.items():
            corpus = Corpus(seed, vocab=vocab, chinese=args.chinese)
            texts = [corpus.note(i) for i in range(args.notes)]
            queries = [q for cat, q, f in corpus.queries(args.queries, seed) if not f and cat in ("1-word", "2-word")]
            with notewell.Store(Path(tmp) / f"nw{name}", watch=True, embedder=None) as store:
                ids = [n.id for n in store.add_notes(texts)]
                raw = Raw(Path(tmp) / f"raw{name}")
                raw.add_many(ids, texts)
                exact = {q: raw.search(q) for q in queries}
                raw.close()
                print(f"corpus {name} (seed {seed}, {vocab:,} words, {args.notes:,} notes, {len(queries)} queries)")
                for window in windows:
                    sqlite_keyword.RANK_WINDOW = window
                    for q in queries[:20]:  # warm
                        store.search_notes(q, limit=10)
                    times, agree = [], []
                    for q in queries:
                        t = time.perf_counter()
                        got = [c.id for c in store.search_notes(q, limit=10)]
                        times.append((time.perf_counter() - t) * 1000)
                        if exact[q]:
                            agree.append(len(set(exact[q]) & set(got)) / len(exact[q]))
                    print(
                        f"  window {window:5,}: p50 {pct(times, 50):6.2f} ms, p95 {pct(times, 95):6.2f} ms,"
                        f" agreement {statistics.mean(agree):.1%}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
