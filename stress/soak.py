#!/usr/bin/env python3
"""Soak: `notewell serve` under 16 concurrent clients on loopback for 10 minutes.

Each client has its own token and mixes keyword and semantic searches with writes (new notes,
edits of its own notes). Every minute it prints throughput and p50/p95 latency, and the server's
resident memory is sampled every 10 s, so that drift shows: throughput and latency should stay
level and memory flat. At the end every acknowledged write is read back (nothing lost).

The server embeds with the word-hash embedder (NOTEWELL_EMBEDDER=hash): the default model
embeds ~19 notes/s on this machine and would spend the run embedding the clients' new notes.

    python stress/soak.py                          # 16 clients, 600 s
    python stress/soak.py --clients 4 --seconds 30 # a smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from bench_server import Client, cli, log, read_back, start_server  # noqa: E402 - the same clients as the load test
from bench_store import Corpus, pct  # noqa: E402

import notewell  # noqa: E402
from notewell.search.embedders import HashEmbedder  # noqa: E402


class TimedClient(Client):
    """A load-test client that also notes when each request finished."""

    def __init__(self, *args, t0: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.t0 = t0
        self.events: list[tuple[float, float]] = []  # (seconds since start, latency ms)

    def request(self, kind, method, path, body=None):
        before = sum(len(v) for v in self.times.values())
        answer = super().request(kind, method, path, body)
        if sum(len(v) for v in self.times.values()) > before:
            self.events.append((time.monotonic() - self.t0, self.times[kind][-1]))
        return answer


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=5000, help="notes in the store before the run")
    ap.add_argument("--write-share", type=float, default=0.2)
    ap.add_argument("--bucket", type=float, default=60, help="seconds per line of the report")
    args = ap.parse_args()
    print(f"notewell soak: {args.clients} clients, {args.seconds:.0f} s, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="nw-soak-") as tmp:
        store_dir = Path(tmp) / "store"
        corpus = Corpus(7)
        with notewell.open(store_dir, watch=False, embedder=HashEmbedder()) as store:
            store.add_notes(corpus.note(i) for i in range(args.seed))
            store.embed_pending()
        tokens = [cli(store_dir, "token", "create", f"client{n}") for n in range(args.clients)]
        env = {**os.environ, "NOTEWELL_AUTOWATCH": "off", "NOTEWELL_EMBEDDER": "hash"}
        server, url, server_log = start_server(store_dir, env, Path(tmp) / "server.log")
        queries = [q for _cat, q, _f in corpus.queries(200, 5)]
        t0 = time.monotonic()
        until = t0 + args.seconds
        clients = [TimedClient(n, url, tokens[n], until, args.write_share, queries, t0=t0) for n in range(args.clients)]
        memory: list[tuple[float, int]] = [(0.0, rss(server.pid))]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(10):
                memory.append((time.monotonic() - t0, rss(server.pid)))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        log(f"{args.clients} clients for {args.seconds:.0f} s against {url}")
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        stop.set()
        sampler.join()
        checked, lost = read_back(clients, url)
        server.terminate()
        server.wait(30)
        server_log.seek(0)
        server_errors = server_log.read().strip()
        server_log.close()
    buckets: dict[int, list[float]] = defaultdict(list)
    for c in clients:
        for at, ms in c.events:
            buckets[int(at // args.bucket)].append(ms)
    errors = [e for c in clients for e in c.errors]
    label = "minute" if args.bucket == 60 else "bucket"
    print(f"{label:>6} | requests/s | p50 ms | p95 ms | server RSS MB (end of bucket)")
    for b in sorted(buckets):
        end = (b + 1) * args.bucket
        mem = [m for at, m in memory if at <= end][-1]
        values = buckets[b]
        span = min(args.bucket, args.seconds - b * args.bucket)
        if span <= 0:
            continue
        rate = len(values) / span
        print(f"{b + 1:>6} | {rate:10.0f} | {pct(values, 50):6.1f} | {pct(values, 95):6.1f} | {mem / 2**20:.0f}")
    total = sum(len(v) for v in buckets.values())
    first = [m for at, m in memory if at >= min(120, args.seconds / 5)]
    growth = (memory[-1][1] / first[0] - 1) * 100 if first else 0.0
    print(
        f"total {total:,} requests = {total / args.seconds:,.0f}/s; errors {len(errors)};"
        f" RSS {memory[0][1] / 2**20:.0f} MB at start, {max(m for _, m in memory) / 2**20:.0f} MB peak,"
        f" {memory[-1][1] / 2**20:.0f} MB at end ({growth:+.1f}% after warm-up)"
    )
    print(f"writes acknowledged and checked afterwards: {checked:,}; lost or stale: {lost}")
    for e in errors[:10]:
        print(f"  error: {e}")
    if server_errors:
        print(f"server's stderr (last 1500 chars):\n{server_errors[-1500:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
