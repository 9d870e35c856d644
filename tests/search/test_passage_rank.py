"""A note's best passage as keyword evidence: the window score and the rerank."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.search import passage_rank
from notewell.search.passage_rank import PASSAGE_CHARS, Candidate, best_window, rerank
from notewell.search.snippets import phrases_of

K1 = passage_rank.K1


def _brute(hits: list[tuple[int, int, int]], weights: list[float], titled: list[float]) -> float:
    """Every window that starts at a hit (or before every hit), scored from scratch."""

    def score(counts: list[float]) -> float:
        return sum(w * c * (K1 + 1) / (c + K1) for w, c in zip(weights, counts, strict=True) if c)

    base = [passage_rank.TITLE_WEIGHT * t for t in titled]
    best = score(base)
    for anchor, _end, _n in hits:
        counts = list(base)
        for start, _e, n in hits:
            if anchor <= start < anchor + PASSAGE_CHARS:
                counts[n] += 1
        best = max(best, score(counts))
    return best


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 2)), max_size=40),
    st.lists(st.floats(0.01, 5.0), min_size=3, max_size=3),
    st.lists(st.integers(0, 2), min_size=3, max_size=3),
)
@pytest.mark.slow
def test_the_best_window_is_the_best_of_every_window(places, weights, titled):
    hits = [(at, at + 4, n) for at, n in places]
    got, start = best_window(hits, weights, [float(t) for t in titled])
    assert abs(got - _brute(hits, weights, [float(t) for t in titled])) < 1e-9
    if hits and got > _brute([], weights, [float(t) for t in titled]) + 1e-12:
        assert start in {at for at, _n in places}


def test_a_window_counts_what_lies_within_its_width():
    weights = [1.0, 1.0]
    apart = [(0, 3, 0), (PASSAGE_CHARS + 10, PASSAGE_CHARS + 13, 1)]
    close = [(0, 3, 0), (PASSAGE_CHARS - 10, PASSAGE_CHARS - 7, 1)]
    assert best_window(close, weights, [0, 0])[0] > best_window(apart, weights, [0, 0])[0]
    assert best_window(apart, weights, [0, 0])[1] in (0, PASSAGE_CHARS + 10)


@pytest.mark.slow
def test_a_word_repeated_a_hundred_thousand_times_is_scored_in_linear_time():
    def timed(n: int) -> float:
        hits = [(i * 7, i * 7 + 5, i % 3) for i in range(n)]
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            best_window(hits, [1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
            best = min(best, time.perf_counter() - started)
        return best

    small, large = timed(25_000), timed(100_000)
    assert large < 12 * small + 0.05  # 4x the hits: linear is 4x, quadratic 16x


def _candidate(key: str, score: float, body: str, title: str = "") -> Candidate:
    return Candidate(key, score, title, body)


def test_a_long_note_whose_one_passage_answers_climbs_above_a_note_that_names_a_word():
    filler = " ".join(f"unrelated{i} chatter about lunch and the weather" for i in range(400))
    long_body = filler + " the pool timeout was raised to thirty seconds by Tomasz " + filler
    phrases = phrases_of('"pool" OR "timeout" OR "tomasz"')
    # Whole-note BM25 puts the long note last: its length dilutes the one place that answers.
    before = [_candidate("short", 1.2, "a pool of notes"), _candidate("long", 1.0, long_body)]
    after = rerank(before, phrases, [1.0, 1.0, 1.0], read=2)
    assert [c.key for c in after] == ["long", "short"]
    assert after[0].score > after[1].score


def test_the_order_holds_where_passages_say_nothing_new_and_ties_keep_it():
    phrases = phrases_of('"plum"')
    before = [_candidate("newer", 1.0, "plum"), _candidate("older", 1.0, "plum!")]
    assert [c.key for c in rerank(before, phrases, [1.0], read=2)] == ["newer", "older"]


def test_notes_not_read_follow_the_head_and_never_outscore_it():
    phrases = phrases_of('"fig"')
    texts = (("a", 3.0, "fig"), ("b", 2.9, "fig"), ("c", 2.8, "fig " * 50), ("d", 2.7, "fig " * 50))
    before = [_candidate(k, s, body) for k, s, body in texts]
    after = rerank(before, phrases, [1.0], read=2)
    # c and d hold the word most densely, but were not read: they cannot climb past a and b.
    assert [c.key for c in after] == ["a", "b", "c", "d"]
    scores = [c.score for c in after]
    assert scores == sorted(scores, reverse=True)
    assert [c.key for c in rerank(before, phrases, [1.0], read=4)][:2] == ["c", "d"]


def test_the_head_is_a_few_times_the_notes_asked_for_within_the_budget(monkeypatch):
    assert passage_rank.head_size(3) == 30 and passage_rank.head_size(20) == 60 and passage_rank.head_size(500) == 100
    monkeypatch.setattr(passage_rank, "PASSAGE_BUDGET", 1000)
    assert passage_rank.within_budget([400, 400, 400], 1) == 2  # the third would pass 1,000
    assert passage_rank.within_budget([400, 400, 400], 2) == 1  # twice the phrases, half the text
    assert passage_rank.within_budget([5000, 10], 1) == 1  # the best one is always read
    assert passage_rank.within_budget([10**7], 1) == 1
