#!/usr/bin/env python3
"""Load test of `notewell serve` on loopback (it prints figures, never asserts).

Starts the real server (a subprocess) on a store seeded with --seed notes, then runs
--clients concurrent clients for --seconds, each with its own token, mixing searches (keyword,
some semantic) with writes (new notes, edits of its own notes) at --write-share. Reports
requests per second, p50/p95 latency per kind, every error, and whether every acknowledged
write is in the store afterwards (no lost writes).

Usage:
    python benchmarks/bench_server.py --clients 8 --seconds 60 > benchmarks/out/server.txt
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import Corpus, free_port, pct
from bench_store import log_stderr as log  # noqa: E402 - the same note generator

import notewell  # noqa: E402


def cli(store: Path, *args: str) -> str:
    env = {**os.environ, "NOTEWELL_AUTOWATCH": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "notewell", "--store", str(store), *args], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"notewell {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


class Client(threading.Thread):
    def __init__(self, n: int, url: str, token: str, until: float, write_share: float, queries: list[str]) -> None:
        super().__init__(daemon=True)
        self.url, self.token, self.until = url, token, until
        self.write_share = write_share
        self.queries = queries
        self.rng = random.Random(n)
        self.n = n
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.written: dict[str, str] = {}  # id -> the text the server acknowledged last

    def request(self, kind: str, method: str, path: str, body: dict | None = None) -> dict | None:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            self.errors.append(f"{kind}: HTTP {exc.code} {exc.read()[:200]!r}")
            return None
        except OSError as exc:
            self.errors.append(f"{kind}: {exc}")
            return None
        self.times[kind].append((time.perf_counter() - started) * 1000)
        return answer

    def run(self) -> None:
        i = 0
        while time.monotonic() < self.until:
            i += 1
            if self.rng.random() < self.write_share:
                if self.written and self.rng.random() < 0.3:
                    nid = self.rng.choice(list(self.written))
                    text = f"# client {self.n} note, edit {i}\n\nrevised finding {i} from client {self.n}"
                    if self.request("edit", "PATCH", f"/api/notes/{nid}", {"text": text}) is not None:
                        self.written[nid] = text
                else:
                    text = f"# client {self.n} note {i}\n\nfinding {i} from client {self.n}: cache warmed in {i} ms"
                    got = self.request("add", "POST", "/api/notes", {"text": text})
                    if got is not None:
                        self.written[got["id"]] = text
            else:
                q = urllib.parse.quote(self.rng.choice(self.queries))
                mode = "semantic" if self.rng.random() < 0.2 else "keyword"
                self.request(f"search ({mode})", "GET", f"/api/notes/search?q={q}&mode={mode}")


def start_server(store_dir: Path, env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen, str, Any]:
    """``notewell serve`` on *store_dir* (writes barely limited); returns it, its URL and its log file."""
    port = free_port()
    server_log = open(log_path, "w+")  # noqa: SIM115 - read back by the caller
    server = subprocess.Popen(
        [sys.executable, "-m", "notewell", "--store", str(store_dir), "serve", "--port", str(port),
         "--write-rate", "100000"],
        stdout=subprocess.DEVNULL, stderr=server_log, text=True, env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).read()
            return server, url, server_log
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server_log.seek(0)
                raise SystemExit(f"the server did not start: {server_log.read()}") from None
            time.sleep(0.1)


def read_back(clients: list[Client], url: str) -> tuple[int, int]:
    """(checked, lost): every acknowledged note must be there with the text last acknowledged."""
    lost = checked = 0
    for c in clients:
        for nid, text in c.written.items():
            checked += 1
            req = urllib.request.Request(f"{url}/api/notes/{nid}")
            req.add_header("Authorization", f"Bearer {c.token}")
            try:
                with urllib.request.urlopen(req, timeout=60) as response:
                    lost += json.loads(response.read())["text"] != text
            except urllib.error.HTTPError:
                lost += 1
    return checked, lost


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=2000, help="notes in the store before the run")
    ap.add_argument("--write-share", type=float, default=0.2)
    args = ap.parse_args()
    print(f"notewell server load test, python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory(prefix="nw-serve-") as tmp:
        store_dir = Path(tmp) / "store"
        corpus = Corpus(3)
        with notewell.open(store_dir, watch=False) as store:
            store.add_notes(corpus.note(i) for i in range(args.seed))
            log(f"seeded {args.seed} notes; embedding them")
            store.embed_pending()
        tokens = [cli(store_dir, "token", "create", f"client{n}") for n in range(args.clients)]
        env = {**os.environ, "NOTEWELL_AUTOWATCH": "off"}
        server, url, server_log = start_server(store_dir, env, Path(tmp) / "server.log")
        queries = [q for _cat, q, _f in corpus.queries(200, 5)]
        until = time.monotonic() + args.seconds
        clients = [Client(n, url, tokens[n], until, args.write_share, queries) for n in range(args.clients)]
        log(f"{args.clients} clients for {args.seconds:.0f} s against {url}")
        started = time.perf_counter()
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        elapsed = time.perf_counter() - started
        checked, lost = read_back(clients, url)
        server.terminate()
        server.wait(20)
        server_log.seek(0)
        server_errors = server_log.read().strip()
        server_log.close()
    times: dict[str, list[float]] = defaultdict(list)
    for c in clients:
        for kind, values in c.times.items():
            times[kind] += values
    errors = [e for c in clients for e in c.errors]
    total = sum(len(v) for v in times.values())
    print(
        f"{args.clients} clients, {elapsed:.0f} s, store of {args.seed:,} notes at the start:"
        f" {total:,} requests = {total / elapsed:,.0f}/s; errors: {len(errors)}"
    )
    for kind in sorted(times):
        values = times[kind]
        print(f"  {kind:<18} {len(values):>7,}  p50 {pct(values, 50):7.1f} ms  p95 {pct(values, 95):7.1f} ms")
    print(f"writes acknowledged and checked afterwards: {checked:,}; lost or stale: {lost}")
    for e in errors[:10]:
        print(f"  error: {e}")
    if server_errors:
        print(f"server's stderr:\n{server_errors[:2000]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
