#!/usr/bin/env python3
"""Long conversations embedded on PostgreSQL: this code against the code before (--old-src),
alternated in subprocesses (old, new, old, new...), each run on a database of its own on one
server (NOTEWELL_TEST_DATABASE's, or one scripts/pg-server starts). It never asserts.

  1. regrow: one generated conversation of --turns exchanges (about 60 passages at the
     default 19) is embedded with store.embed_pending(), grows by --grow exchanges (edit_note,
     as importing the grown conversation does) and is embedded again: the passages the model
     was given each time, the seconds, and the re-embedding's old / new ratio round by round.
  2. claims (--claims N): N such conversations embedded at once: the model's calls, the
     largest (in passages and seconds: what a claim's lease must outlast) and the total time.

    git archive <commit> | tar -x -C /tmp/old     # the code before, as a tree
    python benchmarks/bench_pg_long_notes.py --old-src /tmp/old --rounds 4
    python benchmarks/bench_pg_long_notes.py --old-src /tmp/old --rounds 2 --claims 32
    python benchmarks/bench_pg_long_notes.py --embedder hash --rounds 1 --claims 4   # a smoke run
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# One run, in a subprocess whose PYTHONPATH is the code measured: only the public API, which
# both codes share.
RUN = r"""
import json, random, sys, time
import notewell
from notewell.search.embedders import HashEmbedder, default_embedder

url, turns, grow, which, claims = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
model = HashEmbedder() if which == "hash" else default_embedder()
model.embed_documents(["warm the model up"])  # its weights load outside the timing

class Timed:
    def __init__(self, inner):
        self.inner, self.model_id, self.dim, self.calls = inner, inner.model_id, inner.dim, []
    def embed_documents(self, texts):
        began = time.perf_counter()
        made = self.inner.embed_documents(texts)
        self.calls.append((len(texts), time.perf_counter() - began))
        return made
    def embed_query(self, text):
        return self.inner.embed_query(text)

rng = random.Random(39)
words = ("cache lease server claim passage vector model query index note turn retry budget queue worker"
         " commit rollback latency shard replica import export schema migration upgrade token batch").split()

def exchange(i):
    ask = " ".join(rng.choice(words) for _ in range(rng.randint(20, 60)))
    answer = "\n\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(60, 150))) for _ in range(3))
    return f"## User {i}\n\n{ask}?\n\n## Assistant {i}\n\n{answer}"

def embed(store, timed):
    timed.calls.clear()
    began = time.perf_counter()
    store.embed_pending()
    return time.perf_counter() - began, sum(n for n, _s in timed.calls)

timed = Timed(model)
out = {}
with notewell.open(url, embedder=timed) as store:
    if claims:
        texts = ["\n\n".join(exchange(i) for i in range(turns)) for _n in range(claims)]
        store.add_notes([f"# Conversation {n}\n\n{text}" for n, text in enumerate(texts)])
        out["s"], out["passages"] = embed(store, timed)
        out["calls"] = len(timed.calls)
        out["largest_call"], out["largest_call_s"] = max(n for n, _s in timed.calls), max(s for _n, s in timed.calls)
    else:
        body = "\n\n".join(exchange(i) for i in range(turns))
        note = store.add_note(f"# Conversation\n\n{body}")
        out["first_s"], out["first_given"] = embed(store, timed)
        grown = body + "\n\n" + "\n\n".join(exchange(i) for i in range(turns, turns + grow))
        store.edit_note(note.id, f"# Conversation\n\n{grown}")
        out["again_s"], out["again_given"] = embed(store, timed)
print(json.dumps(out))
"""


def _bench_pg():
    spec = importlib.util.spec_from_file_location("bench_pg", HERE / "bench_pg.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _report(runs: dict[str, list[dict]], claims: int) -> None:
    for name, got in runs.items():
        if claims:
            totals = ", ".join(f"{r['s']:.1f}" for r in got)
            largest = ", ".join(f"{r['largest_call_s']:.1f}" for r in got)
            print(
                f"{name}: {got[0]['passages']} passages of {claims} conversations in {totals} s;"
                f" {got[0]['calls']} call(s) of the model, the largest {got[0]['largest_call']} passages in {largest} s"
            )
        else:
            first, again = (statistics.median(r[k] for r in got) for k in ("first_s", "again_s"))
            print(
                f"{name}: embedded first {got[0]['first_given']} passages in {first:.2f} s,"
                f" again {got[0]['again_given']} in {again:.2f} s (medians)"
            )
    if "old" in runs:
        key = "s" if claims else "again_s"
        ratios = [o[key] / n[key] for o, n in zip(runs["old"], runs["new"], strict=True)]
        print(f"{key}, old / new, round by round: " + ", ".join(f"{r:.2f}x" for r in ratios))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-src", type=Path, default=None, help="a tree of the code before (git archive)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--turns", type=int, default=19, help="exchanges in a conversation (19: ~60 passages)")
    ap.add_argument("--grow", type=int, default=3, help="exchanges appended before embedding again")
    ap.add_argument("--claims", type=int, default=0, help="embed this many conversations at once instead")
    ap.add_argument("--embedder", choices=["default", "hash"], default="default")
    args = ap.parse_args()
    codes = {"new": str(HERE.parent / "src")}
    if args.old_src is not None:
        codes = {"old": str((args.old_src / "src").resolve()), **codes}
    server = _bench_pg().Server()
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    try:
        for round_ in range(args.rounds):
            for name, src in codes.items():
                argv = [RUN, server.database(), str(args.turns), str(args.grow), args.embedder, str(args.claims)]
                env = {**os.environ, "PYTHONPATH": src}
                done = subprocess.run([sys.executable, "-c", *argv], env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"{name} failed:\n{done.stderr}")
                runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(f"round {round_ + 1} {name}: {json.dumps(runs[name][-1])}", flush=True)
    finally:
        server.close()
    _report(runs, args.claims)


if __name__ == "__main__":
    main()
