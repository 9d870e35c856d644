"""Hybrid fusion: loose keyword hits weighted by how much of the query they hold."""

from __future__ import annotations

import pytest

import notewell
from notewell.model.note import Card
from notewell.search import fusion
from notewell.search.embedders import HashEmbedder
from notewell.search.fusion import coverage, fuse_hybrid
from notewell.search.query import compile_query


def _card(nid: str, score: float) -> Card:
    return Card(
        id=nid, title=nid, kind=None, tags=[], builds_on=[], model=None, author=None,
        created_at="", updated_at="", snippet="", score=score,
    )  # fmt: skip


def test_coverage_counts_the_query_words_a_note_holds():
    cq = compile_query("why does the cache stampede under load")
    assert coverage(cq, "Cache stampede", "Every worker refills at once under load.") == 1.0
    assert coverage(cq, "Cache", "nothing else here") == pytest.approx(1 / 4)  # cache, stampede, under, load
    assert coverage(cq, "Other", "unrelated words") == 0.0
    # Words are matched as the index matches them: case, accents and common endings folded.
    assert coverage(compile_query("caching naive"), "CACHED", "a naïve approach") == 1.0


def test_coverage_of_a_chinese_query_counts_its_character_pairs():
    cq = compile_query("缓存击穿")  # pairs 缓存, 存击, 击穿
    assert coverage(cq, "缓存", "热点数据的缓存击穿") == 1.0
    assert coverage(cq, "笔记", "缓存过期") == pytest.approx(1 / 3)


def test_a_query_of_one_word_has_nothing_to_cover():
    assert coverage(compile_query("stampede"), "x", "y") == 1.0


def test_each_engine_s_scores_are_scaled_within_its_list_and_mixed():
    keyword = [_card("k1", 8.0), _card("k2", 4.0)]  # BM25: k1 holds every word, k2 half of them
    semantic = [_card("s1", 0.6), _card("k2", 0.5), _card("s3", 0.2)]  # cosines
    fused = fuse_hybrid({"keyword": keyword, "semantic": semantic}, {"k2": 0.5}, 5)
    scores = {c.id: c.score for c in fused}
    a, power = fusion.HYBRID_SEMANTIC, fusion.HYBRID_COVERAGE_POWER
    assert scores["k1"] == pytest.approx((1 - a) * 1.0, abs=1e-6)  # the best keyword score scales to 1
    assert scores["k2"] == pytest.approx((1 - a) * 0.5**power * 0.5 + a * 0.75, abs=1e-6)
    assert scores["s1"] == pytest.approx(a, abs=1e-6) and scores["s3"] == 0.0  # cosine: worst 0, best 1
    assert [c.id for c in fused] == sorted(scores, key=lambda n: -scores[n])
    assert all(c.mode == "hybrid" for c in fused)
    assert fused[[c.id for c in fused].index("k2")].score == scores["k2"]


def test_a_loose_hit_holding_none_of_the_words_adds_nothing():
    fused = fuse_hybrid({"keyword": [_card("k1", 3.0)], "semantic": [_card("s1", 0.4)]}, {"k1": 0.0}, 5)
    assert {c.id: c.score for c in fused} == {"s1": pytest.approx(fusion.HYBRID_SEMANTIC), "k1": 0.0}


def test_one_engine_alone_keeps_its_order():
    keyword = [_card("a", 5.0), _card("b", 2.0)]
    assert [c.id for c in fuse_hybrid({"keyword": keyword, "semantic": []}, {}, 5)] == ["a", "b"]
    semantic = [_card("x", 0.5)]
    assert [c.id for c in fuse_hybrid({"keyword": [], "semantic": semantic}, {}, 5)] == ["x"]


def test_hybrid_on_a_store_ranks_an_exact_loose_match_above_a_stray_word(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    exact = s.add_note("# Parser rewrite\n\nThe tokenizer rewrite removed the quadratic backtracking.")
    stray = s.add_note("# Lunch\n\nThe rewrite of the menu is pending.")
    s.embed_pending()
    # No note holds every word, so both come from the loose pass: the one holding more ranks first.
    cards = s.search_notes("tokenizer quadratic backtracking rewrite regression", mode="hybrid", limit=5)
    assert [c.id for c in cards][:2] == [exact.id, stray.id]
    s.close()
