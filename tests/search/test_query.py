"""The query compiler's bounds: what a query may cost is bounded by what it says once."""

from __future__ import annotations

import pytest

from notewell import InvalidQueryError
from notewell.search.query import LOOSE_MAX, MAX_PHRASE_WORDS, MAX_REPEATS, compile_query, plain_terms


def test_plain_words_are_said_once_in_their_first_spelling():
    assert plain_terms("w W w, redis Redis cache w").strict == ("w", "redis", "cache")


def test_the_loose_pass_looks_for_at_most_loose_max_words():
    # 2,000 CJK characters made 2,000 pairs to match and to snippet: 0.35 s, growing with their square.
    run = "".join(chr(0x4E00 + i) for i in range(2000))
    assert len(plain_terms(run).loose) == LOOSE_MAX
    assert plain_terms("中文笔记").loose == ("中文", "文笔", "笔记")


def test_a_phrase_has_at_most_max_phrase_words():
    # FTS5 checks a phrase word by word where its first word appears: a 200-word phrase of one word
    # took 1.4 s on 4 notes holding it 100,000 times each (7 ms a word). A NEAR group counts too,
    # and a CJK run counts as the characters it is matched by.
    fits = '"' + " ".join(["kaaaa"] * MAX_PHRASE_WORDS) + '"'
    assert compile_query(fits).raw is True
    for query in (
        '"' + " ".join(["kaaaa"] * (MAX_PHRASE_WORDS + 1)) + '"',
        'NEAR("' + " ".join(["a"] * 40) + '" b)',
        '"' + "".join(chr(0x4E00 + i) for i in range(80)) + '"',
    ):
        with pytest.raises(InvalidQueryError, match=f"at most {MAX_PHRASE_WORDS} words"):
            compile_query(query)
    assert compile_query(" ".join(["kilo"] * 200)).raw is False  # plain words: said once, no phrase


def test_a_phrase_in_fts5_syntax_may_be_written_at_most_max_repeats_times():
    assert compile_query(" AND ".join(['"kilo"'] * MAX_REPEATS)).raw is True
    with pytest.raises(InvalidQueryError, match=f"written {MAX_REPEATS + 1} times"):
        compile_query(" AND ".join(['"Kilo,"'] * MAX_REPEATS + ['"kilo"']))
