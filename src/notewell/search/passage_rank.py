"""Keyword evidence from a note's best passage, beside the whole note's BM25.

A long note (an imported conversation, a log, a digest) is one document to BM25, so its
length dilutes the one stretch that answers a query, and a note that also covers ten other
topics ranks below a short one that merely names the words. Each of the best candidates by
whole-note BM25 is read again, and the densest window of PASSAGE_CHARS characters of its
body scored by BM25 too (the title counting in every window, as in the note); the note's
score mixes the two, PASSAGE_SHARE of it from the window, each scaled by the best of the
candidates. Both stores rank their keyword hits so (``rerank``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .snippets import Phrase, fold, phrase_finder, scan

__all__ = [
    "PASSAGE_BUDGET",
    "PASSAGE_CHARS",
    "PASSAGE_POOL",
    "PASSAGE_SHARE",
    "Candidate",
    "head_size",
    "best_window",
    "idf",
    "rerank",
    "within_budget",
]

PASSAGE_CHARS = 1000  # the window a note's best passage is scored in (as long as a semantic passage)
# Of a note's keyword score that comes from its best passage: chosen across every tuning set at once
# (benchmarks/tune_long.py; docs/quality.md): 0.25 beat 0 and 0.5 on the mean R@5 of hybrid and of keyword.
PASSAGE_SHARE = 0.25
PASSAGE_POOL = 100  # candidates (best by whole-note BM25) read for their passages, at most...
# ...and no more than a few times the notes asked for, while their texts times the phrases looked
# for stay within this many characters (a 64-word question reads 1/64 of a one-word one's text).
PASSAGE_BUDGET = 16_000_000
SCAN_CHARS = 256 * 1024  # a huge note is read for passages in its first 256 KiB
K1 = 1.2
TITLE_WEIGHT = 3.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A keyword hit to rerank: its key, whole-note score (higher is better), title and body."""

    key: int | str
    score: float
    title: str
    body: str


def idf(rows: int, hits: int) -> float:
    """BM25's (and FTS5's) idf: a phrase in more than half of *rows* notes weighs almost nothing."""
    hits = min(max(hits, 0), rows)
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > 0 else 0.0
    return value if value > 0 else 1e-6


def best_window(
    hits: Sequence[tuple[int, int, int]], weights: Sequence[float], titled: Sequence[float]
) -> tuple[float, int]:
    """The best BM25 of a window of PASSAGE_CHARS characters of a body, and where it starts
    (every window counts as full: a short note's length is the whole-note score's to weigh).
    *hits* are (start, end, phrase) in the body, *weights* each phrase's idf, *titled* how
    often the title holds each (counted TITLE_WEIGHT times, in every window). One pass: each
    window starts at a hit, and the counts move with its two ends."""

    def gain(n: int, count: float) -> float:
        return weights[n] * count * (K1 + 1) / (count + K1) if count else 0.0

    counts = [TITLE_WEIGHT * t for t in titled]
    score = sum(gain(n, c) for n, c in enumerate(counts))
    best, best_at = score, 0
    ordered = sorted(hits)
    hi = 0
    for anchor, _end, phrase in ordered:
        while hi < len(ordered) and ordered[hi][0] < anchor + PASSAGE_CHARS:
            n = ordered[hi][2]
            score += gain(n, counts[n] + 1) - gain(n, counts[n])
            counts[n] += 1
            hi += 1
        if score > best:
            best, best_at = score, anchor
        score += gain(phrase, counts[phrase] - 1) - gain(phrase, counts[phrase])
        counts[phrase] -= 1  # the window's next start is past this hit
    return best, best_at


def _window_scores(candidates: Sequence[Candidate], phrases: Sequence[Phrase], weights: Sequence[float]) -> list[float]:
    finder = phrase_finder(phrases)
    out = []
    for c in candidates:
        title = fold(c.title)
        titled = [0.0] * len(phrases)
        for _a, _b, n in scan(title, phrases, finder):
            titled[n] += 1
        body = c.body[:SCAN_CHARS]
        out.append(best_window(scan(fold(body), phrases, finder), weights, titled)[0])
    return out


def head_size(wanted: int) -> int:
    """How many of the best candidates are read for passages when *wanted* notes are asked for."""
    return min(PASSAGE_POOL, max(3 * wanted, 30))


def within_budget(lengths: Sequence[int], phrases: int) -> int:
    """How many of the candidates, best first, whose texts are *lengths* long, are read for
    *phrases* phrases (at least one)."""
    spent = 0
    for n, length in enumerate(lengths):
        spent += min(length, SCAN_CHARS) * max(1, phrases)
        if n and spent > PASSAGE_BUDGET:
            return n
    return len(lengths)


def rerank(
    candidates: Sequence[Candidate], phrases: Sequence[Phrase], weights: Sequence[float], read: int
) -> list[Candidate]:
    """*candidates* (best first by whole-note score) with the first *read* (their text given:
    :func:`head_size`, :func:`within_budget`) ranked by the mix of their two scores, each over
    its best among them; the rest follow as they were, scored as if no passage held a word.
    Each returned candidate's score is the mix, in the whole-note score's units."""
    head = list(candidates[:read])
    if not head or not phrases or PASSAGE_SHARE <= 0:
        return list(candidates)
    windows = _window_scores(head, phrases, weights)
    top_note = max((c.score for c in head), default=0.0) or 1.0
    top_window = max(windows, default=0.0) or 1.0
    mixed = [
        (1 - PASSAGE_SHARE) * c.score / top_note + PASSAGE_SHARE * w / top_window
        for c, w in zip(head, windows, strict=True)
    ]
    order = sorted(range(len(head)), key=lambda i: -mixed[i])  # stable: ties keep the note order
    ranked = [Candidate(head[i].key, mixed[i] * top_note, head[i].title, head[i].body) for i in order]
    # The rest as if no passage of theirs held a word: never above a note of the head.
    rest = [Candidate(c.key, (1 - PASSAGE_SHARE) * c.score, c.title, c.body) for c in candidates[read:]]
    return ranked + rest
