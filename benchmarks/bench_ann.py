#!/usr/bin/env python3
"""Approximate (usearch HNSW) against exact search, on --vectors unit vectors (it never asserts).

Prints the build time, the index's memory, query latency of both, and the recall of the
approximate top 10 (after exact rescoring of its candidates, as notewell does) against the
exact top 10, for a few search widths.

The vectors are synthetic but clustered like embeddings of real notes are (many topics,
notes near their topic, queries near notes or between topics), since embedding a million
notes with the default model would take a day on this machine. Pure Gaussian noise, the
hardest case for a graph index, is reported too with --noise.

Usage:
    python benchmarks/bench_ann.py --vectors 1000000 > benchmarks/out/ann.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from notewell.backends.sqlite.ann import AnnIndex


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def unit(m: np.ndarray) -> np.ndarray:
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def corpus(n: int, dim: int, noise: bool, rng: np.random.Generator, latent: int = 0) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    if latent:
        # Text embeddings vary along far fewer directions than they have: clustered points in
        # a small space, mapped into the large one by a fixed random non-linear map.
        lift = np.random.default_rng(99).standard_normal((latent, dim), dtype=np.float32) / np.sqrt(latent)
        small = corpus(n, latent, False, rng)
        for at in range(0, n, 100_000):
            out[at : at + 100_000] = np.tanh(2 * small[at : at + 100_000] @ lift)
        return unit(out)
    if noise:
        for at in range(0, n, 100_000):
            out[at : at + 100_000] = rng.standard_normal((min(100_000, n - at), dim), dtype=np.float32)
        return unit(out)
    topics = unit(rng.standard_normal((max(100, n // 100), dim), dtype=np.float32))
    for at in range(0, n, 100_000):
        k = min(100_000, n - at)
        pick = rng.integers(0, len(topics), k)
        # A note: its topic plus about as much of its own direction (cosine ~0.7 to the topic).
        out[at : at + k] = topics[pick] + 0.9 * unit(rng.standard_normal((k, dim), dtype=np.float32))
    return unit(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--noise", action="store_true", help="pure Gaussian vectors instead of clustered ones")
    ap.add_argument("--latent", type=int, default=0, help="clustered in this many dimensions, then lifted")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    print(f"notewell ANN benchmark, numpy {np.__version__}, {os.cpu_count()} cpus")
    kind = "gaussian" if args.noise else f"clustered in {args.latent} dimensions" if args.latent else "clustered"
    log(f"making {args.vectors:,} {kind} {args.dim}-d vectors")
    matrix = corpus(args.vectors, args.dim, args.noise, rng, args.latent)
    near = matrix[rng.integers(0, len(matrix), args.queries // 2)]
    queries = unit(
        np.vstack(
            [
                near + 0.6 * unit(rng.standard_normal(near.shape, dtype=np.float32)),  # about a note
                corpus(args.queries - len(near), args.dim, args.noise, rng, args.latent),  # about a topic
            ]
        )
    )
    log("building the index")
    started = time.perf_counter()
    ann = AnnIndex(args.dim)
    ann.add(np.arange(len(matrix)), matrix)
    build = time.perf_counter() - started
    memory = ann._index.memory_usage
    print(
        f"{args.vectors:,} x {args.dim} ({kind}): build {build:.0f} s"
        f" ({len(matrix) / build:,.0f} vectors/s); index memory {memory / 1e6:,.0f} MB"
        f" beside {matrix.nbytes / 1e6:,.0f} MB of float32 vectors"
    )
    exact_ms, truth = [], []
    for q in queries:
        t = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, 10)[:10]
        truth.append(set(top[np.argsort(-scores[top])].tolist()))
        exact_ms.append((time.perf_counter() - t) * 1000)
    print(f"exact: p50 {np.percentile(exact_ms, 50):.1f} ms, p95 {np.percentile(exact_ms, 95):.1f} ms per query")
    for width in (40, 100, 200, 400):
        ann._index.expansion_search = max(width, 64)
        times, hits = [], 0
        for q, want in zip(queries, truth, strict=True):
            t = time.perf_counter()
            rows = ann.candidates(q, width)
            scores = matrix[rows] @ q
            got = rows[np.argsort(-scores)[:10]]
            times.append((time.perf_counter() - t) * 1000)
            hits += len(want & set(got.tolist()))
        print(
            f"approximate, {width} candidates rescored: recall@10 {hits / (10 * len(queries)):.3f};"
            f" p50 {np.percentile(times, 50):.2f} ms, p95 {np.percentile(times, 95):.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
