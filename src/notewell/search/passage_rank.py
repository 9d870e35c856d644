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
    "best_window",
    "idf",
    "rerank",
]

PASSAGE_CHARS = 1000  # the window a note's best passage is scored in (as long as a semantic passage)
PASSAGE_SHARE = 0.5  # of a note's keyword score that comes from its best passage
PASSAGE_POOL = 100  # candidates (best by whole-note BM25) read for their passages...
PASSAGE_BUDGET = 4_000_000  # ...while their texts stay within this many characters in all
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


def rerank(candidates: Sequence[Candidate], phrases: Sequence[Phrase], weights: Sequence[float]) -> list[Candidate]:
    """*candidates* (best first by whole-note score) with the head read for passages and ranked
    by the mix of its two scores, each over its best among the head (the rest follow as they
    were, their scores as if no passage held a word); each returned candidate's score is the
    mix, in the whole-note score's units."""
    head: list[Candidate] = []
    spent = 0
    for c in candidates[:PASSAGE_POOL]:
        spent += min(len(c.body), SCAN_CHARS)
        if head and spent > PASSAGE_BUDGET:
            break
        head.append(c)
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
    rest = [Candidate(c.key, (1 - PASSAGE_SHARE) * c.score, c.title, c.body) for c in candidates[len(head) :]]
    return ranked + rest
