"""BM25 computed outside FTS5: the same ranks as FTS5's bm25(), cached phrase counts, estimates."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.backends.sqlite import bm25
from notewell.backends.sqlite.bm25 import bm25_ranks, document_frequency, weigh

WORDS = "raft leader vote term log commit snapshot quorum cluster node replica disk page cache lock".split()


def _fts5_ranks(store, expr: str) -> dict[int, float]:
    return dict(store.backend.index.conn.execute("SELECT rowid, rank FROM notes_fts WHERE notes_fts MATCH ?", [expr]))


def _fill(store, seed: int, count: int = 60) -> None:
    rng = random.Random(seed)
    notes = []
    for _ in range(count):
        title = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
        body = " ".join(rng.choices(WORDS, k=rng.randint(3, 60)))
        notes.append(f"# {title}\n\n{body}\n")
    store.add_notes(notes)


@pytest.mark.slow
@pytest.mark.parametrize(
    "expr",
    ['"raft"', '"raft" "vote"', '"raft" OR "quorum" OR "disk"', '"leader vote"', '"snap"*', '"raft" "raft"'],
)
def test_ranks_are_fts5_ranks(store, expr):
    _fill(store, 7)
    want = _fts5_ranks(store, expr)
    assert want, "the query should match some notes"
    got = bm25_ranks(store.backend.index, weigh(store.backend.index, expr), list(want))
    assert set(got) == set(want)
    for rowid, rank in want.items():
        assert got[rowid] == pytest.approx(rank, rel=1e-9, abs=1e-12)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_same_ranks_as_fts5_on_random_stores(tmp_path_factory, seed, words):
    import notewell

    with notewell.open(tmp_path_factory.mktemp("bm25"), watch=False) as store:
        _fill(store, seed, 30)
        expr = " OR ".join(f'"{w}"' for w in words)
        want = _fts5_ranks(store, expr)
        got = bm25_ranks(store.backend.index, weigh(store.backend.index, expr), list(want))
        # (Equal up to rounding: notes that tie in FTS5 tie here, give or take the last bit.)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_counts_are_exact_up_to_the_probe(store, monkeypatch):
    _fill(store, 3)
    (exact,) = store.backend.index.conn.execute(
        "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH '\"raft\"'"
    ).fetchone()
    assert document_frequency(store.backend.index, '"raft"') == exact
    assert document_frequency(store.backend.index, '"nowhere"') == 0


@pytest.mark.slow
def test_counts_above_the_probe_are_estimated_and_cached(store, monkeypatch):
    monkeypatch.setattr(bm25, "PROBE", 20)
    store.add_notes([f"# n{i}\n\n{'common' if i % 2 else 'other'} words\n" for i in range(400)])
    estimate = document_frequency(store.backend.index, '"common"')
    assert 160 <= estimate <= 240  # 200 in truth; the newest notes are as dense as the rest
    # Kept while the store changes little: a handful of new notes with the word do not move it.
    store.add_notes(["common again"] * 5)
    assert document_frequency(store.backend.index, '"common"') == estimate
    # Redone once the store grew by more than a twentieth.
    store.add_notes(["common again"] * 100)
    assert document_frequency(store.backend.index, '"common"') > estimate + 50


def test_search_ranks_title_and_term_counts(store):
    many = store.add_note("# Notes\n\nquorum quorum quorum and some other words here")
    once = store.add_note("# Notes\n\nquorum and some other words here, filler filler")
    titled = store.add_note("# Quorum\n\nsome other words here, filler filler filler")
    ids = [c.id for c in store.search_notes("quorum")]
    assert ids == [titled.id, many.id, once.id]


@pytest.mark.slow
def test_search_gives_the_same_results_whichever_ranks(store, monkeypatch):
    from notewell.backends.sqlite import keyword

    _fill(store, 11, 120)
    queries = ["raft", "leader vote", "quorum disk page", "what about the snapshot cache?", "commit OR lock", "sna*"]

    def grouped(cards):  # notes with equal scores may come in either order
        groups: dict[float, set[str]] = {}
        for c in cards:
            groups.setdefault(round(c.score, 6), set()).add(c.id)
        return groups

    fts5 = {q: grouped(store.search_notes(q, limit=15)) for q in queries}
    monkeypatch.setattr(keyword, "FTS5_WALK", -1)  # every query through bm25_ranks
    ours = {q: grouped(store.search_notes(q, limit=15)) for q in queries}
    for q in queries:
        assert fts5[q] and ours[q] == fts5[q], q


def test_a_title_match_must_match_the_whole_query(store, monkeypatch):
    from notewell.backends.sqlite import keyword

    monkeypatch.setattr(keyword, "FTS5_WALK", 0)  # through bm25_ranks
    monkeypatch.setattr(keyword, "RANK_WINDOW", 20)
    excluded = store.add_note("# foo report\n\nthis one is about bar")
    store.add_notes([f"# note {i}\n\nfoo number {i}" for i in range(40)])
    found = [c.id for c in store.search_notes("foo NOT bar", limit=10)]
    assert found and excluded.id not in found


def test_forms_the_stemmer_joins_still_count(store, monkeypatch):
    from notewell.backends.sqlite import keyword

    monkeypatch.setattr(keyword, "FTS5_WALK", -1)
    joined = store.add_note("# campus\n\nthe universal library")  # porter: univers, as for university
    store.add_notes([f"# other {i}\n\nunrelated words {i}" for i in range(5)])
    (card,) = store.search_notes("university")
    assert card.id == joined.id and card.score > 0
    want = _fts5_ranks(store, '"university"')
    got = bm25_ranks(store.backend.index, weigh(store.backend.index, '"university"'), list(want))
    assert got[next(iter(want))] < 0  # counted once: not the 0 of a note without the word
