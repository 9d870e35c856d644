#!/usr/bin/env python3
"""The same import and keyword-search benchmark on the embedded store and on PostgreSQL,
and two writer processes sharing one database.

It uses bench_store.py's notes (Zipf vocabulary, 1.6 KB, 5% with Chinese) and queries:

  1. bulk import          store.add_notes(texts)            notes/s, both stores
  2. keyword search       store.search_notes(q, limit=10)   p50/p95 ms, both stores
  3. single adds          store.add_note(text) x N          p50/p95 ms, both stores
  4. two writers          two processes adding and editing on one database at once:
                          ops/s, p95, and a check that every acknowledged write is there

The PostgreSQL server is NOTEWELL_TEST_DATABASE's, or one that scripts/pg-server starts.

    python benchmarks/bench_pg.py                  # 100,000 notes
    python benchmarks/bench_pg.py --notes 2000     # a smoke run
    python benchmarks/bench_pg.py --slowest 20     # and each store's 20 slowest searches
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import notewell

HERE = Path(__file__).resolve().parent


def _bench_store():
    spec = importlib.util.spec_from_file_location("bench_store", HERE / "bench_store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A PostgreSQL server for the run: the one in the environment variable *given* (by
    default NOTEWELL_TEST_DATABASE), or our own, started by ``scripts/pg-server VERB``
    (``start-vector``: one with pgvector)."""

    def __init__(self, given: str = "NOTEWELL_TEST_DATABASE", verb: str = "start") -> None:
        self.base: Path | None = None
        url = os.environ.get(given)
        if not url:
            self.base = Path(tempfile.mkdtemp(prefix="notewell-pgbench-"))
            self.base.chmod(0o755)  # the server may run as 'postgres'
            out = subprocess.run(
                [str(HERE.parent / "scripts" / "pg-server"), verb, str(self.base / "data"), str(free_port())],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                raise SystemExit(f"cannot start PostgreSQL: {out.stderr.strip()}")
            url = out.stdout.strip()
        self.url = url

    def database(self) -> str:
        import psycopg

        name = "nwbench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url.rpartition("/")[0] + "/" + name

    def size(self, url: str) -> int:
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]

    def close(self) -> None:
        if self.base is not None:
            subprocess.run([str(HERE.parent / "scripts" / "pg-server"), "stop", str(self.base / "data")])
            shutil.rmtree(self.base, ignore_errors=True)


def measure(store, texts: list[str], queries: list[str], adds: int, extra: str) -> dict:
    t = time.perf_counter()
    for i in range(0, len(texts), 5000):
        store.add_notes(texts[i : i + 5000], author="bench")
    import_s = time.perf_counter() - t
    for q in queries[:5]:
        store.search_notes(q, limit=10)  # warm the caches
    times = []
    for q in queries:
        t = time.perf_counter()
        store.search_notes(q, limit=10)
        times.append(time.perf_counter() - t)
    add_times = []
    for i in range(adds):
        t = time.perf_counter()
        store.add_note(f"# single add {i}\n\n{extra} {i}\n", author="bench")
        add_times.append(time.perf_counter() - t)
    return {
        "import_rate": len(texts) / import_s,
        "search_p50": statistics.median(times) * 1000,
        "search_p95": pct(times, 95) * 1000,
        "add_p50": statistics.median(add_times) * 1000,
        "add_p95": pct(add_times, 95) * 1000,
        "slowest": sorted(zip(times, queries, strict=True), reverse=True),
    }


WRITER = """
import json, sys, time, notewell
url, tag, ops = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = notewell.open(url, pool_size=2)
shared = sys.argv[4]
acked, times = [], []
for i in range(ops):
    t = time.perf_counter()
    if i % 4 == 3 and i < 40:
        store.add_tag(shared, f"{tag}{i}")
    elif i % 4 == 3:
        store.edit_note(acked[-1], f"# {tag} {i} edited\\n")
    else:
        acked.append(store.add_note(f"# {tag} {i}\\n\\nwritten by {tag}\\n", author=tag).id)
    times.append(time.perf_counter() - t)
store.close()
print(json.dumps({"acked": acked, "times": times}))
"""


def two_writers(url: str, ops: int) -> dict:
    with notewell.open(url) as store:
        shared = store.add_note("# shared\n\nboth writers tag this note\n").id
    env = {**os.environ, "PYTHONPATH": str(Path(notewell.__file__).parent.parent)}
    t = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, tag, str(ops), shared], stdout=subprocess.PIPE, text=True, env=env
        )
        for tag in ("w0", "w1")
    ]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.perf_counter() - t
    times = [x for o in outs for x in o["times"]]
    with notewell.open(url) as store:
        missing = [nid for o in outs for nid in o["acked"] if not _exists(store, nid)]
        tags = store.get_note(shared).tags
    wanted = {f"{tag}{i}" for tag in ("w0", "w1") for i in range(ops) if i % 4 == 3 and i < 40}
    return {
        "ops": 2 * ops,
        "ops_per_s": 2 * ops / wall,
        "p50": statistics.median(times) * 1000,
        "p95": pct(times, 95) * 1000,
        "missing": len(missing),
        "tags_lost": len(wanted - set(tags)),
    }


def _exists(store, nid: str) -> bool:
    try:
        store.get_note(nid)
        return True
    except notewell.NotFoundError:
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--adds", type=int, default=200)
    ap.add_argument("--writer-ops", type=int, default=1000, help="operations per writer process")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--slowest", type=int, default=10, help="list this many slowest searches of each store")
    args = ap.parse_args(argv)
    bench = _bench_store()
    corpus = bench.Corpus(args.seed)
    log(f"generating {args.notes:,} notes")
    texts = [corpus.note(i) for i in range(args.notes)]
    queries = [q for _, q, f in corpus.queries(args.queries * 2, args.seed + 1) if not f][: args.queries]
    server = Server()
    work = Path(tempfile.mkdtemp(prefix="notewell-bench-"))
    try:
        log("embedded store")
        with notewell.open(work / "notes", watch=True, embedder=None) as store:
            sqlite_fig = measure(store, texts, queries, args.adds, "sqlite")
        sqlite_disk = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        log("PostgreSQL")
        url = server.database()
        with notewell.open(url) as store:
            pg_fig = measure(store, texts, queries, args.adds, "postgres")
        pg_disk = server.size(url)
        log("two writers on one database")
        writers = two_writers(server.database(), args.writer_ops)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        server.close()
    print(
        f"notewell on SQLite and on PostgreSQL: {args.notes:,} notes, {args.queries} keyword queries,"
        f" {args.adds} single adds"
    )
    print("store      | import notes/s | search p50 / p95 ms | single add p50 / p95 ms | on disk MB")
    for name, fig, disk in (("sqlite", sqlite_fig, sqlite_disk), ("postgres", pg_fig, pg_disk)):
        print(
            f"{name:<10} | {fig['import_rate']:>14,.0f} | {fig['search_p50']:>8.1f} / {fig['search_p95']:<8.1f}"
            f" | {fig['add_p50']:>10.1f} / {fig['add_p95']:<10.1f} | {disk / 2**20:,.0f}"
        )
    for name, fig in (("sqlite", sqlite_fig), ("postgres", pg_fig)):
        if args.slowest > 0:
            print(
                f"slowest searches on {name}: "
                + ", ".join(f"{q!r} {t * 1000:.1f} ms" for t, q in fig["slowest"][: args.slowest])
            )
    print(
        f"two writer processes on one database: {writers['ops']:,} ops, {writers['ops_per_s']:,.0f} ops/s,"
        f" p50 {writers['p50']:.1f} ms, p95 {writers['p95']:.1f} ms;"
        f" acknowledged notes missing: {writers['missing']}; tags lost on the shared note: {writers['tags_lost']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
