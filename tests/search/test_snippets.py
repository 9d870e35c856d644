"""Snippets found in the bodies directly (not with FTS5's snippet())."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.search.snippets import Phrase, densest, fold, make_snippet, phrases_of


def test_phrases_of_leaves_out_operators_columns_and_numbers():
    assert phrases_of('"kiwi" "pear"') == [Phrase(("kiwi",)), Phrase(("pear",))]
    assert phrases_of('"kiwi" OR "pear"') == [Phrase(("kiwi",)), Phrase(("pear",))]
    assert phrases_of('title : ("a b") AND NOT c') == [Phrase(("a", "b")), Phrase(("c",))]
    assert phrases_of("NEAR(alpha beta, 5) gam*") == [Phrase(("alpha",)), Phrase(("beta",)), Phrase(("gam",), True)]
    assert phrases_of('"\u200b素\u200b\u200b数\u200b"') == [Phrase(("素", "数"))]
    assert phrases_of('"say ""hi"""') == [Phrase(("say", "hi"))]
    assert phrases_of("AND OR") == []


def test_highlights_word_forms_the_stemmer_joins():
    body = "We run two containers. Running them is cheap; the container image is small."
    snip = make_snippet(body, phrases_of('"containers" "running"'))
    assert "**containers**" in snip and "**container**" in snip and "**Running**" in snip
    assert "**run**" in snip


def test_picks_the_passage_with_the_most_distinct_words():
    filler = " ".join(f"word{i}" for i in range(60))
    body = f"alpha at the start. {filler} then alpha and beta together here. {filler}"
    snip = make_snippet(body, phrases_of('"alpha" OR "beta"'))
    assert "**alpha** and **beta**" in snip
    assert snip.startswith("…") and snip.endswith("…")
    assert len(snip) < 260


def test_no_hit_gives_none_and_short_bodies_are_whole():
    assert make_snippet("nothing to see", phrases_of('"kiwi"')) is None
    assert make_snippet("", phrases_of('"kiwi"')) is None
    assert make_snippet("a kiwi", []) is None
    assert make_snippet("a kiwi", phrases_of('"kiwi"')) == "a **kiwi**"


def test_cjk_characters_in_a_row_form_one_highlight():
    snip = make_snippet("关于素数的笔记", phrases_of('"\u200b素\u200b\u200b数\u200b"'))
    assert snip == "关于**素数**的笔记"


def test_accents_and_case_fold():
    assert make_snippet("Un Café noir", phrases_of('"cafe"')) == "Un **Café** noir"
    assert make_snippet("ÜBER alles", phrases_of('"uber"')) == "**ÜBER** alles"


def test_prefix_and_phrase():
    assert make_snippet("the tokenizer tokenizes", phrases_of("tok*")) == "the **tokenizer** **tokenizes**"
    snip = make_snippet("new york is big; york is old", phrases_of('"new york"'))
    assert snip == "**new york** is big; york is old"


def test_unrelated_words_with_the_same_start_are_not_highlighted():
    assert make_snippet("the runtime is fast", phrases_of('"running"')) is None
    assert make_snippet("them and the", phrases_of('"the"')) == "them and **the**"


@pytest.mark.slow
@given(st.text(max_size=400), st.text(max_size=40))
def test_never_raises_and_only_shows_body_text(body, query):
    snip = make_snippet(body, phrases_of(query))
    if snip is not None:
        words = " ".join(body.split())
        for part in snip.replace("**", "").strip("…").split():
            assert part in words


def test_the_notes_own_bold_markers_do_not_pair_with_highlights():
    got = make_snippet("We **warm the cache** first, then read.", phrases_of("cache"))
    assert got == "We warm the **cache** first, then read."


def _densest_by_brute_force(hits, chars, lead):
    best, best_score = 0, (-1, -1)
    for anchor, _end, _n in hits:
        start = max(0, anchor - lead)
        inside = [h for h in hits if h[0] >= start and h[1] <= start + chars]
        score = (len({h[2] for h in inside}), len(inside))
        if score > best_score:
            best, best_score = start, score
    return best


@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(1, 12), st.integers(0, 3)), max_size=60),
    st.integers(1, 200),
    st.integers(0, 120),
)
@pytest.mark.slow
def test_the_densest_window_is_the_one_a_full_comparison_finds(gaps, chars, lead):
    hits, at = [], 0
    for gap, length, phrase in gaps:  # in text order, never overlapping, as a regex finds them
        at += gap
        hits.append((at, at + length, phrase))
        at += length
    assert densest(hits, chars, lead) == _densest_by_brute_force(hits, chars, lead)


def test_a_body_repeating_the_word_a_hundred_thousand_times_gets_its_snippet():
    body = "stress " * 100_000 + "the end"
    snippet = make_snippet(body, phrases_of('"stress"'))
    assert snippet is not None and snippet.startswith("**stress** **stress**")


def test_a_false_start_inside_a_word_does_not_hide_a_phrase():
    from notewell.search.snippets import find_hits, phrases_of

    assert find_hits("atest test test", phrases_of('"test test"')) == [(6, 15, 0)]


def test_a_snippet_scans_each_phrase_once_and_stops_at_enough_hits(monkeypatch):
    # One word written 100 times in a query scanned each 512 KiB body 100 times, every hit of
    # it: over 60 s for four notes. Each phrase is scanned once now, for its first hits only.
    from notewell.search import snippets

    seen = []
    real = snippets.scan
    monkeypatch.setattr(snippets, "scan", lambda folded, phrases, finder, most=None: seen.append(
        (len(phrases), most)) or real(folded, phrases, finder, most))  # fmt: skip
    body = "cache " * 100_000
    out = snippets.make_snippet(body, snippets.phrases_of(" ".join(["cache"] * 100)))
    assert out is not None and "**cache**" in out
    assert seen == [(1, snippets._HITS_MAX)]
    assert len(real(body, snippets.phrases_of("cache"), snippets.phrase_finder(snippets.phrases_of("cache")), 7)) == 7


@pytest.mark.slow
def test_a_query_of_a_thousand_words_reads_without_recursion():
    # 999 one-letter words made a phrase tree 1,000 deep, read recursively: RecursionError.
    from notewell.search.snippets import phrases_of

    words = " AND ".join(f'"w{i}"' for i in range(1500))
    assert len(phrases_of(words)) == 1500


def test_a_word_beside_cjk_characters_is_a_word_as_the_index_splits_it():
    # The index sees "我们用abc测试" as 我 们 用 abc 测 试: abc is found there, and highlighted.
    assert make_snippet("我们用abc测试 and more", phrases_of('"abc"')) == "我们用**abc**测试 and more"
    assert make_snippet("测试abc", phrases_of('"abc"')) == "测试**abc**"


_MIXED = st.lists(
    st.sampled_from([*"cache caching abc tests 数 测试 素 笔记 über café x_y . - 。".split(), " "]), max_size=30
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_MIXED.map("".join), st.sampled_from(["cache", "abc", "测试", "素 笔记", "tests abc", "café"]))
def test_raw_and_segmented_text_give_the_same_hits(text, query):
    # notewell's BM25 counts a query's phrases in the raw text; FTS5 indexed the segmented one.
    from notewell.model.cjk import segment
    from notewell.search.snippets import fold, phrase_finder, scan

    phrases = phrases_of(" ".join('"' + segment(w) + '"' for w in query.split()))
    finder = phrase_finder(phrases)
    raw = [n for _s, _e, n in scan(fold(text), phrases, finder)]
    segmented = [n for _s, _e, n in scan(fold(segment(text)), phrases, finder)]
    assert sorted(raw) == sorted(segmented)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_folding_keeps_every_offset_and_folds_each_character_alike(text):
    folded = fold(text)
    assert len(folded) == len(text)
    assert all(folded[i] == fold(text[i]) for i in range(len(text)))


def test_folding_a_long_note_reads_its_plain_runs_whole():
    text = ("Straße café ÉTÉ naïve Ünïcödé " + "素数的笔记 " + "x" * 40) * 200
    folded = fold(text)
    assert len(folded) == len(text) and "strasse" not in folded
    assert folded.startswith("straße cafe ete naive unicode 素数的笔记 ")


def _one_fold(ch: str) -> str:
    """A character folded on its own: case folded, accents dropped; itself when that is not one character."""
    import unicodedata

    folded = ch.casefold()
    if not folded.isascii():
        folded = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return folded if len(folded) == 1 else ch


@pytest.mark.slow
def test_folding_matches_each_characters_own_fold_everywhere():
    chars = [chr(cp) for cp in range(0x80, 0x30000) if not 0xD800 <= cp <= 0xDFFF]
    assert [c for c in chars if fold(c) != _one_fold(c)] == []
    text = "".join(chars[::7])
    assert fold(text) == "".join(_one_fold(c) for c in text)
