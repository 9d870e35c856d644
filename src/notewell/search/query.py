"""Turning what a person or agent typed into FTS5 match expressions.

- Plain words are quoted one by one (so ``C++``, ``what?`` or ``foo-bar`` never
  raise) and must all appear (AND), English stop words aside.
- When fewer notes than asked for contain every word, a second, looser pass
  matches any of the meaningful words (English stop words dropped; CJK text
  split into overlapping pairs of characters), ranked by BM25, so a
  natural-language question still finds notes that use only some of its words.
- Queries written in FTS5 syntax (AND/OR/NOT, "phrases", prefix*, NEAR(),
  parentheses, column filters ``title:`` ``body:`` ``-title:`` ``{title body}:``) run
  as written when :func:`parse_fts5` reads them over the columns a query may name
  (SEARCH_COLUMNS); otherwise, or if FTS5 rejects them, they run as plain words. So
  ``note:``, ``http://x`` or ``key: value`` stay words, and so does ``meta:``: the meta
  column holds the filters' tokens, which no query reads (nor the mark they start with).
- :func:`title_expression` rewrites an expression for titles_fts, the title-only index.
- For a backend without FTS5, :func:`plain_terms` gives the plain words unquoted and
  :func:`parse_fts5` reads FTS5 syntax into a tree (refusing what FTS5 refuses).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..errors import InvalidQueryError
from ..model.cjk import CJK_RE, has_cjk, segment
from .meta_tokens import meta_token

__all__ = [
    "FTS5_COLUMNS",
    "LOOSE_MAX",
    "MAX_PHRASE_TOTAL",
    "MAX_PHRASE_WORDS",
    "MAX_PREFIX_TERMS",
    "MIN_PREFIX_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_REPEATS",
    "SEARCH_COLUMNS",
    "STOP_WORDS",
    "BoolOp",
    "CompiledQuery",
    "Near",
    "Node",
    "Phrase",
    "PlainTerms",
    "QuerySyntaxError",
    "check_query_text",
    "compile_query",
    "parse_fts5",
    "phrases_in",
    "plain_terms",
    "quote_terms",
    "title_expression",
]

MAX_QUERY_CHARS = 2000
# Each ``word*`` makes the index merge the lists of every word it begins (all of them, for
# ``a*``), and every snippet look for them all: 333 of them took 30 s. Eight cost at most
# about 0.3 s on the stores measured (benchmarks/bench_hostile.py).
MAX_PREFIX_TERMS = 8
# A one-letter prefix begins a large share of every word in the store (``t*``: 0.28 s on 30,000
# notes, eight of them 0.67 s); two letters cut that by three or more. One CJK character will do.
# A query with a shorter one is read as plain words.
MIN_PREFIX_CHARS = 2
# FTS5 weighs a phrase written n times n times over, at a cost that grows with n squared on notes
# holding it often: plain words are said once (plain_terms); a query in FTS5 syntax may repeat one
# this often.
MAX_REPEATS = 4
# FTS5 checks a phrase word by word at every place its first word appears: on notes that hold
# one word 100,000 times, each word of a phrase of it costs about 7 ms, so 200 took 1.4 s.
MAX_PHRASE_WORDS = 32
# ... and the phrases of one query hold at most this many words in all (a phrase of one word
# costs no more than a word). A plain query keeps its phrases in the order written up to it.
MAX_PHRASE_TOTAL = 48
LOOSE_MAX = 64  # words (or CJK pairs) the loose pass looks for: any of them fills up the results
_SYNTAX = re.compile(r'["*()^:]|\b(?:AND|OR|NOT)\b|\bNEAR\(')
# Every token of notes_fts.meta starts with this mark; taken out of queries, no query
# word can be one of them, whatever column set it names (``-title:`` includes meta).
_FILTER_MARK = meta_token("", "")
_STOP = frozenset(
    """a an the is are was were be been being am of to in on at for and or nor but with without how what
    why when where which who whom whose do does did doing i me my myself we us our ours ourselves you your
    yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs
    themselves this that these those can could should would will shall may might must there here any some
    about from by as not no into onto than then so if else has have had having just also very more most
    such only own same too please tell show find give""".split()
)
STOP_WORDS = _STOP  # words in nearly every note: they say nothing about what one is about


@dataclass(frozen=True, slots=True)
class CompiledQuery:
    """Match expressions for one query: ``strict`` first, ``loose`` to fill up."""

    strict: str
    loose: str | None
    raw: bool
    fallback: str | None = None  # the quoted form, used if FTS5 rejects a raw query
    loose_terms: tuple[str, ...] = ()  # the quoted terms that ``loose`` ORs together
    text: str = ""  # the query as searched (the filter mark taken out): what PostgreSQL parses


def _has_word_chars(term: str) -> bool:
    return any(unicodedata.category(c)[0] in "LN" for c in term)


def _quote(term: str) -> str:
    return '"' + segment(term).replace('"', '""') + '"'


def quote_terms(terms: list[str], op: str = " ") -> str:
    return op.join(_quote(t) for t in terms)


def _is_stop(term: str) -> bool:
    return term.casefold().strip(".,;:!?'\"()") in _STOP


def _loose_terms(terms: list[str], gram: int = 2) -> list[str]:
    out: list[str] = []
    for term in terms:
        if CJK_RE.search(term):
            # A CJK run has no spaces: overlapping character pairs stand in for its words.
            for run in re.findall(CJK_RE.pattern + "+", term):
                pairs = [run[i : i + gram] for i in range(max(1, len(run) - gram + 1))]
                out.extend(pairs)
            rest = CJK_RE.sub(" ", term).split()
            out.extend(p for r in rest if _has_word_chars(r) and r.casefold() not in _STOP for p in _pieces(r))
        elif not _is_stop(term):
            out.extend(_pieces(term))
    seen: set[str] = set()
    # The first LOOSE_MAX: each is a phrase to match and to find in every snippet, and 2,000 CJK
    # characters make 2,000 pairs (0.35 s, growing with their square).
    return [t for t in out if not (t in seen or seen.add(t))][:LOOSE_MAX]


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


def check_query_text(query: object) -> str:
    """*query* if it is text any engine may read (a string of at most MAX_QUERY_CHARS, with no
    NUL and no lone surrogate), else InvalidQueryError: the checks every mode shares."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if "\x00" in query:
        raise InvalidQueryError("query contains a NUL character")
    if not query.isascii():
        try:
            query.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidQueryError("query is not valid Unicode text (it holds a lone surrogate)") from None
    return query


def compile_query(query: str) -> CompiledQuery:
    """Compile *query*; raises InvalidQueryError when it has nothing to search for."""
    query = check_query_text(query).replace(_FILTER_MARK, " ")
    words = plain_terms(query)
    if not words.strict:
        raise InvalidQueryError(
            "query has no words to search for" if query.strip() else "query is empty: give search words"
        )
    quoted = quote_terms(list(words.strict))
    loose_terms = list(words.loose)
    # The loose pass runs when it can find more than the strict one: any of several words,
    # or the one meaningful word of a question.
    has_loose = len(loose_terms) > 1 or (loose_terms and loose_terms != list(words.strict))
    if _SYNTAX.search(query) and _balanced(query) and (node := _readable(query)) is not None:
        repeated = _most_repeated(node)
        if repeated[1] > MAX_REPEATS:
            raise InvalidQueryError(
                f"the phrase {repeated[0]!r} is written {repeated[1]} times; at most {MAX_REPEATS} (once is enough)"
            )
        sizes = [size for phrase in phrases_in(node) if (size := _phrase_words(phrase)) > 1]
        if sizes and max(sizes) > MAX_PHRASE_WORDS:
            raise InvalidQueryError(_too_long_phrase(max(sizes)))
        if sum(sizes) > MAX_PHRASE_TOTAL:
            raise InvalidQueryError(
                f"the phrases of a query hold at most {MAX_PHRASE_TOTAL} words in all; these hold {sum(sizes)}"
            )
        prefixes = _prefixes(node)
        if len(prefixes) > MAX_PREFIX_TERMS:
            raise InvalidQueryError(
                f"too many prefix terms: the query has {len(prefixes)} (word*); the limit is {MAX_PREFIX_TERMS}"
            )
        # A one-letter prefix is read as the plain words instead: "A* heuristic" means the A*
        # algorithm, not every word that starts with a (which cost the most of any query).
        if all(len(stem) >= MIN_PREFIX_CHARS or has_cjk(stem) for stem in prefixes):
            return CompiledQuery(strict=segment(query), loose=None, raw=True, fallback=quoted, text=query)
    if not has_loose:
        return CompiledQuery(strict=quoted, loose=None, raw=False, text=query)
    quoted_loose = tuple(_quote(t) for t in loose_terms)
    return CompiledQuery(
        strict=quoted, loose=" OR ".join(quoted_loose), raw=False, loose_terms=quoted_loose, text=query
    )


def _readable(query: str) -> Node | None:
    """*query* read as FTS5 syntax naming only SEARCH_COLUMNS, or None. Read by FTS5's grammar
    here rather than left to FTS5, so that ``meta:`` (which FTS5 would accept) and words with
    a colon (``note:``, ``key: value``) run as plain words, with the loose pass, on both stores."""
    try:
        return parse_fts5(query, SEARCH_COLUMNS)
    except QuerySyntaxError:
        return None


def _most_repeated(node: Node) -> tuple[str, int]:
    """The phrase *node* writes most often (as FTS5 reads it: case and punctuation dropped), and how often."""
    counts = Counter(
        " ".join(_term_key(text) + ("*" if star else "") for text, star in phrase.parts) for phrase in phrases_in(node)
    )
    return counts.most_common(1)[0] if counts else ("", 0)


def _too_long_phrase(words: int) -> str:
    return (
        f"a phrase has at most {MAX_PHRASE_WORDS} words (a CJK character, or each part of a-b-c, counts as"
        f" one); one here has {words}: search a shorter part of it"
    )


def _phrase_words(phrase: Phrase) -> int:
    """How many words FTS5 matches in a row for *phrase*."""
    return sum(_tokens_in(text) for text, _star in phrase.parts)


# unicode61 keeps letters and digits and splits on everything else; segment() parts CJK runs.
_FTS5_TOKEN = re.compile(r"[^\W_]+")


def _tokens_in(text: str) -> int:
    """How many tokens FTS5 makes of *text* (``kaaaa-kaaaa`` is two; a CJK character one)."""
    return len(_FTS5_TOKEN.findall(segment(text)))


def _prefixes(node: Node) -> list[str]:
    """The word before each ``*`` in *node*."""
    return [(text.split() or [""])[-1] for phrase in phrases_in(node) for text, star in phrase.parts if star]


def phrases_in(node: Node) -> Iterator[Phrase]:
    """Every phrase of *node* (NEAR's too), in the order they are written; without recursion,
    since 1,000 words make a tree 1,000 deep."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Phrase):
            yield item
        elif isinstance(item, Near):
            stack.extend(reversed(item.phrases))
        else:
            stack.extend((item.right, item.left))  # the left one comes off first


@dataclass(frozen=True, slots=True)
class PlainTerms:
    """A query read as plain words, unquoted: what :func:`compile_query` quotes."""

    strict: tuple[str, ...]  # must all appear (stop words dropped unless there is nothing else)
    loose: tuple[str, ...]  # any of them fills up (CJK runs as overlapping character pairs)


def plain_terms(query: str, cjk_gram: int = 2) -> PlainTerms:
    """The words of *query* (split on whitespace) for the strict and the loose pass; in the
    loose one a CJK run becomes its overlapping *cjk_gram*-character pieces (a shorter run
    stays whole)."""
    # Each word once (its first spelling): FTS5 weighs a word written n times n times over, at
    # a cost that grows with n squared on notes that hold it often (200 times: 40 s on 4 notes).
    first: dict[str, str] = {}
    for term in query.split():
        if _has_word_chars(term):
            first.setdefault(_term_key(term), term)
    terms = list(first.values())
    # Stop words are in nearly every note: requiring them narrows nothing and makes
    # FTS5 walk a posting list as long as the store. They count only on their own.
    content = [t for t in terms if not _is_stop(t)]
    strict = dict.fromkeys(piece for t in (content or terms) for piece in _pieces(t))
    return PlainTerms(strict=_within_total(strict), loose=_within_total(_loose_terms(terms, cjk_gram)))


def _within_total(terms: Iterable[str]) -> tuple[str, ...]:
    """*terms* in order, those matched as phrases only while their words stay within
    MAX_PHRASE_TOTAL (a one-word term is always kept)."""
    out: list[str] = []
    spent = 0
    for term in terms:
        size = _tokens_in(term)
        if size > 1:
            if spent + size > MAX_PHRASE_TOTAL:
                continue
            spent += size
        out.append(term)
    return tuple(out)


def _pieces(term: str) -> list[str]:
    """*term* as phrases of at most MAX_PHRASE_WORDS tokens: a plain word is matched as the
    phrase of its tokens, and a long one (``kaaaa-kaaaa-…``, a Chinese sentence) would cost
    what a long quoted phrase does, which is refused; as plain words it is searched in parts."""
    tokens = _FTS5_TOKEN.findall(segment(term))
    if len(tokens) <= MAX_PHRASE_WORDS:
        return [term]
    return [" ".join(tokens[i : i + MAX_PHRASE_WORDS]) for i in range(0, len(tokens), MAX_PHRASE_WORDS)]


def _term_key(term: str) -> str:
    """What FTS5 would read of *term* (case and the punctuation around it dropped), to tell repeats."""
    return " ".join(_NON_WORD.split(term.casefold())).strip()


_NON_WORD = re.compile(r"[\W_]+")


# -- FTS5 syntax, parsed -----------------------------------------------------------------------
# compile_query hands a query in FTS5 syntax to FTS5 as written. A backend without FTS5
# (PostgreSQL) needs its structure instead: parse_fts5 reads it by FTS5's own grammar
# (sqlite/ext/fts5/fts5parse.y and fts5ExprGetToken), so that it rejects what FTS5 rejects
# and the same query falls back to plain words on both.

FTS5_COLUMNS = ("title", "body", "meta")  # notes_fts's columns, in order
SEARCH_COLUMNS = ("title", "body")  # those a query may name: meta holds the filters' tokens


class QuerySyntaxError(ValueError):
    """A query FTS5 would refuse; the caller falls back to its plain words."""


@dataclass(frozen=True, slots=True)
class Phrase:
    """Strings that must appear in a row (``a + "b c"``); a part flagged True ends in ``*``."""

    parts: tuple[tuple[str, bool], ...]
    columns: frozenset[str] | None = None  # None: any column; empty: none (matches nothing)
    initial: bool = False  # ``^``: at the start of a column


@dataclass(frozen=True, slots=True)
class Near:
    """``NEAR(p1 p2 …, distance)``: the phrases within *distance* tokens of each other."""

    phrases: tuple[Phrase, ...]
    distance: int = 10


@dataclass(frozen=True, slots=True)
class BoolOp:
    """``left AND right``, ``left OR right`` or ``left NOT right`` (left and not right)."""

    op: str
    left: Node
    right: Node


Node = Phrase | Near | BoolOp

_FTS5_SPACE = " \t\n\r"
_FTS5_PUNCT = {"(": "LP", ")": "RP", "{": "LCP", "}": "RCP", ":": "COLON", ",": "COMMA"}
_FTS5_PUNCT |= {"+": "PLUS", "*": "STAR", "-": "MINUS", "^": "CARET"}
_FTS5_KEYWORDS = {"AND": "AND", "OR": "OR", "NOT": "NOT"}
_FTS5_STACK = 100  # YYSTACKDEPTH of FTS5's Lemon parser


def _fts5_bareword(ch: str) -> bool:
    # FTS5 reads bytes: any byte of a multi-byte UTF-8 character is a bareword byte.
    return not ch.isascii() or ch.isalnum() or ch in "_\x1a"


def _fts5_tokens(query: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; a STRING's text is unquoted, a bareword's is marked by kind WORD."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(query)
    while True:
        while i < n and query[i] in _FTS5_SPACE:
            i += 1
        if i == n:
            return out
        ch = query[i]
        if ch in _FTS5_PUNCT:
            out.append((_FTS5_PUNCT[ch], ch))
            i += 1
        elif ch == '"':
            text: list[str] = []
            i += 1
            while True:
                if i == n:
                    raise QuerySyntaxError("unterminated string")
                if query[i] == '"':
                    if query[i + 1 : i + 2] != '"':
                        break
                    i += 1
                text.append(query[i])
                i += 1
            out.append(("STRING", "".join(text)))
            i += 1
        elif _fts5_bareword(ch):
            start = i
            while i < n and _fts5_bareword(query[i]):
                i += 1
            word = query[start:i]
            out.append((_FTS5_KEYWORDS.get(word, "WORD"), word))
        else:
            raise QuerySyntaxError(f"syntax error near {ch!r}")


class _Fts5Parser:
    """Recursive descent over fts5parse.y: OR < AND < NOT, all left-associative; plain
    phrases side by side are ANDed, tighter than any operator.

    FTS5's parser (Lemon) holds at most _FTS5_STACK symbols and refuses a query that needs
    more: one nested too deeply. ``stack`` counts the symbols it would hold where this
    parser is, and :meth:`need` checks a construct's peak against the limit, so that the
    same queries are refused (and Python's own stack is never at risk).
    """

    def __init__(self, tokens: list[tuple[str, str]], columns: tuple[str, ...]) -> None:
        self.tokens = tokens
        self.at = 0
        self.columns = columns
        self.stack = 1  # Lemon's first entry

    def need(self, symbols: int) -> None:
        if self.stack + symbols > _FTS5_STACK:
            raise QuerySyntaxError("parser stack overflow: the query is nested too deeply")

    def peek(self, ahead: int = 0) -> str:
        at = self.at + ahead
        return self.tokens[at][0] if at < len(self.tokens) else "EOF"

    def take(self, *kinds: str) -> str:
        kind, text = self.tokens[self.at] if self.at < len(self.tokens) else ("EOF", "")
        if kind not in kinds:
            raise QuerySyntaxError(f"syntax error near {text or 'the end'!r}")
        self.at += 1
        return text

    def parse(self) -> Node:
        node = self.binary(0)
        if self.at < len(self.tokens):
            raise QuerySyntaxError(f"syntax error near {self.tokens[self.at][1]!r}")
        return node

    _LEVELS = ("OR", "AND", "NOT")

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unit()
        node = self.binary(level + 1)
        while self.peek() == self._LEVELS[level]:
            self.at += 1
            self.need(2)  # the left operand and the operator wait for the right one
            self.stack += 2
            node = BoolOp(self._LEVELS[level], node, self.binary(level + 1))
            self.stack -= 2
        return node

    def group(self, held: int) -> Node:
        """``( expr )`` after *held* symbols (the parenthesis and any column set before it)."""
        self.need(held)
        self.stack += held
        node = self.binary(0)
        self.need(2)  # the expression and the closing parenthesis
        self.take("RP")
        self.stack -= held
        return node

    def unit(self) -> Node:
        if self.peek() == "LP":
            self.at += 1
            return self.group(1)
        if self.colset_ahead() and self.peek(self.colset_length()) == "COLON" and self.after_colon() == "LP":
            columns = self.colset(0)
            self.take("COLON")
            self.take("LP")
            return _restrict(self.group(3), columns)
        node = self.cnearset(0)
        while self.peek() in ("WORD", "STRING", "MINUS", "LCP", "CARET"):
            node = BoolOp("AND", node, self.cnearset(1))  # the phrases so far wait below it
        return node

    def after_colon(self) -> str:
        return self.peek(self.colset_length() + 1)

    def colset_ahead(self) -> bool:
        first = self.peek(1) if self.peek() == "MINUS" else self.peek()
        return first in ("WORD", "STRING", "LCP")

    def colset_length(self) -> int:
        """How many tokens the column set starting here spans (0 if it cannot be one)."""
        i = 1 if self.peek() == "MINUS" else 0
        if self.peek(i) in ("WORD", "STRING"):
            return i + 1
        if self.peek(i) != "LCP":
            return 0
        i += 1
        while self.peek(i) in ("WORD", "STRING"):
            i += 1
        return i + 1 if self.peek(i) == "RCP" and self.peek(i - 1) != "LCP" else 0

    def colset(self, base: int) -> frozenset[str]:
        """A column set, parsed *base* symbols above ``stack``."""
        negate = self.peek() == "MINUS"
        if negate:
            self.at += 1
        names: list[str] = []
        if self.peek() == "LCP":
            self.at += 1
            names.append(self.take("WORD", "STRING"))
            self.need(base + negate + 2)  # [-] { first-name
            while self.peek() != "RCP":
                names.append(self.take("WORD", "STRING"))
                self.need(base + negate + 3)  # [-] { names next-name
            self.at += 1
            self.need(base + negate + 3)  # [-] { names }
        else:
            names.append(self.take("WORD", "STRING"))
            self.need(base + negate + 1)
        chosen: set[str] = set()
        for name in names:
            match = [c for c in self.columns if c.casefold() == name.casefold()]
            if not match:
                raise QuerySyntaxError(f"no such column: {name}")
            chosen.add(match[0])
        self.need(base + 2)  # the column set and the colon after it
        return frozenset(set(self.columns) - chosen if negate else chosen)

    def cnearset(self, base: int) -> Node:
        """A phrase or NEAR group, maybe after a column set, parsed *base* symbols above ``stack``."""
        columns: frozenset[str] | None = None
        if self.colset_ahead() and self.peek(self.colset_length()) == "COLON":
            columns = self.colset(base)
            self.take("COLON")
            base += 2
        node: Node
        if self.peek() == "WORD" and self.peek(1) == "LP":
            node = self.near(base)
        else:
            initial = self.peek() == "CARET"
            if initial:
                self.at += 1
            phrase = self.phrase(base + initial)
            node = Phrase(phrase.parts, initial=initial)
        return node if columns is None else _restrict(node, columns)

    def near(self, base: int) -> Near:
        if self.take("WORD") != "NEAR":
            raise QuerySyntaxError("syntax error: only NEAR takes parentheses after a word")
        self.take("LP")
        phrases = [self.phrase(base + 2)]  # NEAR (
        while self.peek() in ("WORD", "STRING"):
            phrases.append(self.phrase(base + 3))  # NEAR ( phrases
        distance = 10
        if self.peek() == "COMMA":
            self.at += 1
            kind, text = self.tokens[self.at] if self.at < len(self.tokens) else ("EOF", "")
            if kind != "WORD" or not (text.isascii() and text.isdigit()):
                raise QuerySyntaxError(f"expected an integer after NEAR's comma, got {text!r}")
            self.at += 1
            distance = int(text)
        self.need(base + 5)  # NEAR ( phrases distance )
        self.take("RP")
        return Near(tuple(phrases), distance)

    def phrase(self, base: int) -> Phrase:
        parts = [self.string()]
        self.need(base + 2)  # the string and its (maybe empty) star
        while self.peek() == "PLUS":
            self.at += 1
            parts.append(self.string())
            self.need(base + 4)  # phrase + string star
        return Phrase(tuple(parts))

    def string(self) -> tuple[str, bool]:
        text = self.take("WORD", "STRING")
        star = self.peek() == "STAR"
        if star:
            self.at += 1
        return text, star


def _restrict(node: Node, columns: frozenset[str]) -> Node:
    """*node* with every phrase limited to *columns* as well (FTS5 intersects column sets)."""
    if isinstance(node, Phrase):
        return _restrict_phrase(node, columns)
    if isinstance(node, Near):
        return Near(tuple(_restrict_phrase(p, columns) for p in node.phrases), node.distance)
    return BoolOp(node.op, _restrict(node.left, columns), _restrict(node.right, columns))


def _restrict_phrase(phrase: Phrase, columns: frozenset[str]) -> Phrase:
    inner = columns if phrase.columns is None else phrase.columns & columns
    return Phrase(phrase.parts, inner, phrase.initial)


def parse_fts5(query: str, columns: tuple[str, ...] = FTS5_COLUMNS) -> Node:
    """*query* read as FTS5 reads a match expression over *columns*; raises
    QuerySyntaxError where FTS5 would raise an error."""
    tokens = _fts5_tokens(query)
    if not tokens:
        raise QuerySyntaxError("empty query")
    return _Fts5Parser(tokens, columns).parse()


# -- the title-only index --------------------------------------------------------------------------
# keyword.py finds the newest notes whose title matches in titles_fts, whose one column is
# the title; an expression naming notes_fts's columns is an error there.


def title_expression(expr: str) -> str | None:
    """*expr* (FTS5, over notes_fts) for titles_fts: a title matches it exactly when the note
    would match *expr* with nothing but that title. None when no title can (``body: x``);
    *expr* itself when it names no column, or FTS5 is to judge it."""
    if ":" not in expr:
        return expr
    try:
        node = parse_fts5(expr)
    except QuerySyntaxError:
        return expr
    return _in_title(node)


def _in_title(node: Node) -> str | None:
    if isinstance(node, Phrase):
        if node.columns is not None and "title" not in node.columns:
            return None
        return ("^" if node.initial else "") + _source(node)
    if isinstance(node, Near):
        columns = node.phrases[0].columns  # a column set applies to all of NEAR's phrases
        if columns is not None and "title" not in columns:
            return None
        return "NEAR(" + " ".join(_source(p) for p in node.phrases) + f", {node.distance})"
    left, right = _in_title(node.left), _in_title(node.right)
    if node.op == "OR":
        return right if left is None else left if right is None else f"({left}) OR ({right})"
    if left is None or (right is None and node.op == "AND"):
        return None
    return left if right is None else f"({left}) {node.op} ({right})"


def _source(phrase: Phrase) -> str:
    """*phrase* written back as FTS5 strings (a bareword and the same text quoted are alike)."""
    return " + ".join('"' + text.replace('"', '""') + '"' + ("*" if star else "") for text, star in phrase.parts)
