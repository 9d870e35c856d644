"""Keyword search on PostgreSQL reads a query as the embedded store does.

The FTS5 parser (search/query.py) is checked against FTS5 itself; the rest runs on a real
PostgreSQL server (the pg_server fixture; skipped, saying why, when none can be started),
beside an embedded store holding the same notes.
"""

from __future__ import annotations

import random
import sqlite3
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import notewell
from notewell import InvalidArgumentError, InvalidQueryError
from notewell.backends.postgres.keyword import pg_keyword_search
from notewell.backends.sqlite.keyword import keyword_search
from notewell.search.meta_tokens import meta_token
from notewell.search.query import BoolOp, Near, Phrase, QuerySyntaxError, compile_query, parse_fts5, plain_terms
from tests.backends.sqlite.test_keyword import COLUMN_NOTES, COLUMN_QUERIES

# -- the FTS5 grammar, without a server -------------------------------------------------------

FTS5_ATOMS = [
    *("alpha", "bravo", "NEAR", "near", "AND", "OR", "NOT", "(", ")", "{", "}", ":", ",", "+", "*", "-", "^"),
    *('"', '"x y"', '""', '"a""b"', "title", "body", "meta", "Title", "colour", "5", "后端", "\t", "\n", "\f"),
    *("\v", "\x1a", "\xa0", "?", ".", "x_y", "NEAR(", " ", " ", "'"),
]


@pytest.fixture(scope="module")
def fts5() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, body, meta, tokenize = 'porter unicode61')")
    conn.execute("INSERT INTO f VALUES ('alpha', 'bravo', 'x')")
    return conn


def _fts5_accepts(conn: sqlite3.Connection, query: str) -> bool:
    try:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", [query]).fetchall()
    except sqlite3.OperationalError:
        return False
    return True


def _parses(query: str) -> bool:
    try:
        parse_fts5(query)
    except QuerySyntaxError:
        return False
    return True


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(FTS5_ATOMS), min_size=1, max_size=9), st.sampled_from(["", " "]))
def test_parse_fts5_refuses_exactly_what_fts5_refuses(fts5, atoms, sep):
    query = sep.join(atoms)
    assert _parses(query) == _fts5_accepts(fts5, query), query


NESTS = ["(", "a OR (", "a NOT (", "title:(", "-title:(", "{title body}:(", "a OR title:("]
LEAVES = ["a", "a b c", "a + b*", "NEAR(a b, 5)", "title: ^a", "a OR b AND c NOT d", "{title body}: a + b", "a*"]


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(NESTS), min_size=20, max_size=100), st.sampled_from(LEAVES))
def test_parse_fts5_refuses_what_nests_too_deeply_for_fts5(fts5, opens, leaf):
    # FTS5's parser holds at most 100 symbols: 97 bare parentheses, 32 "a OR (".
    if _fts5_accepts(fts5, "(" * 200 + "a" + ")" * 200):
        pytest.skip("this SQLite's FTS5 parser grows its stack: parse_fts5 keeps to the fixed one")
    query = "".join(opens) + leaf + ")" * len(opens)
    assert _parses(query) == _fts5_accepts(fts5, query), query


def test_parse_fts5_keeps_fts5s_precedence_and_columns():
    a, b, c = (Phrase(((w, False),)) for w in "abc")
    assert parse_fts5("a OR b AND c") == BoolOp("OR", a, BoolOp("AND", b, c))
    assert parse_fts5("a AND b NOT c") == BoolOp("AND", a, BoolOp("NOT", b, c))
    assert parse_fts5("a b NOT c") == BoolOp("NOT", BoolOp("AND", a, b), c)  # side by side binds tightest
    assert parse_fts5("a NOT b NOT c") == BoolOp("NOT", BoolOp("NOT", a, b), c)
    assert parse_fts5('"a b"* + c') == Phrase((("a b", True), ("c", False)))
    assert parse_fts5("-title: a") == Phrase((("a", False),), frozenset({"body", "meta"}))
    assert parse_fts5("title: (a OR body: b)") == BoolOp(
        "OR", Phrase((("a", False),), frozenset({"title"})), Phrase((("b", False),), frozenset())
    )
    assert parse_fts5("NEAR(a b, 3)") == Near((a, b), 3)
    for bad in ("(a) b", "a AND", "NOT a", "near(a b)", "NEAR(a b, x)", "colour: a", '"open', "a-b", "(" * 1999):
        with pytest.raises(QuerySyntaxError):
            parse_fts5(bad)


def test_plain_terms_are_what_compile_query_quotes():
    words = plain_terms("how do we fix C++ caching?")
    assert words.strict == ("fix", "C++", "caching?")
    assert compile_query("how do we fix C++ caching?").strict == '"fix" "C++" "caching?"'
    assert plain_terms("缓存击穿 redis").loose == ("缓存", "存击", "击穿", "redis")
    assert plain_terms("缓存击穿 redis", cjk_gram=3).loose == ("缓存击", "存击穿", "redis")
    assert plain_terms("what is").strict == ("what", "is")  # stop words count when alone


# -- on a server, beside the embedded store -------------------------------------------------------

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "the", "once", "what", "数据库", "服务器"]


def _corpus() -> list[str]:
    """Short notes (under NEAR's ten tokens, so NEAR's distance never matters) of WORDS."""
    rnd = random.Random(7)
    notes = []
    for _ in range(16):
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 2)))
        body = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 6)))
        notes.append(f"---\ntitle: {title}\n---\n{body}\n")
    return [*notes, "---\ntitle: alpha bravo\n---\ncharlie delta echo\n", "---\ntitle: C++ tips\n---\nwhat? alpha\n"]


@pytest.fixture(scope="module")
def pair(pg_server, tmp_path_factory):
    """(embedded store, PostgreSQL store, {id: corpus index}) holding the same notes."""
    import psycopg

    name = "nw_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    lite = notewell.open(tmp_path_factory.mktemp("pair") / "notes")
    pg = notewell.open(f"{pg_server.rpartition('/')[0]}/{name}")
    index = {}
    for store in (lite, pg):
        for i, text in enumerate(_corpus()):
            index[store.add_note(text).id] = i
    try:
        yield lite, pg, index
    finally:
        lite.close()
        pg.close()
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _found(store, index, query):
    try:
        return sorted(index[c.id] for c in store.search_notes(query, limit=50))
    except InvalidQueryError:
        return "invalid_query"


# Everything both stores read alike. Left out, as the module docstring of pg_search says:
# stop words at the edge of a phrase, "+" joins, ^, NEAR's distance, CJK next to Latin in
# one phrase.
QUERY_ATOMS = [
    *WORDS,
    *("AND", "OR", "NOT", "(", ")", '"alpha bravo"', '"charlie delta"', '"echo alpha"*', "alp*", "br*"),
    *("title:", "body:", "-title:", "NEAR(", "NEAR(alpha bravo)", "NEAR(alpha 数据库, 20)", '"数据库"'),
    *("C++", "what?", "-", "{title body}:"),
]


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(QUERY_ATOMS), min_size=1, max_size=5).map(" ".join))
def test_both_stores_find_the_same_notes(pair, query):
    lite, pg, index = pair
    assert _found(pg, index, query) == _found(lite, index, query), query


@pytest.mark.parametrize(
    "query",
    [
        "alpha bravo",
        "alpha OR bravo",
        "alpha NOT bravo",
        '"alpha bravo"',
        "alp*",
        "(alpha OR echo) AND delta",
        "title: alpha",
        "NEAR(alpha bravo)",
        "alpha AND OR bravo",  # FTS5 refuses it: plain words
        "C++",
        "what?",
        "数据库 alpha",
        "数据库 OR 服务器",
        "数据",  # two characters and one: the cjk_grams column, not trigrams
        "库 NOT alpha",
        "alpha zulu",  # nothing holds both: the loose pass
        "title:alpha",
        "body:alpha",
        "-title:alpha",
        "{title body}:charlie",
        'title:"alpha bravo"',
        "title:alpha OR body:echo",
        "body:delta NOT title:delta",
        "meta:alpha bravo",  # not a column a query may name: plain words
        "alpha: bravo",
    ],
)
def test_each_form_finds_the_same_notes_on_both(pair, query):
    lite, pg, index = pair
    found = _found(lite, index, query)
    assert found and found != "invalid_query"
    assert _found(pg, index, query) == found


@pytest.fixture
def pg(pg_store_url):
    store = notewell.open(pg_store_url)
    yield store
    store.close()


def test_a_phrase_stays_in_the_title_or_the_body(pg):
    # The tsv column runs the body's positions on from the title's.
    split = pg.add_note("---\ntitle: cache\n---\nstampede here\n")
    whole = pg.add_note("---\ntitle: notes\n---\nthe cache stampede again\n")
    assert [c.id for c in pg.search_notes('"cache stampede"')] == [whole.id]
    assert [c.id for c in pg.search_notes("NEAR(cache stampede)")] == [whole.id]
    assert {c.id for c in pg.search_notes("cache stampede")} == {split.id, whole.id}
    assert [c.id for c in pg.search_notes("title: cache AND stampede")] == [split.id]
    assert [c.id for c in pg.search_notes("body: cache AND stampede")] == [whole.id]


def _both(pg, tmp_path, texts):
    """(embedded store, {PostgreSQL id: name}, {embedded id: name}) holding *texts* (name: text)."""
    lite = notewell.open(tmp_path / "notes")
    on_pg = {pg.add_note(text).id: name for name, text in texts.items()}
    on_lite = {lite.add_note(text).id: name for name, text in texts.items()}
    return lite, on_pg, on_lite


def _all_words(store, names, query):
    """The names of the notes the all-words pass finds on PostgreSQL (not the loose pass's)."""
    partial: set[str] = set()
    with store.backend.db.transaction() as conn:
        cards = pg_keyword_search(conn, query, limit=50, partial=partial)
    return {names[c.id] for c in cards if c.id not in partial}


def test_column_filters_find_what_they_find_on_sqlite(pg, tmp_path):
    lite, on_pg, on_lite = _both(pg, tmp_path, COLUMN_NOTES)
    with lite:
        for query, expected in COLUMN_QUERIES:
            assert {on_pg[c.id] for c in pg.search_notes(query, limit=50)} == expected, query
            assert {on_lite[c.id] for c in lite.search_notes(query, limit=50)} == expected, query
        assert {on_pg[c.id] for c in pg.search_notes("title:redis OR title:cache", kind="finding")} == {"rs"}
        assert pg.search_notes("body:redis", kind="finding") == []
        for query in ("key: value", "http://x", "meta:anna", "-meta:anna", "note: meta"):
            assert _all_words(pg, on_pg, query) == {"kv"}, query  # plain words, as on SQLite
        assert _all_words(pg, on_pg, "title:") == set()


def test_no_query_reads_the_filter_tokens_on_postgresql(pg):
    pg.add_note("---\ntitle: plain\ntags: [ops]\n---\nwords\n", author="anna")
    token = meta_token("a", "anna")
    for query in (token, f'-title:"{token}"', f'"{token[:3]}"*', f"{token} OR words"):
        assert len(pg.search_notes(query)) == (1 if "words" in query else 0), query


def test_a_question_about_someone_finds_the_note_through_the_all_words_pass_on_both(pg, tmp_path):
    texts = {
        "parser": "# Parser review\n\nWhat the reviewers say about the parser: it is slow on long lines.\n",
        "she": "# Other\n\nshe had nothing to say here\n",
    }
    lite, on_pg, on_lite = _both(pg, tmp_path, texts)
    with lite:
        query = "what did she say about the parser"
        assert _all_words(pg, on_pg, query) == {"parser"}
        partial: dict[str, float] = {}
        with_lite = keyword_search(lite.backend.index, query, limit=50, partial=partial)
        assert {on_lite[c.id] for c in with_lite if c.id not in partial} == {"parser"}
        # The loose pass: "say" and "parser" on both, never "she".
        assert {on_pg[c.id] for c in pg.search_notes(query)} == {on_lite[c.id] for c in with_lite} == set(texts)
        assert plain_terms(query).loose == ("say", "parser")


def test_stop_words_are_found_by_reading_the_text(pg):
    asked = pg.add_note("# C++ templates\n\nwhat? they are hard\n")
    pg.add_note("# other\n\nnothing to see\n")
    assert [c.id for c in pg.search_notes("what?")] == [asked.id]
    assert [c.id for c in pg.search_notes("templates AND what")] == [asked.id]
    assert pg.search_notes("templates NOT what") == []
    assert [c.id for c in pg.search_notes("once OR templates")] == [asked.id]


def test_cjk_and_latin_words_are_both_required(pg):
    both = pg.add_note("# 缓存\n\n缓存击穿导致数据库过载 redis\n")
    zh_only = pg.add_note("# 数据库\n\n数据库过载\n")
    pg.add_note("# redis\n\nredis only\n")
    cards = pg.search_notes("数据库 redis")
    assert cards[0].id == both.id
    assert [c.id for c in pg.search_notes("数据库 AND redis")] == [both.id]
    assert [c.id for c in pg.search_notes("数据库 NOT redis")] == [zh_only.id]
    assert [c.id for c in pg.search_notes("库过")] == [zh_only.id, both.id]  # a substring, newest first
    assert "**数据库**" in pg.search_notes('"数据库" AND redis')[0].snippet


def test_a_chinese_question_fills_up_with_two_character_pieces(pg):
    note = pg.add_note("# 笔记\n\n关于数据库的笔记\n")
    other = pg.add_note("# 过载\n\n服务过载了\n")
    # No note holds the whole run: the loose pass's pairs (数据, 据库, 过载, …) find both.
    assert {c.id for c in pg.search_notes("数据库为什么会过载")} == {note.id, other.id}


def test_one_and_two_character_cjk_words_are_found_in_the_title_and_the_body(pg, tmp_path):
    in_title = pg.add_note("---\ntitle: 素数表\n---\nprimes\n")
    in_body = pg.add_note("---\ntitle: primes\n---\n关于素数的笔记\n")
    pg.add_note("---\ntitle: 素\n---\n数\n")  # the two characters, split between the title and the body
    gap = pg.add_note("---\ntitle: gap\n---\n素 数，素、数\n")  # and with a gap between them
    alone = pg.add_note("---\ntitle: 𠀀\n---\nan extension B character\n")
    # Ranked by their passages as on SQLite: the title counts three times (not the newest first).
    assert [c.id for c in pg.search_notes("素数")] == [in_title.id, in_body.id]
    assert [c.id for c in pg.search_notes('title: "素数"')] == [in_title.id]
    assert [c.id for c in pg.search_notes('body: "素数"')] == [in_body.id]
    assert [c.id for c in pg.search_notes("素数 NOT primes")] == []
    assert len(pg.search_notes("数")) == 4  # every note holding it, in the title or the body
    assert [c.id for c in pg.search_notes("𠀀")] == [alone.id]
    assert [c.id for c in pg.search_notes("数素")] == []  # pairs the notes hold, never in that order
    with notewell.open(tmp_path / "notes") as lite:
        ids = {pg.get_note(n.id).text: n.id for n in (in_title, in_body, alone)}
        for note in pg.list_notes(limit=10):
            if note.id != gap.id:  # FTS5 reads 素 数 as adjacent words: a known difference
                ids.setdefault(pg.get_note(note.id).text, note.id)
        same = {lite.add_note(text).id: nid for text, nid in ids.items()}
        for query in ("素数", 'title: "素数"', 'body: "素数"', "数", "𠀀", "数素", "素数 NOT primes"):
            found = {c.id for c in pg.search_notes(query)} - {gap.id}
            assert {same[c.id] for c in lite.search_notes(query)} == found, query


def test_a_stop_word_query_finds_the_newest_notes_holding_it(pg):
    old = [n.id for n in pg.add_notes([f"# old {i}\n\nwhom to ask {i}\n" for i in range(5)])]
    filler = pg.add_notes([f"# filler {i}\n\nnothing here {i}\n" for i in range(20)])
    new = [n.id for n in pg.add_notes([f"# new {i}\n\nwhat happened {i}\n" for i in range(6)])]
    assert [c.id for c in pg.search_notes("what", limit=3)] == new[::-1][:3]
    assert [c.id for c in pg.search_notes("whom", limit=3)] == old[::-1][:3]
    assert {c.id for c in pg.search_notes("whom OR what", limit=20)} == {*old, *new}
    assert {c.id for c in pg.search_notes("ask NOT what", limit=20)} == set(old)
    assert {c.id for c in pg.search_notes("nothing what", limit=40)} >= {n.id for n in filler}  # the loose pass


def test_add_notes_gives_each_note_as_get_note_does(pg):
    run = pg.start_attempt("bulk", author="ada")
    base = pg.add_note("# base\n\nfirst\n")
    added = pg.add_notes(
        [f"---\ntitle: n{i}\ntags: [a, b]\nbuilds_on: [{base.id}]\n---\nbody {i} 数据\n" for i in range(3)],
        attempt=run.id,
        model="m1",
    )
    assert added == [pg.get_note(n.id) for n in added]
    assert added[0].attempt["notes"] == 3 and added[0].tags == ["a", "b"] and added[0].model == "m1"
    assert sorted(b["id"] for b in pg.get_note(base.id).backlinks) == sorted(n.id for n in added)
    assert [h["op"] for h in pg.history(added[0].id)] == ["add"]


@pytest.mark.parametrize(
    "query",
    [
        "it's",
        "a\\b",
        "'; DROP TABLE notes; --",
        "cache') OR ('1'='1",
        "\"x''y\"",
        "!cache & | <-> :*",
        "cache:*A",
        "((((cache))))",
        "%_ 缓存%_",
        "title: '",
    ],
)
def test_quotes_and_operators_in_words_stay_words(pg, query):
    note = pg.add_note("# cache\n\nit's a\\b test; drop table notes\n")
    pg.search_notes(query)  # no error
    assert pg.get_note(note.id).id == note.id  # and the table is still there


def test_offsets_and_filter_values_are_checked_before_the_database(pg):
    pg.add_note("# x\n\ny\n", author="ada")
    for offset in (2**63, 10**5000, -1):
        with pytest.raises(InvalidArgumentError, match="offset"):
            pg.list_notes(offset=offset)
    assert pg.list_notes(offset=2**63 - 1) == []
    for name in ("author", "model"):
        with pytest.raises(InvalidArgumentError, match=name):
            pg.list_notes(**{name: "\ud800"})
    with pytest.raises(InvalidQueryError, match="surrogate"):
        pg.search_notes("cache \ud800")


HOSTILE = "ab cache 缓存 数据库 \"'\\*()^:-+{},.!?&|<>@%_\t\n\u200b\u3000\ud800ü—NEARANDORNOT"
QUERIES = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=HOSTILE, max_size=30),
    st.lists(st.sampled_from(QUERY_ATOMS + ["'", "\\", "!", "&", "|", "<->", ":*", "%"]), max_size=8).map(" ".join),
)


@settings(max_examples=300, deadline=None)
@given(QUERIES)
def test_any_query_on_postgresql_is_cards_or_invalid_query(pair, query):
    _, pg, _ = pair
    try:
        cards = pg.search_notes(query)
    except InvalidQueryError as exc:
        assert exc.code == "invalid_query" and "\n" not in exc.message
        return
    assert isinstance(cards, list)


def test_a_cjk_phrase_in_half_the_notes_does_not_outweigh_a_rare_word(pg):
    for i in range(200):
        pg.add_note(f"# note {i}\n\nordinary text number {i} 数据库很慢")
    pad = "filler words here " * 30
    a = pg.add_note(f"# A\n\n{pad} kestrel kestrel kestrel 数据库 {pad}")
    b = pg.add_note(f"# B\n\n{pad} kestrel 数据库 数据库 数据库 数据库 数据库 {pad}")
    # As SQLite ranks them: a CJK phrase has no lexeme to count, so it weighs as the scan weighs it.
    assert [c.id for c in pg.search_notes("数据库 kestrel", mode="keyword", limit=2)] == [a.id, b.id]
