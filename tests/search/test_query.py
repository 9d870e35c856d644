"""The query compiler's bounds: what a query may cost is bounded by what it says once."""

from __future__ import annotations

import pytest

from notewell import InvalidQueryError
from notewell.search.query import (
    LOOSE_MAX,
    MAX_PHRASE_TOTAL,
    MAX_PHRASE_WORDS,
    MAX_REPEATS,
    compile_query,
    plain_terms,
)


def test_plain_words_are_said_once_in_their_first_spelling():
    assert plain_terms("w W w, redis Redis cache w").strict == ("w", "redis", "cache")


def test_the_loose_pass_looks_for_at_most_loose_max_words():
    # 2,000 CJK characters made 2,000 pairs to match and to snippet: 0.35 s, growing with their square.
    # Each pair is a two-word phrase, so the pairs also stay within MAX_PHRASE_TOTAL words.
    run = "".join(chr(0x4E00 + i) for i in range(2000))
    assert len(plain_terms(run).loose) == min(LOOSE_MAX, MAX_PHRASE_TOTAL // 2)
    assert plain_terms("中文笔记").loose == ("中文", "文笔", "笔记")
    words = " ".join(f"w{i}" for i in range(100))
    assert len(plain_terms(words).loose) == LOOSE_MAX  # one-word terms cost no phrase words


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
    # FTS5's tokenizer parts a-b-c too: a hyphenated run is a phrase of its parts.
    with pytest.raises(InvalidQueryError, match=f"at most {MAX_PHRASE_WORDS} words"):
        compile_query('"' + "-".join(["kaaaa"] * 166) + '"')
    # Phrases of one query hold at most MAX_PHRASE_TOTAL words in all.
    twenty = '"' + " ".join(["kaaaa"] * 20) + '"'
    assert compile_query(f'{twenty} OR {twenty[:-1]} b"').raw is True
    with pytest.raises(InvalidQueryError, match=f"at most {MAX_PHRASE_TOTAL} words in all"):
        compile_query(" OR ".join([twenty[:-1] + f' k{i}"' for i in range(3)]))


def test_a_long_plain_word_is_searched_in_phrases_within_the_caps():
    # A plain hyphenated run, or a Chinese sentence, is the phrase of its parts: 166 of them took
    # 1.6 s. As plain words it is not refused: it is cut into phrases of MAX_PHRASE_WORDS, kept
    # in order while their words stay within MAX_PHRASE_TOTAL.
    from notewell.search.query import _tokens_in

    terms = plain_terms("-".join(f"w{i}" for i in range(166)) + " redis")
    assert terms.strict[-1] == "redis" and terms.strict[0].split() == [f"w{i}" for i in range(32)]
    assert sum(n for t in terms.strict if (n := _tokens_in(t)) > 1) <= MAX_PHRASE_TOTAL
    sentence = "".join(chr(0x4E00 + i) for i in range(40))
    assert compile_query(sentence).raw is False
    assert [_tokens_in(t) for t in plain_terms(sentence).strict] == [32, 8]


def test_a_phrase_in_fts5_syntax_may_be_written_at_most_max_repeats_times():
    assert compile_query(" AND ".join(['"kilo"'] * MAX_REPEATS)).raw is True
    with pytest.raises(InvalidQueryError, match=f"written {MAX_REPEATS + 1} times"):
        compile_query(" AND ".join(['"Kilo,"'] * MAX_REPEATS + ['"kilo"']))
