#!/usr/bin/env python3
"""Does anyone wait behind the slowest requests a server takes? (prints figures, never asserts)

Fills a store with --notes generated notes plus the heaviest ones the limits allow, starts the
real ``notewell serve`` on 127.0.0.1, and runs --clients ordinary clients (two keyword searches
to one note read) for --seconds: first alone ("quiet"), then beside --slow clients that repeat
one kind of the costliest request, a kind at a time:

- ``prefix``: the most prefix terms a query may hold (8 of two letters, common ones, ORed), limit 100;
- ``long query``: a query of 1,000 characters (the servers' limit) of common words;
- ``render``: a note page rendered as HTML, each time another note holding just under the
  20,000 characters of Markdown syntax still rendered (so no render is served from the cache);
- ``big note``: reading a note whose 64 KB header (the most a header may be) names 4,000 notes;
- ``big links``: the link tree of that note (4,000 ends);
- ``list``: the recent-notes list, limit 100, far into the store.

For each phase it prints the ordinary clients' search and read p50 / p95 and the slow
requests' own latency, and the ratio of the ordinary p95 to the quiet one.

Usage:
    python stress/slow_requests.py                       # 3,000 notes, 4 + 2 clients, 15 s a phase
    python stress/slow_requests.py --notes 500 --seconds 5 --kinds prefix,render
"""

from __future__ import annotations

import argparse
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

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

from bench_concurrency import Server, environment, get, notewell_cli, run_crowd  # noqa: E402
from bench_store import Corpus, pct  # noqa: E402

SEED = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_store import Corpus
import notewell
corpus = Corpus(3)
with notewell.open(sys.argv[1], watch=False, embedder=None) as store:
    store.add_notes(corpus.note(i) for i in range(int(sys.argv[2])))
    # Heavy pages: each under the render cap by a little, each different (no cache hit).
    cell = "![" * 9_700
    store.add_notes([f"# page {i}\\n\\npage{i} " + cell for i in range(400)], batch=100)
    ids = ", ".join(f"nte_{i:010d}" for i in range(4_000))  # as many as a header holds
    big = store.add_note(f"---\\ntitle: big\\nbuilds_on: [{ids}]\\n---\\nbig links\\n")
    print(big.id)
"""
PREFIX = " OR ".join(f"{c}*" for c in ("th", "co", "re", "in", "de", "pr", "st", "ma"))  # 8, of 2 letters
KINDS = ("prefix", "long query", "render", "big note", "big links", "list")


def fetch(url: str, token: str) -> int:
    """The answer's size, its body read but not parsed."""
    request = urllib.request.Request(url)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=120) as response:
        return len(response.read())


class Client(threading.Thread):
    """Ordinary requests until *until*, or with *kind* the slow requests of that kind."""

    def __init__(self, n: int, url: str, token: str, until: float, shared: dict, kind: str | None) -> None:
        super().__init__(daemon=True)
        self.url, self.token, self.until, self.kind, self.shared = url, token, until, kind, shared
        self.rng = random.Random(n)
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []

    def path(self) -> tuple[str, str]:
        shared, kind = self.shared, self.kind
        if kind == "prefix":
            return kind, f"/api/notes/search?limit=100&q={urllib.parse.quote(PREFIX)}"
        if kind == "long query":
            return kind, f"/api/notes/search?limit=100&q={urllib.parse.quote(shared['long'])}"
        if kind == "render":
            with shared["lock"]:
                page = shared["pages"].pop() if shared["pages"] else shared["ids"][0]
            return kind, f"/api/notes/{page}?render=html"
        if kind == "big note":
            return kind, f"/api/notes/{shared['big']}"
        if kind == "big links":
            return kind, f"/api/notes/{shared['big']}/links"
        if kind == "list":
            return kind, f"/api/notes?limit=100&offset={self.rng.randrange(0, shared['notes'])}"
        if self.rng.random() < 2 / 3:
            return "search", f"/api/notes/search?q={urllib.parse.quote(self.rng.choice(shared['queries']))}"
        return "get note", f"/api/notes/{self.rng.choice(shared['ids'])}"

    def run(self) -> None:
        while time.monotonic() < self.until:
            kind, path = self.path()
            started = time.perf_counter()
            try:
                if self.kind is None:
                    get(self.url + path, self.token)
                else:  # read, not parsed: parsing MBs of JSON here would hold up the other clients' threads
                    fetch(self.url + path, self.token)
            except (urllib.error.URLError, OSError) as exc:
                self.errors.append(f"{kind}: {exc}")
                continue
            self.times[kind].append((time.perf_counter() - started) * 1000)


def phase(url: str, token: str, args: argparse.Namespace, shared: dict, kind: str | None, seconds: float):
    until = time.monotonic() + seconds
    crowd = [Client(n, url, token, until, shared, None) for n in range(args.clients)]
    if kind is not None:
        crowd += [Client(100 + n, url, token, until, shared, kind) for n in range(args.slow)]
    return run_crowd(crowd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--clients", type=int, default=4, help="ordinary clients")
    ap.add_argument("--slow", type=int, default=2, help="clients repeating the slow request")
    ap.add_argument("--seconds", type=float, default=15, help="length of each phase")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"which slow kinds, of {', '.join(KINDS)}")
    args = ap.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"--kinds: no kind {k!r} (one of {', '.join(KINDS)})")
    src = Path(__file__).resolve().parent.parent / "src"
    print(f"notewell slow requests, python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print(f"{args.notes:,} notes, {args.clients} ordinary clients, {args.slow} slow, {args.seconds:.0f} s a phase")
    with tempfile.TemporaryDirectory(prefix="nw-slow-") as tmp:
        store = Path(tmp) / "store"
        seed = [sys.executable, "-c", SEED, str(store), str(args.notes), str(BENCH)]
        big = subprocess.run(seed, check=True, env=environment(src), capture_output=True, text=True).stdout.strip()
        token = notewell_cli(src, store, "token", "create", "bench", "--owner")
        server = Server(src, store, Path(tmp) / "server.log")
        try:
            ids = [c["id"] for c in get(server.url + "/api/notes?limit=100&offset=500", token)["cards"]]
            pages = [
                c["id"]
                for offset in range(0, 501, 100)
                for c in get(server.url + f"/api/notes?limit=100&offset={offset}", token)["cards"]
                if c["title"].startswith("page ")
            ]
            corpus = Corpus(3)
            queries = [q for _cat, q, _f in corpus.queries(200, 5)]
            long = " ".join(q for q in queries)[:1000].rsplit(" ", 1)[0]  # the servers' longest query
            shared = {"ids": ids, "queries": queries, "big": big, "notes": args.notes, "long": long,
                      "pages": list(dict.fromkeys(pages)), "lock": threading.Lock()}  # fmt: skip
            phase(server.url, token, args, shared, None, 2.0)  # warm up
            rows = []
            for kind in [None, *kinds]:
                times, errors = phase(server.url, token, args, shared, kind, args.seconds)
                rows.append((kind or "quiet", times, errors))
        finally:
            stderr = server.stop()
    quiet = rows[0][1]
    print(f"\n{'phase':<11} {'search p50/p95 ms':>19} {'read p50/p95 ms':>17} {'slow n':>7} {'slow p50/p95 ms':>17}"
          f" {'search p95 / quiet':>19} {'errors':>7}")  # fmt: skip
    for name, times, errors in rows:
        search, read, slow = times.get("search", []), times.get("get note", []), times.get(name, [])
        ratio = pct(search, 95) / pct(quiet["search"], 95) if search and quiet.get("search") else float("nan")
        slow_text = f"{pct(slow, 50):7.0f} / {pct(slow, 95):7.0f}" if slow else f"{'-':>17}"
        print(
            f"{name:<11} {pct(search, 50):8.1f} / {pct(search, 95):8.1f} {pct(read, 50):7.1f} / {pct(read, 95):7.1f}"
            f" {len(slow):>7} {slow_text} {ratio:>19.2f} {len(errors):>7}"
        )
        for error in errors[:2]:
            print(f"    {error}")
    if stderr:
        print(f"server wrote: {stderr[-400:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
