#!/usr/bin/env python3
"""Bulk import rate as a store grows: notes added in calls of --batch, the rate per --every.

    python benchmarks/bench_bulk_add.py --notes 200000     # prints notes/s for each 50,000

A rate that falls as the store grows means some step costs in proportion to the store.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

import notewell

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=5000, help="notes per add_notes call")
    ap.add_argument("--every", type=int, default=50_000, help="print the rate for each this many notes")
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("bench_store", HERE / "bench_store.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    corpus = bench.Corpus(args.seed)
    work = Path(tempfile.mkdtemp(prefix="notewell-bulk-"))
    try:
        with notewell.open(work / "notes", watch=False, embedder=None) as store:
            start = last = time.perf_counter()
            done = 0
            while done < args.notes:
                n = min(args.batch, args.notes - done)
                store.add_notes([corpus.note(done + i) for i in range(n)], author="bench")
                done += n
                if done % args.every == 0:
                    now = time.perf_counter()
                    print(f"{done:>9,} notes: {args.every / (now - last):,.0f} notes/s", flush=True)
                    last = now
            print(f"all {done:,}: {done / (time.perf_counter() - start):,.0f} notes/s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
