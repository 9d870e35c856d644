#!/usr/bin/env python3
"""Do other clients wait behind one slow read? `notewell serve` with and without a slow client
(it prints figures, never asserts).

Fills a store with --notes generated notes (keyword only: no model, no background embedding),
starts the real server (a subprocess) on 127.0.0.1, and runs --clients clients for --seconds,
each making ordinary keyword searches and note reads: first alone ("quiet"), then beside one
more client that repeats the slowest read the server's limits allow ("slow"): the most prefix
terms a query may hold, joined by OR, limit 100, which ranks nearly every note. It reports the
ordinary clients' p50/p95 in both phases and the slow client's own latency.

Each --src is a source tree (a folder holding the notewell package, put on PYTHONPATH for the
server, the seeding and the token command), so the same store can be served by two versions,
alternately, round after round (A, B, A, B, ...); the ratios of the last table are B over A.

Usage:
    git worktree add --detach /work/wt-before HEAD    # the commit before a change
    python benchmarks/bench_concurrency.py --src before=/work/wt-before/src --src after=src --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import Corpus, free_port, pct
from bench_store import log_stderr as log  # noqa: E402 - the same note generator

# The most prefixes a query may hold (8, of two letters each at least; a 1,000-character query of
# one-letter ones was the slow read here before the caps), ORed: FTS5 merges every word each
# begins, then the matches are ranked.
SLOW_QUERY = " OR ".join(f"{c}*" for c in ("th", "co", "re", "in", "de", "pr", "st", "ma"))
SEED = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_store import Corpus
import notewell
corpus = Corpus(3)
with notewell.open(sys.argv[1], watch=False, embedder=None) as store:
    store.add_notes(corpus.note(i) for i in range(int(sys.argv[2])))
"""


def environment(src: Path) -> dict[str, str]:
    """The server's environment: *src* first on the path, no model, no watcher started on demand."""
    path = os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "NOTEWELL_AUTOWATCH": "off", "NOTEWELL_EMBEDDER": "hash"}


def notewell_cli(src: Path, store: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(store), *args],
        capture_output=True,
        text=True,
        env=environment(src),
    )
    if done.returncode:
        raise SystemExit(f"notewell {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


class Server:
    """``notewell serve`` from one source tree, on a free port, until :meth:`stop`."""

    def __init__(self, src: Path, store: Path, log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "w+")  # noqa: SIM115 - read back in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notewell", "--store", str(store), "serve", "--port", str(self.port),
             "--write-rate", "100000", "--no-mcp", "--no-embed"],
            stdout=subprocess.DEVNULL, stderr=self.log, text=True, env=environment(src),
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2).read()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.log.seek(0)
                    raise SystemExit(f"the server did not start: {self.log.read()}") from None
                time.sleep(0.1)

    def stop(self) -> str:
        """Stop it; what it wrote to stderr."""
        self.proc.terminate()
        self.proc.wait(30)
        self.log.seek(0)
        text = self.log.read().strip()
        self.log.close()
        return text


def get(url: str, token: str) -> object:
    request = urllib.request.Request(url)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


class Client(threading.Thread):
    """Ordinary requests (two keyword searches to one note read), or with *slow* the slow query,
    until *until*; keeps each kind's latencies in ms."""

    def __init__(self, n: int, url: str, token: str, until: float, queries: list[str], ids: list[str], slow: bool):
        super().__init__(daemon=True)
        self.url, self.token, self.until, self.slow = url, token, until, slow
        self.queries, self.ids = queries, ids
        self.rng = random.Random(n)
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []

    def run(self) -> None:
        while time.monotonic() < self.until:
            if self.slow:
                kind, path = "slow search", f"/api/notes/search?limit=100&q={urllib.parse.quote(SLOW_QUERY)}"
            elif self.rng.random() < 2 / 3:
                kind, path = "search", f"/api/notes/search?q={urllib.parse.quote(self.rng.choice(self.queries))}"
            else:
                kind, path = "get note", f"/api/notes/{self.rng.choice(self.ids)}"
            started = time.perf_counter()
            try:
                get(self.url + path, self.token)
            except (urllib.error.URLError, OSError) as exc:
                self.errors.append(f"{kind}: {exc}")
                continue
            self.times[kind].append((time.perf_counter() - started) * 1000)


def phase(url: str, token: str, clients: int, seconds: float, queries: list[str], ids: list[str], slow: bool):
    """Run the clients (and the slow one if *slow*) for *seconds*; latencies by kind, errors."""
    until = time.monotonic() + seconds
    crowd = [Client(n, url, token, until, queries, ids, False) for n in range(clients)]
    if slow:
        crowd.append(Client(99, url, token, until, queries, ids, True))
    return run_crowd(crowd)


def run_crowd(crowd: list) -> tuple[dict[str, list[float]], list[str]]:
    """Start the clients (threads with ``times`` by kind and ``errors``), wait for them all,
    and merge what they measured."""
    for c in crowd:
        c.start()
    for c in crowd:
        c.join()
    times: dict[str, list[float]] = defaultdict(list)
    for c in crowd:
        for kind, values in c.times.items():
            times[kind] += values
    return times, [e for c in crowd for e in c.errors]


def one_run(label: str, src: Path, store: Path, tmp: Path, args: argparse.Namespace) -> dict[str, dict]:
    token = notewell_cli(src, store, "token", "create", f"bench-{label}-{time.monotonic_ns()}")
    server = Server(src, store, tmp / f"server-{label}.log")
    try:
        ids = [c["id"] for c in get(server.url + "/api/notes?limit=100", token)["cards"]]
        queries = [q for _cat, q, _f in Corpus(3).queries(200, 5)]
        phase(server.url, token, args.clients, 2.0, queries, ids, False)  # warm caches and threads
        out = {}
        for name, slow in (("quiet", False), ("slow", True)):
            times, errors = phase(server.url, token, args.clients, args.seconds, queries, ids, slow)
            out[name] = {"times": times, "errors": errors}
            counts = {k: len(v) for k, v in times.items()}
            log(f"{label} {name}: {counts}, {len(errors)} errors")
    finally:
        stderr = server.stop()
    if stderr:
        print(f"  server {label} wrote: {stderr[-500:]}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", metavar="[LABEL=]DIR", help="a source tree (repeat for an A/B)")
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--clients", type=int, default=4, help="ordinary clients")
    ap.add_argument("--seconds", type=float, default=20, help="length of each phase")
    ap.add_argument("--rounds", type=int, default=1, help="times every source tree is run, alternately")
    args = ap.parse_args()
    trees: list[tuple[str, Path]] = []
    for k, given in enumerate(args.src or [str(Path(__file__).resolve().parent.parent / "src")]):
        label, _, where = given.rpartition("=") if "=" in given else ("", "", given)
        path = Path(where).resolve()
        if not (path / "notewell" / "__init__.py").exists():
            raise SystemExit(f"--src {given}: no notewell package in {path}")
        trees.append((label or chr(ord("A") + k), path))
    print(f"notewell concurrency benchmark, python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print(f"{args.notes:,} notes, {args.clients} ordinary clients, {args.seconds:.0f} s a phase, {args.rounds} rounds")
    print(f"slow query: {len(SLOW_QUERY)} characters, limit 100: {SLOW_QUERY[:60]} ...")
    for label, path in trees:
        commit = subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%h"], capture_output=True, text=True)
        print(f"  {label}: {path} ({commit.stdout.strip() or 'not a git tree'})")
    results: dict[str, list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="nw-conc-") as tmp:
        store = Path(tmp) / "store"
        log(f"seeding {args.notes} notes")
        bench_dir = str(Path(__file__).resolve().parent)
        seed = [sys.executable, "-c", SEED, str(store), str(args.notes), bench_dir]
        subprocess.run(seed, check=True, env=environment(trees[0][1]))
        for round_ in range(args.rounds):
            for label, path in trees:
                log(f"round {round_ + 1}: {label}")
                results[label].append(one_run(label, path, store, Path(tmp), args))
    rows: dict[tuple[str, str, str], tuple[float, float, int]] = {}
    print(f"\n{'tree':<10} {'phase':<6} {'kind':<12} {'count':>7} {'p50 ms':>9} {'p95 ms':>9} {'errors':>7}")
    for label, _path in trees:
        for name in ("quiet", "slow"):
            merged: dict[str, list[float]] = defaultdict(list)
            errors = 0
            for run in results[label]:
                for kind, values in run[name]["times"].items():
                    merged[kind] += values
                errors += len(run[name]["errors"])
            for kind in ("search", "get note", "slow search"):
                values = merged.get(kind, [])
                if not values:
                    continue
                rows[(label, name, kind)] = (pct(values, 50), pct(values, 95), len(values))
                print(
                    f"{label:<10} {name:<6} {kind:<12} {len(values):>7,} {pct(values, 50):>9.1f}"
                    f" {pct(values, 95):>9.1f} {errors:>7}"
                )
    if len(trees) >= 2:
        (a, _), (b, _) = trees[0], trees[1]
        print(f"\nratios {b} / {a} (below 1: {b} is faster)")
        for name in ("quiet", "slow"):
            for kind in ("search", "get note", "slow search"):
                if (a, name, kind) in rows and (b, name, kind) in rows:
                    pa, pb = rows[(a, name, kind)], rows[(b, name, kind)]
                    print(f"  {name:<6} {kind:<12} p50 {pb[0] / pa[0]:6.2f}x  p95 {pb[1] / pa[1]:6.2f}x")
        for label, _path in trees[:2]:
            quiet, slow = rows.get((label, "quiet", "search")), rows.get((label, "slow", "search"))
            if quiet and slow:
                print(f"  {label}: search p95 with the slow client / without: {slow[1] / quiet[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
