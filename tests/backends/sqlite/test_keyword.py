"""Keyword search: ranking, CJK, query syntax, filters, cards."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import notewell
from notewell import InvalidArgumentError, InvalidQueryError
from notewell.backends.sqlite.keyword import keyword_search
from notewell.search.meta_tokens import meta_token
from notewell.search.query import compile_query, parse_fts5, plain_terms, title_expression
from tests.conftest import CARD_KEYS


def test_card_shape_and_highlight(store):
    store.add_note(
        "---\ntitle: Raft elections\nkind: conclusion\ntags: [raft]\n---\nLeader election timeouts matter.\n",
        author="al",
        model="m",
    )
    (card,) = store.search_notes("election")
    assert set(card.to_dict()) == CARD_KEYS
    assert card.kind == "conclusion" and card.tags == ["raft"] and card.author == "al" and card.model == "m"
    assert "**election**" in card.snippet and card.score > 0
    assert not hasattr(card, "text") and not hasattr(card, "body")


def test_title_weighs_three_times_the_body(store):
    body_hit = store.add_note("# Notes\n\n" + "zeppelin appears in this body once. " + "filler words here. " * 3)
    title_hit = store.add_note("# zeppelin\n\n" + "nothing relevant in this body at all. " + "filler words here. " * 3)
    for _ in range(5):
        store.add_note("unrelated note about boats and trains")
    ids = [c.id for c in store.search_notes("zeppelin")]
    assert ids == [title_hit.id, body_hit.id]


def test_recency_breaks_ties_two(store):
    old = store.add_note("identical text about walruses")
    time.sleep(0.01)
    new = store.add_note("identical text about walruses")
    assert [c.id for c in store.search_notes("walruses")] == [new.id, old.id]


def test_stemming_and_diacritics(store):
    n = store.add_note("We tried caching the naïve résumé parser")
    assert store.search_notes("cached")[0].id == n.id
    assert store.search_notes("naive resume")[0].id == n.id


def test_words_match_as_words_not_substrings(store):
    store.add_note("category theory")
    assert store.search_notes("cat") == []


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("素数", True),
        ("关于素数", True),
        ("素", True),
        ("数的笔记", True),
        ("整除", True),
        ("数素", False),
        ("素笔", False),
    ],
)
def test_chinese_substrings(store, query, found):
    from notewell.backends.sqlite.keyword import _ranked

    n = store.add_note("# 关于素数的笔记\n\n素数是只能被1和自身整除的数。\n")
    store.add_note("another note in English")
    # The all-words pass matches exactly the adjacent characters, whatever their number.
    strict = [r for r, _ in _ranked(store.backend.index, compile_query(query).strict, "", [], 10, set())[0]]
    assert (len(strict) == 1) is found
    if found:
        (card,) = store.search_notes(query)[:1]
        assert card.id == n.id and ("**" in card.snippet or query in card.title)


def test_japanese_and_mixed_script(store):
    n = store.add_note("東京でGPU加速のベンチマークを実行した")
    for q in ("東京", "ベンチマーク", "GPU", "加速"):
        assert [c.id for c in store.search_notes(q)] == [n.id], q
    (card,) = store.search_notes("ベンチ")
    assert "**ベンチ**" in card.snippet


def test_chinese_question_finds_note_by_pairs(store):
    n = store.add_note("缓存击穿：热点键过期时所有请求同时回源。")
    assert [c.id for c in store.search_notes("如何解决缓存击穿的问题")] == [n.id]


def test_natural_language_question(store):
    n = store.add_note("The dependency conflict between the HTTP client versions blocks the release.")
    store.add_note("Unrelated: the cafeteria menu.")
    cards = store.search_notes("how do we resolve a dependency conflict with versions?")
    assert cards[0].id == n.id


def test_all_words_first_then_any(store):
    both = store.add_note("alpha beta together")
    one = store.add_note("only alpha here, alpha again, alpha thrice")
    ids = [c.id for c in store.search_notes("alpha beta")]
    assert ids[0] == both.id and one.id in ids


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [
        "C++",
        "what?",
        "x.y",
        "email@host.com",
        "50%",
        "#tag",
        "it's",
        "foo AND",
        "cache)",
        "(cache",
        "foo-bar",
        "-cache",
        "a:b",
        "nosuchcol:x",
        '"unterminated',
        "one NEAR/2 three",
        "AND",
        "NOT cache",
        "*cache",
    ],
)
def test_odd_queries_never_crash(store, query):
    store.add_note("cache foo bar C++ what")
    assert isinstance(store.search_notes(query), list)


@pytest.mark.parametrize("query", ["", "   ", "???", "...", "-", "*"])
def test_queries_without_words_are_invalid(store, query):
    with pytest.raises(InvalidQueryError):
        store.search_notes(query)


def test_limit_validated(store):
    for bad in (0, -1, 100000, "5", True):
        with pytest.raises(InvalidArgumentError):
            store.search_notes("x", limit=bad)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40))
def test_any_query_returns_cards_or_invalid_query(store, query):
    if not store.list_notes(limit=1):
        store.add_note("some words to search 中文 text")
    try:
        cards = store.search_notes(query)
    except InvalidQueryError:
        return
    assert isinstance(cards, list)


def test_compile_query_quotes_terms():
    cq = compile_query("C++ foo?")
    assert cq.strict == '"C++" "foo?"' and not cq.raw
    assert compile_query("what is sqlite?").strict == '"sqlite?"'  # stop words are not required
    assert compile_query("what is").strict == '"what" "is"'  # ...unless there is nothing else
    assert compile_query("a OR b").raw


def test_filters(store_dir):
    s = notewell.open(store_dir)
    a = s.add_note("---\nkind: blocker\ntags: [x, y]\nmodel: m1\n---\nshared word", author="ann")
    b = s.add_note(f"---\nkind: conclusion\ntags: [x]\nbuilds_on: [{a.id}]\n---\nshared word", author="bob")
    c = s.add_note("---\nkind: Blocker\n---\nshared word", model="m2")

    def ids(**f):
        return {card.id for card in s.search_notes("shared", **f)} | set()

    assert ids(kind="blocker") == {a.id, c.id}
    assert ids(kind=["blocker", "conclusion"]) == {a.id, b.id, c.id}
    assert ids(tags=["x"]) == {a.id, b.id}
    assert ids(tags=["y", "x"], tag_mode="all") == {a.id}
    assert ids(tags=["y", "x"], tag_mode="any") == {a.id, b.id}
    assert ids(tags="Y") == {a.id}
    assert ids(author="bob") == {b.id}
    assert ids(model="m1") == {a.id}
    assert ids(model="m2") == {c.id}  # the model given to add_note counts when the header has none
    assert ids(builds_on=a.id) == {b.id}
    assert ids(created_after="2000-01-01") == {a.id, b.id, c.id}
    assert ids(created_before="2000-01-01") == set()
    assert ids(updated_after=s.get_note(b.id).updated_at) == {b.id, c.id}
    assert {card.id for card in s.list_notes(author="ann")} == {a.id}
    for bad in (
        {"created_after": "someday"},
        {"created_after": "7x"},
        {"tz": "Mars/Olympus", "created_after": "today"},
        {"tag_mode": "most", "tags": ["x"]},
        {"builds_on": "../x"},
        {"author": 3},
        {"colour": "red"},
    ):
        with pytest.raises(InvalidArgumentError):
            s.search_notes("shared", **bad)
    s.close()


def test_rank_window_ranks_the_newest_matches_and_keeps_title_hits(store, monkeypatch):
    from notewell.backends.sqlite import keyword

    monkeypatch.setattr(keyword, "RANK_WINDOW", 3)
    # Headings elsewhere: a note's first line is its title when it has none (issue 40).
    titled = store.add_note("# kiwi\n\nabout the fruit")  # the best match, written first
    old_body = store.add_note("# old\n\nkiwi kiwi kiwi kiwi in an old body")  # a strong body match, also old
    others = [store.add_note(f"# filler {i}\n\nkiwi and more words here") for i in range(5)]
    got = [c.id for c in store.search_notes("kiwi", limit=2)]
    assert got[0] == titled.id  # a title hit is never cut off by the window
    assert old_body.id not in got and got[1] in {n.id for n in others[-3:]}
    # Asking for more results than the window holds widens it.
    assert old_body.id in [c.id for c in store.search_notes("kiwi", limit=10)]
    # A filter is applied before the window: the window holds the newest *matching* notes.
    tagged = store.add_note("---\ntitle: tagged\ntags: [fruit]\n---\nkiwi")
    for i in range(4):
        store.add_note(f"# late {i}\n\nkiwi")
    assert [c.id for c in store.search_notes("kiwi", tags=["fruit"])] == [tagged.id]
    monkeypatch.setattr(keyword, "RANK_WINDOW", 4000)
    assert store.search_notes("kiwi")[0].id == titled.id


def test_many_exact_ties_go_to_the_newest(store):
    notes = [store.add_note("identical standup notes") for _ in range(40)]
    assert [c.id for c in store.search_notes("standup", limit=3)] == [n.id for n in notes[::-1][:3]]


def test_question_with_one_meaningful_word(store):
    n = store.add_note("# SQLite\n\nan embedded database")
    for q in ("sqlite", "what is sqlite?", "tell me about sqlite"):
        assert [c.id for c in store.search_notes(q)] == [n.id], q


def test_edit_moves_note_into_the_recent_window(store):
    a = store.add_note("plum")
    b = store.add_note("plum")
    store.edit_note(a.id, "plum!")
    assert [c.id for c in store.search_notes("plum")] == [a.id, b.id]


# -- column filters ---------------------------------------------------------------------------------------

COLUMN_NOTES = {
    "rs": "---\ntitle: Redis stampede\nkind: finding\n---\nthe cache refills at once\n",
    "cr": "---\ntitle: cache notes\n---\nredis is fast\n",
    "kv": "---\ntitle: other\n---\nthe key: value store, see http://x and the meta anna note\n",
}
COLUMN_QUERIES = [
    ("title:redis", {"rs"}),
    ("title:stampede", {"rs"}),
    ("body:cache", {"rs"}),
    ("body:redis", {"cr"}),
    ("Title:REDIS", {"rs"}),
    ("title : redis", {"rs"}),
    ('title:"redis stampede"', {"rs"}),
    ('title:"stampede redis"', set()),
    ("{title body}:stampede", {"rs"}),
    ("-title:cache", {"rs"}),  # FTS5's exclusion form: every column but the title
    ("-title:redis", {"cr"}),
    ("title:redis cache", {"rs"}),
    ("title:redis AND body:cache", {"rs"}),
    ("title:redis OR title:cache", {"rs", "cr"}),
    ("body:redis NOT title:redis", {"cr"}),
    ("(title:redis OR body:redis) AND fast", {"cr"}),
    ("title:(redis OR cache) NOT body:fast", {"rs"}),
    ("title:stamp*", {"rs"}),
    ("-{title body}:redis", set()),  # no column left to search
]


def _found(store, names, query, **filters):
    return {names[c.id] for c in store.search_notes(query, limit=50, **filters)}


def _all_words(store, names, query):
    """The notes the all-words pass finds (not those the loose pass fills up with)."""
    partial: dict[str, float] = {}
    cards = keyword_search(store.backend.index, query, limit=50, partial=partial)
    return {names[c.id] for c in cards if c.id not in partial}


@pytest.mark.slow
@pytest.mark.parametrize(("query", "expected"), COLUMN_QUERIES)
def test_column_filters(store, query, expected):
    names = {store.add_note(text).id: name for name, text in COLUMN_NOTES.items()}
    assert compile_query(query).raw  # read as FTS5 syntax, not as the words "title" and "redis"
    assert _found(store, names, query) == expected


def test_column_filters_with_the_stores_filters(store):
    names = {store.add_note(text).id: name for name, text in COLUMN_NOTES.items()}
    assert _found(store, names, "title:redis OR title:cache", kind="finding") == {"rs"}
    assert _found(store, names, "-title:redis OR title:redis", kind="finding") == {"rs"}
    assert _found(store, names, "body:redis NOT title:redis", kind="finding") == set()
    words = store.add_note("---\ntitle: words\n---\nthe title and the body refill\n")
    (card,) = [c for c in store.search_notes("{title body}:refill") if c.id == words.id]
    assert card.snippet == "the title and the body **refill**"  # column names are not words of the query


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("key: value", {"kv"}),
        ("http://x", {"kv"}),
        ("note: meta", {"kv"}),
        ("nosuchcolumn:redis", set()),
        ("title:", set()),  # a column filter with nothing after it: the word "title"
        ("meta:anna", {"kv"}),  # the filters' column is not one a query may name: plain words
        ("-meta:anna", {"kv"}),
        ("{title meta}:anna", set()),
    ],
)
def test_words_with_a_colon_that_are_not_column_filters_stay_words(store, query, expected):
    names = {store.add_note(text).id: name for name, text in COLUMN_NOTES.items()}
    assert not compile_query(query).raw
    assert _all_words(store, names, query) == expected


def test_no_query_reads_the_filters_column(store):
    note = store.add_note("---\ntitle: plain\ntags: [ops]\n---\nwords\n", author="anna", model="m1")
    tokens = [meta_token("a", "anna"), meta_token("t", "ops"), meta_token("m", "m1")]
    for token in tokens:
        for query in (token, f'"{token}"', f'-title:"{token}"', f'-{{title body}}:"{token}"', f'"{token[:3]}"*'):
            assert store.search_notes(query) == [], query
            assert "\ue000" not in compile_query(query).strict
    assert [c.id for c in store.search_notes("plain", author="anna", tags=["ops"])] == [note.id]


TITLE_ATOMS = ["alpha", "bravo", "charlie", "alp*", '"alpha bravo"', "^alpha", "NEAR(alpha bravo)", "AND", "OR", "NOT"]
TITLE_ATOMS += ["(", ")", "title:", "body:", "-title:", "-body:", "{title body}:", "meta:", "-{title body}:", "+"]
TITLES = ["alpha", "bravo", "alpha bravo", "bravo alpha charlie", "charlie", "alphabet"]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TITLE_ATOMS), min_size=1, max_size=7).map(" ".join))
def test_title_expression_matches_a_title_as_the_query_matches_the_note(query):
    # keyword.py finds title matches in titles_fts (the title alone); a note that holds nothing
    # but its title must match the query there exactly when it matches it in notes_fts.
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, body, meta, tokenize = 'porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, tokenize = 'porter unicode61')")
    for i, title in enumerate(TITLES, 1):
        conn.execute("INSERT INTO f(rowid, title, body, meta) VALUES (?, ?, '', '')", [i, title])
        conn.execute("INSERT INTO t(rowid, title) VALUES (?, ?)", [i, title])
    try:
        want = {r for (r,) in conn.execute("SELECT rowid FROM f WHERE f MATCH ?", [query])}
    except sqlite3.OperationalError:
        return  # FTS5 refuses it: it runs as plain words, never on titles_fts as written
    expr = title_expression(query)
    got = set() if expr is None else {r for (r,) in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", [expr])}
    assert got == want, (query, expr)
    parse_fts5(query)  # and the query parser read it as FTS5 did


# -- stop words ---------------------------------------------------------------------------------------------


def test_third_person_pronouns_are_stop_words():
    words = "he him his himself she her hers herself it its itself they them their theirs themselves"
    assert plain_terms(f"{words} parser").strict == ("parser",)
    assert plain_terms("myself ourselves yourself yourselves ours yours parser").strict == ("parser",)
    assert plain_terms("she said").strict == ("said",)


def test_a_question_about_someone_finds_the_note_through_the_all_words_pass(store):
    note = store.add_note("# Parser review\n\nWhat the reviewers say about the parser: it is slow on long lines.\n")
    store.add_note("# Other\n\nnothing to say here\n")
    partial: dict[str, float] = {}
    cards = keyword_search(store.backend.index, "what did she say about the parser", partial=partial)
    assert cards[0].id == note.id and note.id not in partial  # found by every word, not the loose pass


def _kestrel_store(s):
    for i in range(30):
        s.add_note(f"# filler {i}\n\nnothing to see {i}")
    b = s.add_note("# kestrel report\n\nbody " + "kestrel sighting " * 30)
    a = s.add_note("# kestrel report\n\nbody " + "sparrow sighting " * 30)  # newer, same lengths
    c = s.add_note("# harborage notes\n\nkestrel seen near the harborage")
    return a, b, c


def test_a_query_in_fts5_syntax_ranks_as_written_not_by_passages(store):
    a, b, c = _kestrel_store(store)
    # Tied in the title: the newest first (a body's words do not count for a title: query).
    assert [x.id for x in store.search_notes("title: kestrel")] == [a.id, b.id]
    # A word excluded with NOT is no evidence for a note, however loosely the text matches it.
    found = [x.id for x in store.search_notes("kestrel NOT harbor")]
    assert found.index(b.id) < found.index(c.id)
