#!/usr/bin/env python3
"""What else the two engines' lists could give: other ways of fusing them, on the tuning sets.

Builds and searches the same tuning parts as ``tune_long.py`` (never a held-out one), then
ranks each query's keyword and semantic pools by every way below, printing tune_long's line
for each (mean R@5 of keyword / semantic / hybrid over the sets, the per-question better of
the two engines, the worst query kind and LoCoMo windows' session nDCG@5):

- ``shipped``: ``fusion.fuse_hybrid`` as the store fuses;
- ``z-score``: each semantic pool scaled by its mean and spread instead of worst..best;
- ``both-found``: a bonus for a note both engines found (CombMNZ's idea);
- ``keyword-confidence``: the keyword share scaled by how much of the query the keyword
  pool covers at best (all of it when a hit holds every word);
- ``reciprocal-rank``: the shipped scores plus reciprocal-rank fusion's;
- ``learned``: a logistic ranker over 12 features of a candidate (each engine's scaled score,
  rank and presence, coverage, cosine gap to the best, products, a CJK query), fitted on half
  the queries of every set and scored on the other half, then the halves swapped, so no query
  is ranked by a model fitted on it.

``--turns`` adds a signal neither list holds, on LoCoMo sessions only: every turn embedded on its
own (with its session's heading), a session's cosine raised by half its best turn's, the semantic
pool ordered again and fused as shipped; and semantic alone without keyword feedback, a session
scored by its best passage, its best turn, or both.

The finding it was written for (README, "What fusion can still gain"): none of these beats
the shipped fusion, so what is left to gain needs a signal neither list holds.

Usage:
    python benchmarks/fusion_study.py [--turns]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_long  # noqa: E402
import eval_search  # noqa: E402
import locomo  # noqa: E402
import tune_long  # noqa: E402
from tune_long import LIMIT, Query  # noqa: E402

_CJK = re.compile(r"[\u3400-\u9fff\uac00-\ud7af]")
Ranker = Callable[[Query], list[str]]  # a query's note ids, best first


def _pools(q: Query) -> tuple[dict[str, float], dict[str, float]]:
    """Each engine's scores for its pool: keyword BM25 over the best (a loose hit x its
    coverage), cosine as it came."""
    top = max((abs(c.score or 0.0) for c in q.keyword), default=0.0) or 1.0
    kw = {c.id: q.partial.get(c.id, 1.0) * abs(c.score or 0.0) / top for c in q.keyword}
    return kw, {c.id: c.score or 0.0 for c in q.semantic}


def _min_max(sem: dict[str, float]) -> dict[str, float]:
    high, low = max(sem.values(), default=0.0), min(sem.values(), default=0.0)
    return {i: (v - low) / (high - low) if high > low else 1.0 for i, v in sem.items()}


def _z(sem: dict[str, float], cap: float = 3.0) -> dict[str, float]:
    if not sem:
        return {}
    mean = sum(sem.values()) / len(sem)
    spread = (sum((v - mean) ** 2 for v in sem.values()) / len(sem)) ** 0.5 or 1.0
    return {i: (v - mean) / spread / cap for i, v in sem.items()}


def _best(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])[:LIMIT]


def mixed(
    semantic: float = 0.25,
    scale: Callable[[dict[str, float]], dict[str, float]] = _min_max,
    both: float = 0.0,
    confidence: float = 0.0,
    reciprocal: float = 0.0,
) -> Ranker:
    """A score fusion with one of the alternatives switched on."""

    def rank(q: Query) -> list[str]:
        kw, raw = _pools(q)
        sem = scale(raw)
        share = 1 - semantic
        if confidence:
            whole = any(c.id not in q.partial for c in q.keyword)
            share *= (1.0 if whole else max(q.partial.values(), default=0.0)) ** confidence
        out = {i: share * v for i, v in kw.items()}
        for i, v in sem.items():
            out[i] = out.get(i, 0.0) + semantic * v + (both if i in kw else 0.0)
        for pool in (q.keyword, q.semantic):
            for n, card in enumerate(pool):
                out[card.id] += reciprocal / (60 + n)
        return _best(out)

    return rank


def _features(q: Query) -> tuple[list[str], list[list[float]]]:
    kw, raw = _pools(q)
    sem = _min_max(raw)
    high = max(raw.values(), default=0.0)
    kw_rank = {c.id: n for n, c in enumerate(q.keyword)}
    sem_rank = {c.id: n for n, c in enumerate(q.semantic)}
    cjk = 1.0 if _CJK.search(q.text) else 0.0
    ids = list(dict.fromkeys([*kw, *sem]))
    rows = []
    for i in ids:
        k, s = kw.get(i, 0.0), sem.get(i, 0.0)
        found_kw, found_sem = float(i in kw), float(i in sem)
        rows.append(
            [
                *(k, s, q.partial.get(i, found_kw), 1 / (1 + kw_rank.get(i, 1e9)), 1 / (1 + sem_rank.get(i, 1e9))),
                *(found_kw * found_sem, raw.get(i, high - 1.0) - high, k * s, k * cjk, s * cjk, found_kw, found_sem),
            ]
        )
    return ids, rows


def _weight(queries_in_set: int, relevant: list[float]) -> float:
    return 1 / queries_in_set / max(1.0, sum(relevant))


def learned(sets: dict[str, list[Query]], l2: float = 1e-3, steps: int = 3000) -> Ranker:
    """A logistic ranker cross-fitted over two halves of every set's queries."""
    import numpy as np

    data = {id(q): _features(q) for qs in sets.values() for q in qs}
    relevant = {}
    for qs in sets.values():
        for q in qs:
            ids = data[id(q)][0]
            relevant[id(q)] = [1.0 if q.judge([q.key_of[i]]) > 0 else 0.0 for i in ids]
    halves: list[list[tuple[str, Query]]] = [[], []]
    for name, qs in sets.items():
        for n, q in enumerate(qs):
            halves[n % 2].append((name, q))
    models = []
    for half in halves:
        counts = Counter(name for name, _q in half)
        x = np.vstack([np.array(data[id(q)][1]) for _n, q in half])
        y = np.concatenate([relevant[id(q)] for _n, q in half])
        # Every set weighs the same, and every query within it.
        w = np.concatenate(
            [np.full(len(relevant[id(q)]), 1 / counts[n] / max(1, sum(relevant[id(q)]))) for n, q in half]
        )
        w /= w.mean()
        mu, sd = x.mean(0), x.std(0) + 1e-9
        z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
        theta = np.zeros(z.shape[1])
        for _ in range(steps):
            p = 1 / (1 + np.exp(-z @ theta))
            theta -= 0.5 * (z.T @ (w * (p - y)) / len(y) + l2 * np.r_[theta[:-1], 0])
        models.append((mu, sd, theta))
    other = {id(q): models[1 - n] for n, half in enumerate(halves) for _name, q in half}

    def rank(q: Query) -> list[str]:
        ids, rows = data[id(q)]
        mu, sd, theta = other[id(q)]
        x = np.array(rows)
        scores = np.hstack([(x - mu) / sd, np.ones((len(x), 1))]) @ theta
        return [ids[j] for j in np.argsort(-scores)[:LIMIT]]

    return rank


def _best_by_session(vectors: Any, sessions: list[int], query: Any) -> dict[str, float]:
    best: dict[str, float] = {}
    for number, cosine in zip(sessions, (vectors @ query).tolist(), strict=True):
        best[f"S{number}"] = max(best.get(f"S{number}", -2.0), cosine)
    return best


def turns_study(embedder: Any, queries: list[Query]) -> None:
    """LoCoMo sessions with every turn's vector beside the passages' (see the docstring)."""
    import numpy as np

    from notewell.search.embedders import default_embedder
    from notewell.search.passages import passages

    if isinstance(embedder, str):  # "default": the store's own choice
        embedder = default_embedder()

    alone: dict[str, list[float]] = {"best passage": [], "best turn": [], "both": []}
    conversations = locomo.load(locomo.DEFAULT_DATA)[: locomo.TUNING_CONVERSATIONS]
    asked = [(c, q) for c in conversations for q in c.questions]
    assert len(asked) == len(queries), "the session queries follow the conversations' questions"
    raised: dict[Any, dict[str, float]] = {}
    for conversation in conversations:
        turns = [(s.number, f"{s.heading()}\n{t.line()}") for s in conversation.sessions for t in s.turns]
        parts = [(s.number, text) for s in conversation.sessions for _a, _b, text in passages(s.heading(), s.body())]
        turn_vectors = np.asarray(embedder.embed_documents([text for _n, text in turns]))
        part_vectors = np.asarray(embedder.embed_documents([text for _n, text in parts]))
        for question in conversation.questions:
            vector = np.asarray(embedder.embed_query(question.text))
            by_turn = _best_by_session(turn_vectors, [n for n, _t in turns], vector)
            by_part = _best_by_session(part_vectors, [n for n, _t in parts], vector)
            raised[id(question)] = by_turn
            evidence = {f"S{d[1:].split(':')[0]}" for d in question.evidence}
            for name, scores in (("best passage", by_part), ("best turn", by_turn)):
                top = sorted(scores, key=lambda k: -scores[k])[:5]
                alone[name].append(len(evidence & set(top)) / len(evidence))
            both = {k: by_part[k] + by_turn[k] for k in by_part}
            top = sorted(both, key=lambda k: -both[k])[:5]
            alone["both"].append(len(evidence & set(top)) / len(evidence))
    print(
        "LoCoMo sessions, semantic alone without feedback, R@5: "
        + ", ".join(f"{name} {sum(v) / len(v):.3f}" for name, v in alone.items())
    )
    shipped, turned = [], []
    for (_c, question), q in zip(asked, queries, strict=True):
        by_turn = raised[id(question)]
        pool = [replace(c, score=(c.score or 0.0) + 0.5 * by_turn[q.key_of[c.id]]) for c in q.semantic]
        pool.sort(key=lambda c: -(c.score or 0.0))
        before = tune_long.fuse_hybrid({"keyword": q.keyword, "semantic": q.semantic}, q.partial, LIMIT)
        after = tune_long.fuse_hybrid({"keyword": q.keyword, "semantic": pool}, q.partial, LIMIT)
        shipped.append(q.judge(q.keys(before)))
        turned.append(q.judge(q.keys(after)))
    print(
        f"LoCoMo sessions, hybrid R@5: shipped {sum(shipped) / len(shipped):.3f}, "
        f"semantic pool ordered with half the best turn's cosine {sum(turned) / len(turned):.3f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", action="store_true", help="also the turn-vector study on LoCoMo sessions")
    args = ap.parse_args()
    long_sets = tune_long.tuning_long_sets(eval_long.ROOT / "eval3")
    embedder = eval_search.choose_embedder("default")
    with tempfile.TemporaryDirectory(prefix="nw-fusion-study-") as tmp:
        started = time.perf_counter()
        sets = tune_long.build_sets(embedder, Path(tmp), long_sets)
        for queries in sets.values():
            tune_long.search_lists(queries)
        print(f"built and searched in {time.perf_counter() - started:.0f} s", flush=True)
        ways: list[tuple[str, Ranker | None]] = [("shipped", None)]
        ways += [(f"min-max semantic={s}", mixed(s)) for s in (0.2, 0.3, 0.35)]
        ways += [
            (f"z-score semantic={s} cap={c}", mixed(s, lambda v, c=c: _z(v, c))) for s in (0.25, 0.4) for c in (2, 3, 4)
        ]
        ways += [(f"both-found +{b}", mixed(both=b)) for b in (0.02, 0.05, 0.1)]
        ways += [(f"keyword-confidence ^{c}", mixed(confidence=c)) for c in (0.5, 1, 2)]
        ways += [(f"reciprocal-rank +{r}", mixed(reciprocal=r)) for r in (0.5, 1.0)]
        ways += [(f"learned (cross-fitted) l2={l2}", learned(tune_long.pooled(sets), l2)) for l2 in (1e-3, 1e-2)]
        for name, ranker in ways:
            tune_long.report(sets, name, detail=False, rank=ranker)
        if args.turns:
            turns_study(embedder, sets["locomo-session"])
        tune_long.close_sets(sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
