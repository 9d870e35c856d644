"""How rare a term is on PostgreSQL (search/pg_rank.py), on a real server (the ``pg_store_url``
fixture; skipped, saying why, when none can be started)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import notewell
from notewell.backends.postgres import rank as pg_rank
from notewell.backends.postgres.rank import TermRarity, idf, split_terms


def test_idf_is_fts5s_and_a_term_in_most_notes_weighs_almost_nothing():
    assert idf(100, 1) == pytest.approx(math.log(99.5 / 1.5))
    assert idf(100, 0) > idf(100, 1) > idf(100, 10) > idf(100, 49) > 0
    assert idf(100, 51) == idf(100, 100) == 1e-6
    assert idf(0, 0) == 1e-6
    assert idf(10, 50) == 1e-6  # counted after the store's size was: more hits than notes


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "''") + "'"


@pytest.mark.parametrize(
    ("tsquery", "terms"),
    [
        ("'a'", ["'a'"]),
        ("'a' | 'b' & 'c'", ["'a'", "'b'", "'c'"]),
        ("( 'a' | 'b' ) & !'c'", ["'a'", "'b'"]),
        ("'quick' <-> 'brown' & 'x':*", ["'quick' <-> 'brown'", "'x':*"]),
        ("( 'a' <-> 'b' ) | ( 'c' & 'd':A )", ["'a' <-> 'b'", "'c'", "'d':A"]),
        ("( 'a' | 'b' ) <-> 'c'", ["( 'a' | 'b' ) <-> 'c'"]),
        ("!( 'a' | 'b' )", []),
        ("", []),
    ],
)
def test_a_tsquery_splits_into_the_terms_weighed_apart(tsquery, terms):
    assert split_terms(tsquery) == terms


@given(
    st.lists(st.text(alphabet="ab'|&()! <->:*", min_size=1, max_size=6), min_size=1, max_size=6),
    st.lists(st.sampled_from([" & ", " | "]), min_size=6, max_size=6),
    st.booleans(),
)
@pytest.mark.slow
def test_any_lexemes_joined_by_and_or_come_back_apart(words, ops, wrap):
    quoted = [_quoted(w) for w in words]
    text = quoted[0] + "".join(op + q for op, q in zip(ops, quoted[1:], strict=False))
    assert split_terms(f"( {text} )" if wrap else text) == quoted


@pytest.fixture
def conn_and_store(pg_store_url):
    import psycopg

    store = notewell.open(pg_store_url, embedder=None)
    conn = psycopg.connect(pg_store_url, autocommit=True)
    yield conn, store
    conn.close()
    store.close()


def _tsquery(conn, word: str) -> str:
    return conn.execute("SELECT plainto_tsquery('english', %s)::text", (word,)).fetchone()[0]


def test_rare_terms_weigh_more_and_counts_are_kept_until_the_store_grows(conn_and_store, monkeypatch):
    conn, store = conn_and_store
    monkeypatch.setattr(pg_rank, "SIZE_TTL", 0.0)
    store.add_notes([f"# Build {i}\n\nthe build failed again, common words {i}" for i in range(40)])
    store.add_note("# Xcode\n\nthe iOS build failed after upgrading Xcode")
    rarity = TermRarity()
    common, rare = _tsquery(conn, "build"), _tsquery(conn, "xcode")
    w_common, w_rare = rarity.weights(conn, [common, rare])
    assert w_rare == pytest.approx(idf(41, 1)) and w_common == 1e-6  # in all 41 notes
    # A few more notes (under a twentieth of the store) keep the counts; many more redo them.
    store.add_note("# Another Xcode note")
    assert rarity.weights(conn, [rare]) == [pytest.approx(idf(42, 1))]
    store.add_notes([f"# Xcode {i}\n\nmore about xcode" for i in range(10)])
    assert rarity.weights(conn, [rare]) == [pytest.approx(idf(52, 12))]


def test_past_probe_a_count_comes_from_analyze(conn_and_store, monkeypatch):
    conn, store = conn_and_store
    monkeypatch.setattr(pg_rank, "SIZE_TTL", 0.0)
    monkeypatch.setattr(pg_rank, "PROBE", 5)
    store.add_notes([f"# Note {i}\n\nkiwi {'mango' if i % 4 == 0 else 'pear'}" for i in range(80)])
    kiwi, mango = _tsquery(conn, "kiwi"), _tsquery(conn, "mango")
    before = TermRarity()
    assert before.weights(conn, [kiwi, mango]) == [pytest.approx(idf(80, 5))] * 2  # counted only up to PROBE
    conn.execute("ANALYZE notes")
    after = TermRarity()
    w_kiwi, w_mango = after.weights(conn, [kiwi, mango])
    assert w_kiwi == 1e-6  # in every note, as ANALYZE saw
    assert w_mango == pytest.approx(idf(80, 20), rel=0.05)


def test_counts_are_redone_in_time_when_the_store_size_holds_still(conn_and_store, monkeypatch):
    conn, store = conn_and_store
    monkeypatch.setattr(pg_rank, "SIZE_TTL", 0.0)
    notes = store.add_notes([f"# Note {i}\n\nplain words {i}" for i in range(20)])
    rarity = TermRarity()
    quince = _tsquery(conn, "quince")
    assert rarity.weights(conn, [quince]) == [pytest.approx(idf(20, 0))]
    for note in notes[:15]:  # edits: the same number of notes, a term now in most of them
        store.edit_note(note.id, note.text + "\nquince\n")
    assert rarity.weights(conn, [quince]) == [pytest.approx(idf(20, 0))]  # kept: the size did not move
    monkeypatch.setattr(pg_rank, "COUNTS_TTL", 0.0)
    assert rarity.weights(conn, [quince]) == [1e-6]  # in 15 of 20 notes
