#!/usr/bin/env python3
"""Two `notewell serve` processes writing concurrently to one PostgreSQL database, over HTTP.

It makes a fresh database (on bench_pg.py's PostgreSQL server: NOTEWELL_TEST_DATABASE's, or one
that scripts/pg-server starts), runs `notewell db upgrade` and `notewell token create NAME --json`
on it, starts two `notewell serve --database URL --no-embed` processes on free ports of 127.0.0.1,
and runs client threads against them (each talks to one server, over one keep-alive connection).
Each client does a fixed number of operations, a seeded mix of:

  add      POST  /api/notes                     a new note (its title names it: run, client, number)
  edit     PATCH /api/notes/ID {text}           a new text for one of the client's own notes
  tag      PATCH /api/notes/ID {add_tags}       a tag of its own on ONE note every client tags
  search   GET   /api/notes/search?q=WORD       a keyword search

Every acknowledged write (a 2xx answer) is recorded. Afterwards, through BOTH servers, it checks
that every acknowledged note is listed exactly once and has the text of its latest acknowledged
write (SHA-256; a later write that failed may have landed too, and is accepted), that the shared
note carries every acknowledged tag (a lost update would drop one), and that no id is listed twice.
It prints ops/s, p50/p95 per operation, the HTTP errors by status, the checks, and a one-line
summary; it exits 1 if a check fails or any request failed.

A note holds at most 20 tags, so the shared note takes 19 (spread over the clients, done early so
that they overlap); the other operations are adds, edits and searches (--mix). One token serves
every client, so the servers run with a --write-rate that does not throttle them.

    python benchmarks/bench_pg_servers.py                          # 2 servers x 4 clients x 1,000 ops
    python benchmarks/bench_pg_servers.py --clients 1 --ops 50     # a smoke run
    python benchmarks/bench_pg_servers.py --database postgresql://user@host/db   # an existing database
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any

HERE = Path(__file__).resolve().parent
OPS = ("add", "edit", "tag", "search")
SHARED_TAGS = 19  # a note holds at most 20 tags
WORDS = (
    "cache stampede lease quorum replica shard backoff jitter tombstone compaction vector clock gossip "
    "snapshot journal checkpoint latency throughput eviction warmup"
).split()


def _bench_pg() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_pg", HERE / "bench_pg.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_pg = _bench_pg()
log = bench_pg.log
pct = bench_pg.pct


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTEWELL_STORE", "NOTEWELL_DATABASE")}
    import notewell

    env["PYTHONPATH"] = str(Path(notewell.__file__).resolve().parent.parent)
    env["NOTEWELL_AUTOWATCH"] = "off"
    return env


def notewell_cli(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "notewell", *args], capture_output=True, text=True, env=_env(), timeout=120
    )
    if done.returncode != 0:
        raise SystemExit(f"notewell {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout


# -- the servers -------------------------------------------------------------------


class NotewellServer:
    """A `notewell serve --database URL` process on a free port of 127.0.0.1 (its output in a file)."""

    def __init__(self, url: str, logs: Path, write_rate: float) -> None:
        self.port = bench_pg.free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = logs / f"serve-{self.port}.log"
        self.log_file: IO[str] = open(self.log_path, "w")  # closed in close()
        cmd = [sys.executable, "-m", "notewell", "serve", "--database", url, "--port", str(self.port), "--no-embed"]
        cmd += ["--write-rate", str(write_rate)]
        self.proc = subprocess.Popen(cmd, stdout=self.log_file, stderr=subprocess.STDOUT, text=True, env=_env())

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"notewell serve did not start: {self.output()[-2000:]}") from None
                time.sleep(0.1)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


class Client:
    """One keep-alive HTTP connection to a server, with a bearer token."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """The status and parsed JSON of one request; status 0 for a broken connection."""
        data = None if body is None else json.dumps(body).encode()
        try:
            self.conn.request(method, path, body=data, headers=self.headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            return 0, None
        try:
            return response.status, json.loads(raw or b"null")
        except ValueError:
            return response.status, raw.decode(errors="replace")

    def close(self) -> None:
        self.conn.close()


# -- the clients -----------------------------------------------------------------------


@dataclass
class Record:
    """What one client did and was told."""

    times: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})
    errors: Counter[str] = field(default_factory=Counter)
    added: dict[str, str] = field(default_factory=dict)  # acknowledged note id -> its title
    added_ids: list[str] = field(default_factory=list)  # every id an add was acknowledged with
    text: dict[str, str] = field(default_factory=dict)  # note id -> the SHA-256 of its latest acknowledged text
    maybe: dict[str, set[str]] = field(default_factory=dict)  # note id -> texts of failed writes after that
    tags: list[str] = field(default_factory=list)  # tags acknowledged on the shared note
    failed_adds: int = 0


def note_text(run: str, cid: int, k: int, rev: int, rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    return f"# {run} c{cid} n{k}\n\nrevision {rev} by client {cid}: {words}\n"


def run_client(
    cid: int,
    port: int,
    token: str,
    run: str,
    shared: str,
    ops: int,
    mix: dict[str, float],
    tag_slots: set[int],
    seed: int,
) -> Record:
    rng = random.Random(seed * 1000 + cid)
    client = Client(port, token)
    rec = Record()
    mine: list[str] = []
    revs: dict[str, int] = {}
    weights = [mix["add"], mix["edit"], mix["search"]]
    try:
        for i in range(ops):
            if i in tag_slots:
                op = "tag"
            elif not mine:
                op = "add"
            else:
                op = rng.choices(("add", "edit", "search"), weights)[0]
            t = time.perf_counter()
            if op == "add":
                k = len(mine) + rec.failed_adds
                text = note_text(run, cid, k, 1, rng)
                status, body = client.call("POST", "/api/notes", {"text": text})
                ok = status == 201
                if ok:
                    nid = body["id"]
                    mine.append(nid)
                    revs[nid] = 1
                    rec.added[nid] = f"{run} c{cid} n{k}"
                    rec.added_ids.append(nid)
                    rec.text[nid] = sha(text)
                else:
                    rec.failed_adds += 1
            elif op == "edit":
                nid = rng.choice(mine)
                k = int(rec.added[nid].rsplit("n", 1)[1])
                text = note_text(run, cid, k, revs[nid] + 1, rng)
                status, _ = client.call("PATCH", f"/api/notes/{nid}", {"text": text})
                ok = status == 200
                if ok:
                    revs[nid] += 1
                    rec.text[nid] = sha(text)
                    rec.maybe.pop(nid, None)
                else:
                    rec.maybe.setdefault(nid, set()).add(sha(text))
            elif op == "tag":
                tag = f"c{cid}-t{i}"
                status, _ = client.call("PATCH", f"/api/notes/{shared}", {"add_tags": [tag]})
                ok = status == 200
                if ok:
                    rec.tags.append(tag)
            else:
                status, _ = client.call("GET", f"/api/notes/search?q={rng.choice(WORDS)}&limit=10")
                ok = status == 200
            rec.times[op].append(time.perf_counter() - t)
            if not ok:
                rec.errors[f"{op} {status or 'conn'}"] += 1
    finally:
        client.close()
    return rec


def tag_slots(clients: int, ops: int) -> list[set[int]]:
    """Which of each client's operations tag the shared note: 19 in all, round robin over the
    clients, each at the same early positions (3, 7, 11, ...) so that they run at once."""
    slots: list[set[int]] = [set() for _ in range(clients)]
    for n in range(SHARED_TAGS):
        cid, round_ = n % clients, n // clients
        position = 3 + 4 * round_
        if position < ops:
            slots[cid].add(position)
    return slots


# -- the checks ---------------------------------------------------------------------


@dataclass
class Checks:
    missing: int = 0
    stale: int = 0  # present, but not with the text of its latest acknowledged write
    duplicates: int = 0
    lost_tags: int = 0
    unacknowledged: int = 0  # listed notes of this run that no acknowledged add made
    listed: dict[str, int] = field(default_factory=dict)  # per server: notes listed

    def failed(self) -> bool:
        return bool(self.missing or self.stale or self.duplicates or self.lost_tags)


def list_all(client: Client, author: str) -> list[dict[str, Any]]:
    cards: list[dict[str, Any]] = []
    while True:
        status, body = client.call("GET", f"/api/notes?author={author}&limit=100&offset={len(cards)}")
        if status != 200:
            raise SystemExit(f"listing the notes failed: {status} {body}")
        cards += body["cards"]
        if len(body["cards"]) < 100:
            return cards


def check(servers: list[NotewellServer], token: str, author: str, run: str, shared: str, recs: list[Record]) -> Checks:
    out = Checks()
    acked: dict[str, str] = {nid: title for r in recs for nid, title in r.added.items()}
    ids = [nid for r in recs for nid in r.added_ids]
    out.duplicates += len(ids) - len(set(ids))  # one id acknowledged for two adds
    latest = {nid: h for r in recs for nid, h in r.text.items()}
    maybe = {nid: s for r in recs for nid, s in r.maybe.items()}
    wanted_tags = {t for r in recs for t in r.tags}
    for server in servers:
        client = Client(server.port, token)
        try:
            cards = [c for c in list_all(client, author) if c["title"].startswith(run) and c["id"] != shared]
            out.listed[server.base] = len(cards)
            counts = Counter(c["id"] for c in cards)
            titles = Counter(c["title"] for c in cards)
            out.duplicates += sum(n - 1 for n in counts.values() if n > 1)
            out.duplicates += sum(n - 1 for t, n in titles.items() if n > 1 and t in acked.values())
            out.missing += sum(1 for nid in acked if nid not in counts)
            out.unacknowledged += sum(1 for nid in counts if nid not in acked)
            status, body = client.call("GET", f"/api/notes/{shared}")
            have = set(body["tags"]) if status == 200 else set()
            out.lost_tags += len(wanted_tags - have)
        finally:
            client.close()

    def texts(args: tuple[NotewellServer, list[str]]) -> tuple[int, int]:
        server, chunk = args
        client = Client(server.port, token)
        missing = stale = 0
        try:
            for nid in chunk:
                status, body = client.call("GET", f"/api/notes/{nid}")
                if status != 200:
                    missing += 1
                elif sha(body["text"]) != latest[nid] and sha(body["text"]) not in maybe.get(nid, set()):
                    stale += 1
        finally:
            client.close()
        return missing, stale

    notes = sorted(acked)
    jobs = [(server, notes[i::4]) for server in servers for i in range(4)]
    with ThreadPoolExecutor(len(jobs)) as pool:
        for missing, stale in pool.map(texts, jobs):
            out.missing += missing
            out.stale += stale
    return out


# -- the run ----------------------------------------------------------------------------


def fmt_errors(errors: Counter[str]) -> str:
    if not errors:
        return "none"
    by_status: Counter[str] = Counter()
    for key, n in errors.items():
        by_status[key.rsplit(" ", 1)[1]] += n
    return (
        ", ".join(f"{s}: {n}" for s, n in sorted(by_status.items()))
        + " ("
        + ", ".join(f"{k}: {n}" for k, n in sorted(errors.items()))
        + ")"
    )


def bench(url: str, args: argparse.Namespace, logs: Path) -> int:
    run = "b" + uuid.uuid4().hex[:8]
    author = f"bench-{run}"
    log("notewell db upgrade")
    notewell_cli("db", "upgrade", "--database", url)
    token = json.loads(notewell_cli("token", "create", author, "--database", url, "--json"))["secret"]
    log("starting two notewell servers")
    servers = [NotewellServer(url, logs, args.write_rate) for _ in range(2)]
    try:
        for server in servers:
            server.wait_ready()
        first = Client(servers[0].port, token)
        status, body = first.call("POST", "/api/notes", {"text": f"# {run} shared\n\nevery client tags this note\n"})
        first.close()
        if status != 201:
            raise SystemExit(f"adding the shared note failed: {status} {body}")
        shared = body["id"]
        clients = 2 * args.clients
        slots = tag_slots(clients, args.ops)
        mix = dict(zip(("add", "edit", "search"), args.mix, strict=True))
        log(f"{clients} clients x {args.ops:,} operations on {' and '.join(s.base for s in servers)}")
        start = threading.Barrier(clients + 1)

        def client(cid: int) -> Record:
            start.wait()
            port = servers[cid % 2].port
            return run_client(cid, port, token, run, shared, args.ops, mix, slots[cid], args.seed)

        with ThreadPoolExecutor(clients) as pool:
            futures = [pool.submit(client, cid) for cid in range(clients)]
            start.wait()
            t = time.perf_counter()
            recs = [f.result() for f in futures]
            wall = time.perf_counter() - t
        log("checking through both servers")
        checks = check(servers, token, author, run, shared, recs)
        crashed = [s.base for s in servers if s.proc.poll() is not None]
        tracebacks = sum(s.output().count("Traceback") for s in servers)
    finally:
        for server in servers:
            server.close()

    errors: Counter[str] = Counter()
    for r in recs:
        errors.update(r.errors)
    times = {op: [x for r in recs for x in r.times[op]] for op in OPS}
    total = sum(len(v) for v in times.values())
    every = [x for v in times.values() for x in v]
    print(
        f"two notewell servers on one PostgreSQL database: {clients} clients ({args.clients} per server),"
        f" {args.ops:,} operations each, over HTTP"
    )
    print(f"total: {total:,} ops in {wall:.1f} s = {total / wall:,.0f} ops/s")
    print("operation | count | p50 ms | p95 ms")
    for op in (*OPS, "all"):
        xs = every if op == "all" else times[op]
        if xs:
            print(f"{op:<9} | {len(xs):>5,} | {statistics.median(xs) * 1000:>6.1f} | {pct(xs, 95) * 1000:>6.1f}")
    print(f"HTTP errors: {fmt_errors(errors)}")
    acked_notes = sum(len(r.added) for r in recs)
    acked_edits = sum(len(r.times["edit"]) for r in recs) - sum(v for k, v in errors.items() if k.startswith("edit"))
    acked_tags = sum(len(r.tags) for r in recs)
    listed = ", ".join(str(n) for n in checks.listed.values())
    print(
        f"acknowledged: {acked_notes:,} notes, {acked_edits:,} edits, {acked_tags} tags on the shared note;"
        f" listed by each server: {listed}"
    )
    print(
        f"checks (both servers): {checks.missing} missing, {checks.stale} stale texts, {checks.lost_tags} lost tags,"
        f" {checks.duplicates} duplicates; {checks.unacknowledged} unacknowledged notes"
    )
    if crashed or tracebacks:
        print(f"servers: {len(crashed)} exited early, {tracebacks} tracebacks in their logs")
    ok = not checks.failed() and not errors and not crashed and not tracebacks
    p50 = statistics.median(every) * 1000
    print(
        f"{'OK' if ok else 'FAILED'}: {total:,} ops at {total / wall:,.0f} ops/s, p50 {p50:.1f}"
        f" ms, p95 {pct(every, 95) * 1000:.1f} ms; {sum(errors.values())} errors; {checks.missing} missing,"
        f" {checks.stale} stale, {checks.lost_tags} lost tags, {checks.duplicates} duplicates"
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4, help="client threads per server (default 4)")
    ap.add_argument("--ops", type=int, default=1000, help="operations per client (default 1,000)")
    ap.add_argument(
        "--mix",
        type=float,
        nargs=3,
        default=(0.4, 0.3, 0.3),
        metavar=("ADD", "EDIT", "SEARCH"),
        help="weights of adds, edits and searches (default 0.4 0.3 0.3; the 19 tags come on top)",
    )
    ap.add_argument("--write-rate", type=float, default=100_000, help="the servers' writes/s per token")
    ap.add_argument("--database", metavar="URL", help="an existing database to use (default: a new one)")
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args(argv)
    if args.clients < 1 or args.ops < 1:
        ap.error("--clients and --ops must be at least 1")
    logs = Path(tempfile.mkdtemp(prefix="notewell-bench-servers-"))
    server = None
    url = args.database
    try:
        if url is None:
            server = bench_pg.Server()
            url = server.database()
        return bench(url, args, logs)
    finally:
        if server is not None:
            if url is not None:
                import psycopg

                with psycopg.connect(server.url, autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]} WITH (FORCE)")
            server.close()
        shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
