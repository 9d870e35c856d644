#!/usr/bin/env python3
"""Choose the semantic-feedback and fusion constants across independent sets, never one.

Builds each tuning set once — ``benchmarks/eval`` (every query), the ``tune`` split of
``benchmarks/eval2``, and LoCoMo's first five conversations (session notes; with
``--turns`` also turn notes) — and never loads the held-out parts (eval2's ``test`` split,
LoCoMo conversations 6-10). Each query's keyword list (with the loose hits' coverage) is
searched once, its semantic list once per feedback weight; every fusion setting on the grid
is then fused from those lists exactly as the store fuses them (``fusion.fuse_hybrid``).

For each setting it prints R@5 per set (semantic/hybrid) and the worst margin of hybrid over
keyword across every query kind and LoCoMo category of every set (the rule: hybrid never
below keyword).

Usage:
    python benchmarks/tune_search.py
    python benchmarks/tune_search.py --turns --fb-weight 0,0.5 --power 1,2 --semantic 0.25,0.35
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_search  # noqa: E402
import locomo  # noqa: E402

from notewell.backends.sqlite.keyword import keyword_search  # noqa: E402
from notewell.backends.sqlite.semantic import semantic_search  # noqa: E402
from notewell.search import fusion, passages  # noqa: E402
from notewell.search.filters import Filters  # noqa: E402
from notewell.search.fusion import fuse_hybrid, hybrid_pool  # noqa: E402

LOCOMO_TUNE = 5  # conversations 1-5 tune; 6-10 are held out
LIMIT = 10


@dataclass
class Query:
    store: Any
    text: str
    filters: dict
    relevant: set[str]
    kind: str
    key_of: dict[str, str]
    keyword: list = field(default_factory=list)
    partial: dict[str, float] = field(default_factory=dict)
    semantic: dict[float, list] = field(default_factory=dict)


def eval_queries(built: eval_search.Built, split: str) -> list[Query]:
    return [
        Query(built.store, q["query"], dict(q.get("filters") or {}), set(q["relevant"]), q["kind"], built.by_id)
        for q in built.queries
        if split == "all" or q["split"] == split
    ]


def locomo_queries(built: list[locomo.Built]) -> list[Query]:
    return [
        Query(b.store, q.text, {}, b.relevant(q), f"cat{q.category}", b.unit_of) for b in built for q in b.questions
    ]


def _filters(q: Query) -> Filters:
    return Filters.from_kwargs(dict(q.filters))  # no viewer, and no private project in these sets


def search_lists(queries: list[Query], weights: list[float]) -> None:
    """Each query's keyword pool and, per feedback weight, its semantic pool."""
    pool = hybrid_pool(LIMIT)
    for q in queries:
        f = _filters(q)
        try:
            q.keyword = keyword_search(q.store.backend.index, q.text, limit=pool, filters=f, partial=q.partial)
        except Exception:  # noqa: BLE001 - a query without words: no keyword list
            q.keyword = []
    embedder_of = {}
    for w in weights:
        passages.FEEDBACK_WEIGHT = w
        for q in queries:
            if id(q.store) not in embedder_of:
                embedder_of[id(q.store)] = q.store.backend.embedders.get()
            q.semantic[w] = semantic_search(
                q.store.backend.index,
                embedder_of[id(q.store)],
                q.store.backend.vectors,
                q.text,
                limit=pool,
                filters=_filters(q),
                feedback=[c.id for c in q.keyword],
            )


def r5(q: Query, cards: list) -> float:
    keys = [q.key_of[c.id] for c in cards[:5]]
    return len(set(keys) & q.relevant) / len(q.relevant) if q.relevant else 0.0


def by_kind(queries: list[Query], score) -> dict[str, float]:  # noqa: ANN001
    got: dict[str, list[float]] = defaultdict(list)
    for q in queries:
        s = score(q)
        got[q.kind].append(s)
        got["ALL"].append(s)
    return {k: sum(v) / len(v) for k, v in got.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--turns", action="store_true", help="also LoCoMo turn notes (conversations 1-5)")
    ap.add_argument("--fb-weight", default="0,0.25,0.5,0.75,1.0")
    ap.add_argument("--power", default="0.5,1,1.5,2")
    ap.add_argument("--semantic", default="0.25,0.3,0.35,0.4,0.5", help="HYBRID_SEMANTIC values")
    ap.add_argument("--save", type=Path, help="also pickle each query's lists here, to try other fusions offline")
    args = ap.parse_args()
    fb_weights = [float(x) for x in args.fb_weight.split(",")]
    grid = {
        "power": [float(x) for x in args.power.split(",")],
        "semantic": [float(x) for x in args.semantic.split(",")],
    }
    embedder = eval_search.choose_embedder(args.embedder)
    with tempfile.TemporaryDirectory(prefix="nw-tune-") as tmp:
        started = time.perf_counter()
        sets: dict[str, list[Query]] = {"eval": eval_queries(eval_search.build("eval", embedder, Path(tmp)), "all")}
        sets["eval2:tune"] = eval_queries(eval_search.build("eval2", embedder, Path(tmp)), "tune")
        conversations = locomo.load(locomo.DEFAULT_DATA)[:LOCOMO_TUNE]
        sets["locomo-session"] = locomo_queries(locomo.build(conversations, "session", embedder, Path(tmp)))
        if args.turns:
            sets["locomo-turn"] = locomo_queries(locomo.build(conversations, "turn", embedder, Path(tmp)))
        built_s = time.perf_counter() - started
        started = time.perf_counter()
        for queries in sets.values():
            search_lists(queries, fb_weights)
        print(
            f"built in {built_s:.0f} s, searched in {time.perf_counter() - started:.0f}"
            " s: " + ", ".join(f"{n} ({len(q)} queries)" for n, q in sets.items())
        )
        if args.save:
            with args.save.open("wb") as fh:
                pickle.dump({n: [replace(q, store=None) for q in qs] for n, qs in sets.items()}, fh)
        keyword = {n: by_kind(qs, lambda q: r5(q, q.keyword)) for n, qs in sets.items()}
        print("keyword R@5: " + "  ".join(f"{n} {s['ALL']:.3f}" for n, s in keyword.items()))
        names = ["fb_weight", *grid]
        print("  ".join(f"{n:>10s}" for n in names) + "  " + "  ".join(f"{n:>16s}" for n in sets) + "  worst margin")
        for w in fb_weights:
            sem = {n: by_kind(qs, lambda q, w=w: r5(q, q.semantic[w])) for n, qs in sets.items()}
            for values in itertools.product(*grid.values()):
                setting = dict(zip(grid, values, strict=True))
                fusion.HYBRID_COVERAGE_POWER = setting["power"]
                fusion.HYBRID_SEMANTIC = setting["semantic"]
                hyb = {
                    n: by_kind(
                        qs,
                        lambda q, w=w: r5(
                            q, fuse_hybrid({"keyword": q.keyword, "semantic": q.semantic[w]}, q.partial, LIMIT)
                        ),
                    )
                    for n, qs in sets.items()
                }
                worst = min((hyb[n][k] - keyword[n][k], f"{n}:{k}") for n in hyb for k in hyb[n] if k != "ALL")
                cells = "  ".join(f"     {sem[n]['ALL']:.3f}/{hyb[n]['ALL']:.3f}" for n in sets)
                print(
                    "  ".join(f"{v:10g}" for v in (w, *values)) + f"  {cells}  {worst[0]:+.3f} ({worst[1]})",
                    flush=True,
                )
        for qs in sets.values():
            for store in {id(q.store): q.store for q in qs}.values():
                store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
