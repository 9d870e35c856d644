"""Hybrid search: one ranking fused from the keyword list and the semantic list.

Both stores fuse here, so a hybrid search means the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..model.note import Card
from .query import CompiledQuery
from .snippets import fold, phrase_finder, phrases_of, scan

__all__ = ["HYBRID_COVERAGE_POWER", "HYBRID_K", "HYBRID_WEIGHTS", "coverage", "fuse_hybrid", "hybrid_pool"]

# Weighted reciprocal-rank fusion: each engine contributes weight / (HYBRID_K + rank).
# Chosen across benchmarks/eval, the tuning split of benchmarks/eval2 and LoCoMo (README).
HYBRID_K = 60
HYBRID_WEIGHTS = {"keyword": 1.0, "semantic": 1.0}
# A keyword hit from the loose pass (not every word) counts coverage ** HYBRID_COVERAGE_POWER
# of its weight, coverage being the share of the query's words it holds. Counting such hits
# not at all was chosen on one set and lost to keyword alone on unseen notes, where most
# keyword hits, even for word-for-word queries, come from the loose pass.
HYBRID_COVERAGE_POWER = 2.0


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


def fuse_hybrid(lists: dict[str, list[Card]], partial: Mapping[str, float], limit: int) -> list[Card]:
    """One fused ranking of each engine's cards (best first): each counts weight /
    (HYBRID_K + rank), a keyword hit in *partial* (found without every word, mapped to its
    coverage) scaled by coverage ** HYBRID_COVERAGE_POWER. A note both found keeps the first
    engine's card (the keyword one, with its highlights)."""
    fused: dict[str, float] = {}
    first: dict[str, Card] = {}
    for engine, cards in lists.items():
        for rank, card in enumerate(cards, 1):
            weight = HYBRID_WEIGHTS[engine]
            if engine == "keyword" and card.id in partial:
                weight *= partial[card.id] ** HYBRID_COVERAGE_POWER
            fused[card.id] = fused.get(card.id, 0.0) + weight / (HYBRID_K + rank)
            first.setdefault(card.id, card)
    best = sorted(fused, key=lambda nid: -fused[nid])[:limit]
    return [replace(first[nid], mode="hybrid", score=round(fused[nid], 6)) for nid in best]
