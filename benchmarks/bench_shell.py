#!/usr/bin/env python3
"""How long a shell waits: one-shot semantic search with and without the helper, and the
start-up of `notewell mcp` and `notewell serve` (it prints figures, never asserts).

Builds a store of --notes generated notes (short agent-style notes, about 300 characters)
embedded with the default model (USE-multilingual-v3: the model whose load the helper saves),
or reuses --store DIR. Then, for --rounds rounds, interleaved in each round:

* ``notewell search --mode semantic …`` as a subprocess with no helper running (cold:
  the process loads the model itself; NOTEWELL_AUTOWATCH=off so it starts none);
* the same with the helper running (``notewell watch``, model loaded), checked to have
  answered through its status;
* ``notewell search`` (keyword) in both states, for reference, and ``notewell --version``
  (the interpreter and the CLI's imports);
* ``notewell mcp`` from the process start to the ``initialize`` answer and to the first
  ``tools/list`` answer (the `mcp` package's client over stdio), and to a first semantic answer;
* ``notewell serve`` from the process start to ``/healthz``, and to a first semantic answer.

Usage:
    python benchmarks/bench_shell.py                 # 10,000 notes (embedding takes minutes)
    python benchmarks/bench_shell.py --notes 2000 --rounds 5
    python benchmarks/bench_shell.py --store /tmp/nw-shell-10k --keep   # build once, reuse after
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import notewell
from notewell.services.search_helper import helper_status

QUERIES = [
    "why do all the workers refill the cache at the same time",
    "the deploy keeps timing out on the last step",
    "which index makes the slow query fast",
    "flaky test that fails only on the build server",
    "memory grows until the process is killed",
    "login fails after the token expires",
]

TOPICS = {
    "cache": ["cache", "expiry", "stampede", "refill", "ttl", "eviction", "hit rate", "warm-up"],
    "database": ["query", "index", "migration", "lock", "replica", "vacuum", "connection pool", "deadlock"],
    "deploy": ["deploy", "rollout", "canary", "timeout", "health check", "rollback", "container", "release"],
    "tests": ["test", "fixture", "flaky", "mock", "coverage", "build server", "assertion", "seed"],
    "memory": ["memory", "leak", "heap", "allocation", "garbage collector", "buffer", "oom killer", "profile"],
    "auth": ["token", "login", "session", "expiry", "refresh", "password", "scope", "certificate"],
    "search": ["ranking", "tokenizer", "embedding", "recall", "snippet", "stemming", "synonym", "relevance"],
    "network": ["latency", "retry", "packet", "dns", "tls handshake", "proxy", "socket", "bandwidth"],
}
KINDS = ["finding", "decision", "blocker", "plan", "dead_end", "conclusion"]
VERBS = ["breaks", "slows down", "fixes", "hides", "doubles", "removes", "explains", "triggers"]
SENTENCES = [
    "The {a} {verb} the {b} when the load goes up.",
    "We tried a larger {a}; it {verb} the {b} but costs more.",
    "Measured: the {a} takes {n} ms at p95 after the change to the {b}.",
    "Next step: look at the {a} before touching the {b} again.",
    "Root cause was the {a}: it {verb} the {b} on every restart.",
    "Decided to keep the {a} and drop the {b} for now.",
    "The {b} {verb} only on the {a} path, not elsewhere.",
]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def note(rng: random.Random) -> str:
    topic = rng.choice(list(TOPICS))
    words = TOPICS[topic]
    title = f"{rng.choice(words).capitalize()} and {rng.choice(words)}: {rng.choice(VERBS)}"
    sentences = []
    for _ in range(rng.randint(2, 4)):
        a, b, verb = rng.choice(words), rng.choice(words), rng.choice(VERBS)
        sentences.append(rng.choice(SENTENCES).format(a=a, b=b, verb=verb, n=rng.randint(2, 900)))
    body = " ".join(sentences)
    return f"---\ntitle: {title}\nkind: {rng.choice(KINDS)}\ntags: [{topic}]\n---\n\n{body}\n"


def build(root: Path, count: int) -> None:
    with notewell.open(root) as store:
        have = store.summary()["total_notes"]
        if have < count:
            rng = random.Random(7 + have)
            started = time.perf_counter()
            store.add_notes([note(rng) for _ in range(count - have)], author="bench")
            log(f"added {count - have} notes in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        done = 0
        while True:
            result = store.embed_pending(limit=500)
            done += result["embedded"]
            if done:
                rate = done / (time.perf_counter() - started)
                log(f"embedded {done} notes ({rate:.0f} notes/s), {result['pending']} waiting")
            if not result["pending"]:
                break


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "NOTEWELL_EMBEDDER"}  # the default model
    out["NOTEWELL_AUTOWATCH"] = "off"  # nothing starts a helper but this script
    out.update(extra)
    return out


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env=env())
    took = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[2:])} failed: {done.stderr.decode().strip()}")
    return took


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Helper:
    """`notewell watch` on the store, waited for until its model has loaded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notewell", "--store", str(root), "watch"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env(),
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = helper_status(root)
            if status and status["model"] == "ready":
                time.sleep(0.5)  # its warm-up search (the vectors into memory) runs right after
                return
            if self.proc.poll() is not None:
                raise SystemExit("notewell watch stopped")
            time.sleep(0.05)
        raise SystemExit("the helper did not load its model in 120 s")

    def searches(self) -> int:
        status = helper_status(self.root)
        return status["searches"] if status else -1

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


async def mcp_start(root: Path, query: str) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "notewell", "--store", str(root), "mcp"], env=env()
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            await session.list_tools()
            listed = time.perf_counter()
            result = await session.call_tool("search_notes", {"query": query, "mode": "semantic"})
            searched = time.perf_counter()
            if result.is_error:
                raise SystemExit(f"MCP semantic search failed: {result.content[0].text}")
    return {
        "mcp: start -> initialize answered": initialized - started,
        "mcp: start -> tools/list answered": listed - started,
        "mcp: start -> first semantic answer": searched - started,
    }


def serve_start(root: Path, query: str) -> dict[str, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(root), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - started > 120:
                    raise SystemExit("notewell serve did not answer /healthz") from None
                time.sleep(0.005)
        healthy = time.perf_counter()
        q = urllib.request.quote(query)
        urllib.request.urlopen(f"{url}/api/notes/search?q={q}&mode=semantic", timeout=120).read()
        searched = time.perf_counter()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"serve: start -> /healthz": healthy - started, "serve: start -> first semantic answer": searched - started}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--store", type=Path, help="build the store here (or reuse the one there)")
    ap.add_argument("--keep", action="store_true", help="keep the store afterwards")
    args = ap.parse_args()
    root = args.store or Path(tempfile.mkdtemp(prefix="notewell-bench-shell-")) / "notes"
    build(root, args.notes)
    with notewell.open(root) as store:
        if store.watcher_pid() is not None:
            raise SystemExit(f"a watcher runs on {root}: stop it first")
    cli = [sys.executable, "-m", "notewell", "--store", str(root)]
    times: dict[str, list[float]] = defaultdict(list)
    try:
        for r in range(args.rounds):
            query = QUERIES[r % len(QUERIES)]
            log(f"round {r + 1}/{args.rounds}: {query!r}")
            times["notewell --version (interpreter + CLI imports)"].append(timed([*cli, "--version"]))
            cold = timed([*cli, "search", "--mode", "semantic", query])
            times["search --mode semantic, no helper (cold)"].append(cold)
            times["search (keyword), no watcher"].append(timed([*cli, "search", query]))
            helper = Helper(root)
            try:
                before = helper.searches()
                times["search --mode semantic, helper running"].append(
                    timed([*cli, "search", "--mode", "semantic", query])
                )
                if helper.searches() != before + 1:
                    raise SystemExit("the helper did not answer the search")
                times["search --mode hybrid, helper running"].append(timed([*cli, "search", "--mode", "hybrid", query]))
                times["search (keyword), watcher running"].append(timed([*cli, "search", query]))
            finally:
                helper.stop()
            for name, took in asyncio.run(mcp_start(root, query)).items():
                times[name].append(took)
            for name, took in serve_start(root, query).items():
                times[name].append(took)
    finally:
        if not args.keep and args.store is None:
            shutil.rmtree(root.parent, ignore_errors=True)
    print(f"\nnotewell shell figures: {args.notes} notes, {args.rounds} rounds, default model, {os.cpu_count()} cores")
    print(f"{'figure':58s} {'p50':>8s} {'max':>8s}")
    for name, values in times.items():
        mid = statistics.median(values)
        print(f"{name:58s} {mid:7.2f}s {max(values):7.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
