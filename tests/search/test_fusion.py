"""Hybrid fusion: loose keyword hits weighted by how much of the query they hold."""

from __future__ import annotations

import pytest

import notewell
from notewell.model.note import Card
from notewell.search import fusion
from notewell.search.embedders import HashEmbedder
from notewell.search.fusion import coverage, fuse_hybrid
from notewell.search.query import compile_query


def _card(nid: str) -> Card:
    return Card(
        id=nid, title=nid, kind=None, tags=[], builds_on=[], model=None, author=None,
        created_at="", updated_at="", snippet="", score=0.0,
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


def test_loose_hits_count_by_their_coverage():
    keyword = [_card("k1"), _card("k2")]
    semantic = [_card("s1"), _card("k2")]
    # k1 holds every word (not in partial); k2 half of them.
    fused = fuse_hybrid({"keyword": keyword, "semantic": semantic}, {"k2": 0.5}, 3)
    scores = {c.id: c.score for c in fused}
    k, power = fusion.HYBRID_K, fusion.HYBRID_COVERAGE_POWER
    wk, ws = fusion.HYBRID_WEIGHTS["keyword"], fusion.HYBRID_WEIGHTS["semantic"]
    assert scores["k2"] == pytest.approx(wk * 0.5**power / (k + 2) + ws / (k + 2), abs=1e-6)
    assert scores["k1"] == pytest.approx(wk / (k + 1), abs=1e-6)
    assert scores["s1"] == pytest.approx(ws / (k + 1), abs=1e-6)
    # A loose hit that holds none of the words adds nothing; the semantic list still counts.
    fused = fuse_hybrid({"keyword": keyword, "semantic": semantic}, {"k1": 0.0, "k2": 0.0}, 3)
    assert {c.id for c in fused} == {"s1", "k2", "k1"}
    assert {c.id: c.score for c in fused}["k1"] == 0.0
    assert all(c.mode == "hybrid" for c in fused)


def test_hybrid_on_a_store_ranks_an_exact_loose_match_above_a_stray_word(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder())
    exact = s.add_note("# Parser rewrite\n\nThe tokenizer rewrite removed the quadratic backtracking.")
    stray = s.add_note("# Lunch\n\nThe rewrite of the menu is pending.")
    s.embed_pending()
    # No note holds every word, so both come from the loose pass: the one holding more ranks first.
    cards = s.search_notes("tokenizer quadratic backtracking rewrite regression", mode="hybrid", limit=5)
    assert [c.id for c in cards][:2] == [exact.id, stray.id]
    s.close()
