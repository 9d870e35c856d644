"""Hybrid search: one ranking fused from the keyword list and the semantic list.

Both stores fuse here, so a hybrid search means the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..model.note import Card
from .query import CompiledQuery
from .snippets import fold, phrase_finder, phrases_of, scan

__all__ = ["HYBRID_COVERAGE_POWER", "HYBRID_SEMANTIC", "coverage", "fuse_hybrid", "hybrid_pool"]

# Score fusion: each engine's scores scaled to 0..1 within its list (BM25 by the list's best,
# cosine from the list's worst to its best) and mixed, HYBRID_SEMANTIC of the semantic one.
# Chosen across benchmarks/eval, the tuning split of benchmarks/eval2 and LoCoMo conversations
# 1-5 (benchmarks/tune_search.py; docs/quality.md): the best mean R@5 among the settings that left hybrid
# at or above keyword on every query kind of every set. Reciprocal-rank fusion, the earlier
# rule, gave up more where one engine is much surer than the other (LoCoMo turns 0.550 vs 0.586).
HYBRID_SEMANTIC = 0.25
# A keyword hit from the loose pass (not every word) counts coverage ** HYBRID_COVERAGE_POWER
# of its score, coverage being the share of the query's words it holds. Counting such hits
# not at all was chosen on one set and lost to keyword alone on unseen notes, where most
# keyword hits, even for word-for-word queries, come from the loose pass.
HYBRID_COVERAGE_POWER = 1.0


def hybrid_pool(limit: int) -> int:
    """How many cards each engine gives a hybrid ranking of *limit* cards."""
    return min(1000, max(3 * limit, 30))


def coverage(cq: CompiledQuery, title: str, body: str) -> float:
    """The share of the loose pass's words (a CJK run's character pairs) that the note's
    title or body holds, matched as snippets match them."""
    if not cq.loose_terms:
        return 1.0
    phrases = phrases_of(" ".join(cq.loose_terms))
    if not phrases:
        return 1.0
    # Every hit, overlapping ones too: a CJK run's pairs overlap by design.
    found = {number for _a, _b, number in scan(fold(f"{title}\n{body}"), phrases, phrase_finder(phrases))}
    return len(found) / len(phrases)


def _scaled(lists: dict[str, list[Card]]) -> tuple[list[float], list[float]]:
    """Each list's scores in 0..1: BM25 over the list's best, cosine from its worst to its best."""
    keyword, semantic = lists.get("keyword", []), lists.get("semantic", [])
    kw = [abs(c.score or 0.0) for c in keyword]
    sem = [c.score or 0.0 for c in semantic]
    top = max(kw, default=0.0) or 1.0
    high, low = (sem[0], sem[-1]) if sem else (0.0, 0.0)
    return [v / top for v in kw], [(v - low) / (high - low) if high > low else 1.0 for v in sem]


def fuse_hybrid(lists: dict[str, list[Card]], partial: Mapping[str, float], limit: int) -> list[Card]:
    """One fused ranking of the keyword and semantic cards (best first): a keyword card counts
    (1 - HYBRID_SEMANTIC) x its BM25 over the list's best (a loose hit in *partial*, mapped to
    its coverage, x coverage ** HYBRID_COVERAGE_POWER), a semantic card HYBRID_SEMANTIC x its
    cosine scaled from the list's worst (0) to its best (1). A note both found keeps the keyword
    card (with its highlights); its score is the fused value."""
    fused: dict[str, float] = {}
    first: dict[str, Card] = {}
    kw, sem = _scaled(lists)
    for card, scaled in zip(lists.get("keyword", []), kw, strict=True):
        weight = partial[card.id] ** HYBRID_COVERAGE_POWER if card.id in partial else 1.0
        fused[card.id] = fused.get(card.id, 0.0) + (1 - HYBRID_SEMANTIC) * weight * scaled
        first.setdefault(card.id, card)
    for card, scaled in zip(lists.get("semantic", []), sem, strict=True):
        fused[card.id] = fused.get(card.id, 0.0) + HYBRID_SEMANTIC * scaled
        first.setdefault(card.id, card)
    best = sorted(fused, key=lambda nid: -fused[nid])[:limit]
    return [replace(first[nid], mode="hybrid", score=round(fused[nid], 6)) for nid in best]
