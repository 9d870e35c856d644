"""Turning what a person or agent typed into FTS5 match expressions.

- Plain words are quoted one by one (so ``C++``, ``what?`` or ``foo-bar`` never
  raise) and must all appear (AND), English stop words aside.
- When fewer notes than asked for contain every word, a second, looser pass
  matches any of the meaningful words (English stop words dropped; CJK text
  split into overlapping pairs of characters), ranked by BM25, so a
  natural-language question still finds notes that use only some of its words.
- Queries written in FTS5 syntax (AND/OR/NOT, "phrases", prefix*, NEAR(),
  parentheses) run as written; if FTS5 rejects them they run as plain words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..errors import InvalidQueryError
from ..model.cjk import CJK_RE, segment

__all__ = ["MAX_QUERY_CHARS", "CompiledQuery", "compile_query", "quote_terms"]

MAX_QUERY_CHARS = 2000
_SYNTAX = re.compile(r'["*()^]|\b(?:AND|OR|NOT)\b|\bNEAR\(')
_STOP = frozenset(
    """a an the is are was were be been being am of to in on at for and or nor but with without how what
    why when where which who whom whose do does did doing i me my we us our you your it its this that these
    those can could should would will shall may might must there here any some about from by as not no
    into onto than then so if else has have had having just also very more most such only own same too
    please tell show find give""".split()
)


@dataclass(frozen=True, slots=True)
class CompiledQuery:
    """Match expressions for one query: ``strict`` first, ``loose`` to fill up."""

    strict: str
    loose: str | None
    raw: bool
    fallback: str | None = None  # the quoted form, used if FTS5 rejects a raw query
    loose_terms: tuple[str, ...] = ()  # the quoted terms that ``loose`` ORs together


def _has_word_chars(term: str) -> bool:
    return any(unicodedata.category(c)[0] in "LN" for c in term)


def _quote(term: str) -> str:
    return '"' + segment(term).replace('"', '""') + '"'


def quote_terms(terms: list[str], op: str = " ") -> str:
    return op.join(_quote(t) for t in terms)


def _is_stop(term: str) -> bool:
    return term.casefold().strip(".,;:!?'\"()") in _STOP


def _loose_terms(terms: list[str]) -> list[str]:
    out: list[str] = []
    for term in terms:
        if CJK_RE.search(term):
            # A CJK run has no spaces: overlapping character pairs stand in for its words.
            for run in re.findall(CJK_RE.pattern + "+", term):
                pairs = [run[i : i + 2] for i in range(max(1, len(run) - 1))]
                out.extend(pairs)
            rest = CJK_RE.sub(" ", term).split()
            out.extend(r for r in rest if _has_word_chars(r) and r.casefold() not in _STOP)
        elif not _is_stop(term):
            out.append(term)
    seen: set[str] = set()
    return [t for t in out if not (t in seen or seen.add(t))]


def _balanced(query: str) -> bool:
    """True when the query's parentheses (outside "quoted" strings) pair up. The match
    expression is placed inside parentheses before the filters are ANDed to it; a query
    that closes more than it opens would escape them, so it runs as plain words."""
    depth = 0
    quoted = False
    for ch in query:
        if ch == '"':
            quoted = not quoted  # a doubled "" inside quotes flips twice: no change
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and not quoted


def compile_query(query: str) -> CompiledQuery:
    """Compile *query*; raises InvalidQueryError when it has nothing to search for."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if "\x00" in query:
        raise InvalidQueryError("query contains a NUL character")
    terms = [t for t in query.split() if _has_word_chars(t)]
    if not terms:
        raise InvalidQueryError(
            "query has no words to search for" if query.strip() else "query is empty: give search words"
        )
    # Stop words are in nearly every note: requiring them narrows nothing and makes
    # FTS5 walk a posting list as long as the store. They count only on their own.
    content = [t for t in terms if not _is_stop(t)]
    quoted = quote_terms(content or terms)
    loose_terms = _loose_terms(terms)
    # The loose pass runs when it can find more than the strict one: any of several words,
    # or the one meaningful word of a question.
    has_loose = len(loose_terms) > 1 or (loose_terms and loose_terms != content)
    if _SYNTAX.search(query) and _balanced(query):
        return CompiledQuery(strict=segment(query), loose=None, raw=True, fallback=quoted)
    if not has_loose:
        return CompiledQuery(strict=quoted, loose=None, raw=False)
    quoted_loose = tuple(_quote(t) for t in loose_terms)
    return CompiledQuery(strict=quoted, loose=" OR ".join(quoted_loose), raw=False, loose_terms=quoted_loose)
