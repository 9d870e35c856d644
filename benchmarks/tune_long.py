#!/usr/bin/env python3
"""Choose the ranking constants across every tuning set at once, long notes and short.

Builds each tuning part once and never loads a held-out one: ``benchmarks/eval`` (every
query), eval2's ``tune`` split, LoCoMo's conversations 1-5 as session, turn and window notes,
and the ``tune`` split of every long-note set in ``benchmarks/eval3`` (eval_long.py) at each
of its granularities. Then, for every setting of the constants that change the engines' lists
(``--grid``: keyword passages, semantic feedback), each query's keyword and semantic pools are
searched once and every fusion setting (``--semantic``, ``--power``) fused from them exactly as
the store fuses them (``fusion.fuse_hybrid``).

Each line gives one setting: the mean R@5 of keyword / semantic / hybrid over the sets, then
the worst margin of hybrid over the best of keyword, semantic and the word-count baseline on any
query kind of any set (the rule: hybrid is never below any of them), and LoCoMo windows' session
nDCG@5 by the published protocol. ``--detail`` prints every set's figures for each setting.

Usage:
    python benchmarks/tune_long.py
    python benchmarks/tune_long.py --grid passage_rank.PASSAGE_SHARE=0,0.5,1 --semantic 0.25,0.5
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_long  # noqa: E402
import eval_search  # noqa: E402
import locomo  # noqa: E402

import notewell.search  # noqa: E402
from notewell import InvalidQueryError  # noqa: E402
from notewell.backends.sqlite.keyword import keyword_search  # noqa: E402
from notewell.backends.sqlite.semantic import semantic_search  # noqa: E402
from notewell.search import fusion  # noqa: E402
from notewell.search.filters import Filters  # noqa: E402
from notewell.search.fusion import fuse_hybrid, hybrid_pool  # noqa: E402

LIMIT = 10
# Sets no constant is chosen on, their tune split included: data notewell was never tuned on.
HELD_OUT_SETS = frozenset({"research"})


@dataclass
class Query:
    store: Any
    text: str
    filters: dict
    kind: str
    key_of: dict[str, str]
    judge: Callable[[list[str]], float]  # R@5 of a ranking of unit keys
    words: float = 0.0  # the word-count baseline's R@5
    ndcg: Callable[[list[str]], float] | None = None  # LoCoMo windows: the published session nDCG@5
    keyword: list = field(default_factory=list)
    partial: dict[str, float] = field(default_factory=dict)
    semantic: list = field(default_factory=list)

    def keys(self, cards: list) -> list[str]:
        return [self.key_of[c.id] for c in cards]


def _eval_queries(built: eval_search.Built, split: str) -> list[Query]:
    out = []
    for q in built.queries:
        if split != "all" and q["split"] != split:
            continue
        relevant = set(q["relevant"])
        out.append(
            Query(
                built.store,
                q["query"],
                dict(q.get("filters") or {}),
                q["kind"],
                built.by_id,
                lambda ranked, relevant=relevant: len(set(ranked[:5]) & relevant) / len(relevant),
            )
        )
    return out


def _locomo_queries(built: list[locomo.Built]) -> list[Query]:
    out = []
    for b in built:
        for q in b.questions:
            query = Query(
                b.store,
                q.text,
                {},
                f"cat{q.category}",
                b.unit_of,
                lambda r, b=b, q=q: locomo.judge(b, q, r, "notes")[0],
            )
            query.words = query.judge(locomo.grep_search(b, q.text))
            if b.granularity == "window":
                query.ndcg = lambda r, b=b, q=q: locomo.judge(b, q, r, "engram")[2]
            out.append(query)
    return out


def _long_queries(built: eval_long.Built) -> list[Query]:
    out = []
    for q in built.evalset.queries:
        relevant = built.relevant(q)
        query = Query(
            built.store,
            q.text,
            {},
            q.kind,
            built.key_of,
            lambda ranked, relevant=relevant: eval_long.metrics(ranked, relevant)[0],
        )
        query.words = query.judge(eval_long.words_search(built, q.text))
        out.append(query)
    return out


def build_sets(embedder: Any, root: Path, long_sets: list[Path]) -> dict[str, list[Query]]:
    sets: dict[str, list[Query]] = {"eval": _eval_queries(eval_search.build("eval", embedder, root), "all")}
    sets["eval2:tune"] = _eval_queries(eval_search.build("eval2", embedder, root), "tune")
    conversations = locomo.load(locomo.DEFAULT_DATA)[: locomo.TUNING_CONVERSATIONS]
    for granularity in ("session", "turn", "window"):
        sets[f"locomo-{granularity}"] = _locomo_queries(locomo.build(conversations, granularity, embedder, root))
    for folder in long_sets:
        evalset = eval_long.load(folder, split="tune")  # the test queries are never loaded
        for granularity in eval_long.GRANULARITIES:
            built = eval_long.build(evalset, granularity, embedder, root / f"{folder.name}-{granularity}")
            sets[f"{folder.name}-{granularity}"] = _long_queries(built)
    return sets


def _filters(q: Query) -> Filters:
    return Filters.from_kwargs(dict(q.filters))  # no viewer, and no private project in these sets


def search_lists(queries: list[Query]) -> None:
    """Each query's keyword pool (with the loose hits' coverage) and semantic pool."""
    pool = hybrid_pool(LIMIT)
    for q in queries:
        q.partial = {}
        try:
            q.keyword = keyword_search(
                q.store.backend.index, q.text, limit=pool, filters=_filters(q), partial=q.partial
            )
        except InvalidQueryError:
            q.keyword = []
        backend = q.store.backend
        try:
            q.semantic = semantic_search(
                backend.index,
                backend.embedders.get(),
                backend.vectors,
                q.text,
                limit=pool,
                filters=_filters(q),
                feedback=[c.id for c in q.keyword],
            )
        except InvalidQueryError:
            q.semantic = []


def by_kind(queries: list[Query], score: Callable[[Query], float]) -> dict[str, float]:
    got: dict[str, list[float]] = defaultdict(list)
    for q in queries:
        s = score(q)
        got[q.kind].append(s)
        got["ALL"].append(s)
    return {k: sum(v) / len(v) for k, v in got.items()}


def _parse_grid(specs: list[str]) -> dict[str, list[float]]:
    grid: dict[str, list[float]] = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        grid[name] = [float(v) for v in values.split(",")]
    return grid


def _set_constant(name: str, value: float) -> None:
    module, _, attr = name.rpartition(".")
    target = getattr(notewell.search, module)
    old = getattr(target, attr)
    setattr(target, attr, type(old)(value) if isinstance(old, bool | int) else value)


def pooled(sets: dict[str, list[Query]]) -> dict[str, list[Query]]:
    """The sets as the rule reads them: each long-note granularity pooled over the eval3 sets
    (a set holds 3-4 queries of a kind: one query would swing a kind by a quarter)."""
    out: dict[str, list[Query]] = {}
    for name, queries in sets.items():
        granularity = name.rpartition("-")[2]
        long_set = granularity in eval_long.GRANULARITIES and not name.startswith("locomo-")
        key = f"eval3-{granularity}" if long_set else name
        out.setdefault(key, []).extend(queries)
    return out


def close_sets(sets: dict[str, list[Query]]) -> None:
    """Close every store the sets' queries search (several queries share one)."""
    for qs in sets.values():
        for store in {id(q.store): q.store for q in qs}.values():
            store.close()


def tuning_long_sets(folder: Path) -> list[Path]:
    """The long-note sets in *folder* a constant may be chosen on (HELD_OUT_SETS left out)."""
    found = sorted(p for p in folder.iterdir() if (p / "queries.jsonl").exists()) if folder.is_dir() else []
    return [p for p in found if p.name not in HELD_OUT_SETS]


def report(
    sets: dict[str, list[Query]], setting: str, detail: bool, rank: Callable[[Query], list[str]] | None = None
) -> None:
    """One line for *setting*: hybrid as the store fuses it, or as *rank* orders each query's
    note ids (benchmarks/fusion_study.py)."""
    sets = pooled(sets)
    kw = {n: by_kind(qs, lambda q: q.judge(q.keys(q.keyword[:LIMIT]))) for n, qs in sets.items()}
    sem = {n: by_kind(qs, lambda q: q.judge(q.keys(q.semantic[:LIMIT]))) for n, qs in sets.items()}
    words = {n: by_kind(qs, lambda q: q.words) for n, qs in sets.items()}

    def fused(q: Query) -> list[str]:
        if rank is not None:
            return [q.key_of[i] for i in rank(q)]
        return q.keys(fuse_hybrid({"keyword": q.keyword, "semantic": q.semantic}, q.partial, LIMIT))

    hyb = {n: by_kind(qs, lambda q: q.judge(fused(q))) for n, qs in sets.items()}
    worst = min(
        (hyb[n][k] - max(kw[n][k], sem[n][k], words[n][k]), f"{n}:{k}") for n in hyb for k in hyb[n] if k != "ALL"
    )
    below = sum(1 for n in hyb for k in hyb[n] if k != "ALL" and hyb[n][k] < max(kw[n][k], sem[n][k]) - 1e-9)
    windows = [q for q in sets.get("locomo-window", []) if q.ndcg is not None]
    ndcg = sum(q.ndcg(fused(q)) for q in windows) / len(windows) if windows else 0.0
    best = {
        n: by_kind(qs, lambda q: max(q.judge(q.keys(q.keyword[:LIMIT])), q.judge(q.keys(q.semantic[:LIMIT]))))
        for n, qs in sets.items()
    }
    pairs = (("kw", kw), ("sem", sem), ("hyb", hyb), ("best", best))
    mean = {name: sum(d[n]["ALL"] for n in sets) / len(sets) for name, d in pairs}
    print(
        f"{setting:60s} mean R@5 {mean['kw']:.3f} / {mean['sem']:.3f} / {mean['hyb']:.3f} (best {mean['best']:.3f})"
        f"  worst {worst[0]:+.3f} ({worst[1]})  kinds below an engine {below:2d}  window nDCG@5 {ndcg:.3f}",
        flush=True,
    )
    if detail:
        for n in sets:
            figures = "  ".join(f"{name} {d[n]['ALL']:.3f}" for name, d in (("kw", kw), ("sem", sem), ("hyb", hyb)))
            print(f"    {n:28s} {len(sets[n]):4d}  {figures}  words {words[n]['ALL']:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--long-sets", default=str(eval_long.ROOT / "eval3"), help="folder of long-note sets, or none")
    ap.add_argument("--grid", action="append", default=[], help="module.CONSTANT=v1,v2 (search lists; repeatable)")
    ap.add_argument("--semantic", default="0.25", help="fusion.HYBRID_SEMANTIC values")
    ap.add_argument("--power", default="1", help="fusion.HYBRID_COVERAGE_POWER values")
    ap.add_argument("--detail", action="store_true", help="every set's figures for each setting")
    args = ap.parse_args()
    grid = _parse_grid(args.grid)
    folder = Path(args.long_sets)
    long_sets = tuning_long_sets(folder)
    embedder = eval_search.choose_embedder(args.embedder)
    with tempfile.TemporaryDirectory(prefix="nw-tune-long-") as tmp:
        started = time.perf_counter()
        sets = build_sets(embedder, Path(tmp), long_sets)
        print(
            f"built in {time.perf_counter() - started:.0f} s: " + ", ".join(f"{n} ({len(q)})" for n, q in sets.items())
        )
        for values in itertools.product(*grid.values()) if grid else [()]:
            for name, value in zip(grid, values, strict=True):
                _set_constant(name, value)
            started = time.perf_counter()
            for queries in sets.values():
                search_lists(queries)
            lists = " ".join(f"{n.rpartition('.')[2]}={v:g}" for n, v in zip(grid, values, strict=True))
            print(f"-- {lists or 'as shipped'}: searched in {time.perf_counter() - started:.0f} s", flush=True)
            for semantic, power in itertools.product(args.semantic.split(","), args.power.split(",")):
                fusion.HYBRID_SEMANTIC, fusion.HYBRID_COVERAGE_POWER = float(semantic), float(power)
                report(sets, f"{lists} semantic={semantic} power={power}", args.detail)
        close_sets(sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
