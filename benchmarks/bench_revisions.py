"""What searching older revisions costs: keyword search with and without the older pass, side
by side on one store, interleaved (A, B, A, B...), and the cost of an edit that keeps one.

A store of N generated notes, a share of them edited (each edit replaces a word, so the old
word lives only in revision 1). Three kinds of query:

- ``current``: words current texts hold in more notes than the limit (the older pass never
  runs: the cost is the check alone);
- ``short``: a word current texts hold in a few notes, fewer than the limit (the older pass
  runs and finds nothing new);
- ``old``: a word only older revisions hold (the older pass finds the notes).

For each, p50/p95 of the search plan with the older pass (``B``) against the current-text
keyword engine alone (``A``), both in one read of the index, and the ratio of the medians. The
p50 of an edit (which now also indexes the superseded text) is printed beside an add's for scale.

    python benchmarks/bench_revisions.py [--notes 5000] [--edited 0.2] [--rounds 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import notewell
from notewell.search.filters import Filters
from notewell.search.plan import run_search
from notewell.search.request import SearchRequest

WORDS = [f"w{i:04d}" for i in range(3000)]


def _text(rng: random.Random, i: int, extra: str = "") -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(120))
    return f"# note {i}\n\n{words} {extra}\n"


def _p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--edited", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    rng = random.Random(7)
    root = Path(tempfile.mkdtemp(prefix="nw-revisions-")) / "notes"
    with notewell.open(root, watch=False, embedder=None) as store:
        texts = [_text(rng, i, f"rare{i % 1000} oldonly{i}") for i in range(args.notes)]
        t = time.perf_counter()
        ids = [n.id for n in store.add_notes(texts)]
        print(f"store: {args.notes} notes added in {time.perf_counter() - t:.1f} s")
        edited = rng.sample(range(args.notes), int(args.notes * args.edited))
        edit_times = []
        for i in edited:
            t = time.perf_counter()
            store.edit_note(ids[i], texts[i].replace(f"oldonly{i}", f"newword{i}"))
            edit_times.append(time.perf_counter() - t)
        add_times = []
        for i in range(50):
            t = time.perf_counter()
            store.add_note(_text(rng, args.notes + i))
            add_times.append(time.perf_counter() - t)
        print(
            f"edits: {len(edited)} (each keeps its old text searchable) p50 {_p(edit_times, 0.5):.2f} ms;"
            f" adds p50 {_p(add_times, 0.5):.2f} ms"
        )
        kinds = {
            "current": lambda: rng.choice(WORDS),
            "short": lambda: f"rare{rng.randrange(1000)}",
            "old": lambda: f"oldonly{rng.choice(edited)}",
        }
        print(f"\n{'query':8} {'A p50':>8} {'A p95':>8} {'B p50':>8} {'B p95':>8} {'B/A p50':>8}")
        print("(ms; A: current texts only, B: the plan, older revisions after them)")
        for kind, make in kinds.items():
            a_times: list[float] = []
            b_times: list[float] = []
            found_old = 0
            for n in range(args.rounds):
                q = make()
                request = SearchRequest.make(q, mode="keyword", limit=10, wait=False, filters={})
                with store.backend.searching(request) as (_records, engines):
                    # Alternating which goes first, so neither always meets a warm cache.
                    for which in "AB" if n % 2 else "BA":
                        t = time.perf_counter()
                        if which == "A":
                            engines.keyword(q, 10, Filters())
                            a_times.append(time.perf_counter() - t)
                        else:
                            cards = run_search(request, Filters(), engines)
                            b_times.append(time.perf_counter() - t)
                found_old += sum(c.matched_revision is not None for c in cards)
            ratio = statistics.median(b_times) / statistics.median(a_times)
            print(
                f"{kind:8} {_p(a_times, 0.5):8.2f} {_p(a_times, 0.95):8.2f} {_p(b_times, 0.5):8.2f}"
                f" {_p(b_times, 0.95):8.2f} {ratio:8.2f}   older cards per query {found_old / args.rounds:.2f}"
            )


if __name__ == "__main__":
    main()
