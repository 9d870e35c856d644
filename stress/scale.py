#!/usr/bin/env python3
"""How notewell grows: 10k -> 100k -> 1M notes in one store, with the figures at each size.

At each size the store is grown (bulk import, timed), its passages embedded, and then a fresh
``notewell serve`` process is started on it and queried over HTTP on 127.0.0.1: keyword and
semantic search p50/p95 as a client sees them, and the server's resident memory (VmRSS and its
peak VmHWM). Also the index rebuild time (``reindex()``) and the size on disk (notes, index,
vectors). The notes are bench_store.py's (Zipf vocabulary, 1.6 KB, 5% with Chinese).

Semantic search uses the word-hash embedder (256 dimensions) so that a million notes can be
embedded here in minutes: the search path (vectors, matrix, approximate index, rescoring) is
the real one; only the model differs (the default model embeds ~19 notes/s on this machine).
At 1M passages the server uses the approximate index (NOTEWELL_ANN=on).

    python stress/scale.py                              # 10k, 100k, 1M in /tmp/nw-scale
    python stress/scale.py --sizes 2000,5000 --queries 50   # a smoke run
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import notewell
from notewell.search.embedders import HashEmbedder

HERE = Path(__file__).resolve().parent


def _bench_store():
    spec = importlib.util.spec_from_file_location("bench_store", HERE.parent / "benchmarks" / "bench_store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_memory(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out


class ServerRun:
    """A ``notewell serve`` subprocess on the store."""

    def __init__(self, root: Path, ann: bool, embed: bool = True) -> None:
        self.port = free_port()
        env = {**os.environ, "NOTEWELL_EMBEDDER": "hash", "NOTEWELL_ANN": "on" if ann else "off"}
        t = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "notewell", "serve", "--store", str(root), "--port", str(self.port)]
            + ([] if embed else ["--no-embed"]),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 600
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server exited: {self.proc.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        self.start_s = time.perf_counter() - t

    def search(self, q: str, mode: str, timeout: float = 120) -> tuple[float, int]:
        url = f"{self.url}/api/notes/search?" + urllib.parse.urlencode({"q": q, "mode": mode, "limit": 10})
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = json.loads(r.read())
        return time.perf_counter() - t, len(body.get("results", body) if isinstance(body, dict) else body)

    def close(self) -> dict[str, int]:
        memory = proc_memory(self.proc.pid)
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return memory


def serve_and_query(root: Path, queries: list[str], size: int, modes: tuple[str, ...], ann: bool | None = None) -> dict:
    """Start a server on *root*, time searches in *modes* over HTTP, read its memory. The
    approximate index is on from 500,000 notes unless *ann* says otherwise."""
    server = ServerRun(root, ann=size >= 500_000 if ann is None else ann, embed="semantic" in modes)
    figures = {}
    for mode in modes:
        t = time.perf_counter()
        server.search(queries[0], mode, timeout=7200)  # the first query may load the vectors or build the graph
        first = time.perf_counter() - t
        times = [server.search(q, mode)[0] for q in queries]
        figures[mode] = (statistics.median(times) * 1000, pct(times, 95) * 1000, first)
    memory = server.close()
    return {"server_start_s": server.start_s, "figures": figures, "memory": memory}


def measure_only(root: Path, args: argparse.Namespace) -> int:
    bench = _bench_store()
    corpus = bench.Corpus(args.seed)
    queries = [q for _, q, f in corpus.queries(args.queries * 2, args.seed + 1) if not f][: args.queries]
    size = sum(1 for _ in root.glob("*.md"))
    modes = ("keyword",) if args.no_semantic else ("keyword", "semantic")
    if not args.no_semantic:
        with notewell.open(root, watch=False, embedder=HashEmbedder()) as store:
            t = time.perf_counter()
            while store.pending_embeddings():
                store.embed_pending(limit=20_000)
            log(f"{size:,} notes; embedded the rest in {time.perf_counter() - t:.0f} s")
    got = serve_and_query(root, queries, size, modes, ann={"on": True, "off": False}.get(args.ann))
    notes_mb = sum(p.stat().st_blocks * 512 for p in root.glob("*.md")) / 2**20
    index_mb = du(root / ".notewell") / 2**20
    kw, sem = got["figures"]["keyword"], got["figures"].get("semantic")
    print(
        f"notewell scale, measured on an existing store of {size:,} notes ({args.queries} queries per mode,"
        f" approximate index {args.ann})"
    )
    print(f"server start {got['server_start_s']:.1f} s")
    print(f"keyword  p50 {kw[0]:.1f} ms  p95 {kw[1]:.1f} ms  (first query {kw[2]:.1f} s)")
    if sem:
        print(f"semantic p50 {sem[0]:.1f} ms  p95 {sem[1]:.1f} ms  (first query, loading or building: {sem[2]:.1f} s)")
    mem = got["memory"]
    print(f"server RSS {mem.get('VmRSS', 0) / 2**20:.0f} MB, peak {mem.get('VmHWM', 0) / 2**20:.0f} MB")
    print(f"disk: notes {notes_mb:,.0f} MB, index and vectors {index_mb:,.0f} MB")
    if args.reindex:
        # Last: a rebuild starts the index afresh, so the vectors are made again after it.
        with notewell.open(root, watch=False, embedder=HashEmbedder()) as store:
            t = time.perf_counter()
            store.reindex()
            took = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"index rebuild (reindex) {took:.0f} s, {size / took:,.0f} notes/s; peak RSS {peak:.0f} MB")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--dir", default="/tmp/nw-scale")
    ap.add_argument("--queries", type=int, default=200, help="queries per mode and size")
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--no-rebuild-above", type=int, default=10**9, help="skip reindex() above this size")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--measure-only",
        action="store_true",
        help="no growing: measure the store already in --dir (its server, queries, memory and size)",
    )
    ap.add_argument("--no-semantic", action="store_true", help="with --measure-only: keyword search only")
    ap.add_argument(
        "--ann", choices=("auto", "on", "off"), default="auto", help="with --measure-only: the approximate index"
    )
    ap.add_argument(
        "--reindex", action="store_true", help="with --measure-only: then time an index rebuild (its vectors are lost)"
    )
    args = ap.parse_args(argv)
    if args.measure_only:
        return measure_only(Path(args.dir) / "store", args)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    work = Path(args.dir)
    if work.exists():
        shutil.rmtree(work)
    root = work / "store"
    bench = _bench_store()
    corpus = bench.Corpus(args.seed)
    queries = [q for _, q, f in corpus.queries(args.queries * 2, args.seed + 1) if not f][: args.queries]
    rows = []
    store = notewell.open(root, watch=False, embedder=HashEmbedder())
    have = 0
    import_s = embed_s = 0.0
    try:
        for size in sizes:
            t = time.perf_counter()
            while have < size:
                n = min(args.batch, size - have)
                store.add_notes([corpus.note(have + i) for i in range(n)], author="scale")
                have += n
                if have % 50_000 == 0:
                    log(f"  {have:,} notes, {have / (import_s + time.perf_counter() - t):,.0f}/s so far")
            step_import = time.perf_counter() - t
            import_s += step_import
            t = time.perf_counter()
            while store.pending_embeddings():
                store.embed_pending(limit=20_000)
            step_embed = time.perf_counter() - t
            embed_s += step_embed
            log(f"{size:,}: import {step_import:.0f} s, embed {step_embed:.0f} s")
            rebuild = None
            if size <= args.no_rebuild_above:
                t = time.perf_counter()
                store.reindex()
                rebuild = time.perf_counter() - t
                log(f"{size:,}: reindex {rebuild:.0f} s")
            store.close()
            disk = {
                "notes": sum(p.stat().st_blocks * 512 for p in root.glob("*.md")),
                "index": du(root / ".notewell"),
            }
            got = serve_and_query(root, queries, size, ("keyword", "semantic"))
            figures, memory = got["figures"], got["memory"]
            row = {
                "notes": size,
                "import_rate": (size - (rows[-1]["notes"] if rows else 0)) / step_import,
                "embed_rate": (size - (rows[-1]["notes"] if rows else 0)) / max(step_embed, 1e-9),
                "rebuild_s": rebuild,
                "server_start_s": got["server_start_s"],
                "keyword_ms": figures["keyword"],
                "semantic_ms": figures["semantic"],
                "rss_mb": memory.get("VmRSS", 0) / 2**20,
                "hwm_mb": memory.get("VmHWM", 0) / 2**20,
                "disk_notes_mb": disk["notes"] / 2**20,
                "disk_index_mb": disk["index"] / 2**20,
            }
            rows.append(row)
            log(json.dumps(row))
            store = notewell.open(root, watch=False, embedder=HashEmbedder())
    finally:
        store.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"notewell scale run: sizes {sizes}, {args.queries} queries per mode (HTTP on 127.0.0.1)")
    head = (
        "notes | import notes/s | reindex s | keyword p50/p95 ms | semantic p50/p95 ms | server RSS / peak MB"
        " | notes MB | index+vectors MB"
    )
    print(head)
    for r in rows:
        rebuild = f"{r['rebuild_s']:.0f}" if r["rebuild_s"] is not None else "-"
        print(
            f"{r['notes']:,} | {r['import_rate']:,.0f} | {rebuild}"
            f" | {r['keyword_ms'][0]:.1f} / {r['keyword_ms'][1]:.1f}"
            f" | {r['semantic_ms'][0]:.1f} / {r['semantic_ms'][1]:.1f} | {r['rss_mb']:.0f} / {r['hwm_mb']:.0f}"
            f" | {r['disk_notes_mb']:.0f} | {r['disk_index_mb']:.0f}"
        )
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        grow = b["notes"] / a["notes"]
        print(
            f"growth x{grow:.0f} in notes: keyword p95 x{b['keyword_ms'][1] / a['keyword_ms'][1]:.1f},"
            f" semantic p95 x{b['semantic_ms'][1] / a['semantic_ms'][1]:.1f},"
            f" index size x{b['disk_index_mb'] / a['disk_index_mb']:.1f}, peak RSS x{b['hwm_mb'] / a['hwm_mb']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
