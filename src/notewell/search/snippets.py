"""Snippets: the stretch of a note's body where the query's words gather, highlighted.

FTS5's snippet() re-runs the whole match for every note it is asked about (0.2 ms
or more a note on a large index); this finds the words in the ten bodies directly.
Words are compared the way the index compares them, loosely: case and accents
folded, and common English endings set aside (the index's Porter stemmer is the
judge of what matched; this only decides what to highlight). CJK text is matched
character by character, as the index stores it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..model.cjk import CJK_RE
from .query import Node, QuerySyntaxError, parse_fts5, phrases_in

__all__ = [
    "Phrase",
    "densest",
    "find_hits",
    "fold",
    "make_snippet",
    "phrase_finder",
    "phrases_of",
    "scan",
    "snippet_maker",
]

SNIPPET_CHARS = 180  # about 24 words
_LEAD_CHARS = 30  # context shown before the first hit
_EDGE_SLACK = 20
_TOKEN = re.compile(f"{CJK_RE.pattern}|(?:(?!{CJK_RE.pattern})\\w)+")
# A letter of a word as the index splits words: a CJK character is a word of its own, so a
# word runs up to one and starts right after one ("abc测试" is "abc", "测", "试").
_LETTER = "[^\\W" + CJK_RE.pattern[1:-1] + "]"
_LETTER_RE = re.compile(_LETTER)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"(\*?)')
_BARE = re.compile(r'[^\s"():^+*{},]+(\*?)')
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


def _fold(word: str) -> str:
    word = word.casefold()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # running -> run
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


_HITS_MAX = 200  # hits of one phrase a snippet looks at (it shows a few, around the densest place)


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words that must follow each other; the last one may be a prefix."""

    words: tuple[str, ...]
    prefix: bool = False


def _phrase(text: str, prefix: bool) -> Phrase | None:
    words = tuple(_fold(m.group(0)) for m in _TOKEN.finditer(text))
    return Phrase(words, prefix) if words else None


def phrases_of(expr: str) -> list[Phrase]:
    """The phrases of an FTS5 match expression, read by FTS5's grammar (operators and
    column sets such as ``{title body}:`` left out; ``a + b`` is one phrase)."""
    return list(_phrases_of(expr))


@functools.lru_cache(maxsize=4096)
def _phrases_of(expr: str) -> tuple[Phrase, ...]:
    # Cached: hybrid search asks for the same expression's phrases once per card.
    rest = expr.replace("\u200b", "")
    try:
        node = parse_fts5(rest)
    except QuerySyntaxError:
        return tuple(_phrases_by_pattern(rest))  # one FTS5 refuses: its words, as well as they can be told
    found: list[Phrase] = []
    for parts in _phrase_parts(node):
        if any(star for _text, star in parts[:-1]):
            # A star inside a phrase (``a* + b``): a Phrase has one only at its end.
            pieces = [_phrase(text, star) for text, star in parts]
        else:
            pieces = [_phrase(" ".join(text for text, _star in parts), parts[-1][1])]
        found.extend(p for p in pieces if p)
    return tuple(found)


def _phrase_parts(node: Node) -> list[tuple[tuple[str, bool], ...]]:
    """The strings of each phrase in *node*, in the order they are written."""
    return [phrase.parts for phrase in phrases_in(node)]


def _phrases_by_pattern(rest: str) -> list[Phrase]:
    found: list[Phrase] = []
    for m in _QUOTED.finditer(rest):
        phrase = _phrase(m.group(1).replace('""', '"'), bool(m.group(2)))
        if phrase:
            found.append(phrase)
    rest = _QUOTED.sub(" ", rest)
    for m in _BARE.finditer(rest):
        word = m.group(0)
        following = rest[m.end() :].lstrip()
        if word in _OPERATORS or following.startswith(":") or word.isdigit():
            continue
        phrase = _phrase(word, bool(m.group(1)))
        if phrase:
            found.append(phrase)
    return found


def _same(token: str, word: str, prefix: bool) -> bool:
    if token == word or (prefix and token.startswith(word)):
        return True
    if len(word) == 1 or len(token) == 1:
        return False
    a, b = _stem(token), _stem(word)
    return a == b or (len(b) >= 5 and a.startswith(b)) or (len(a) >= 5 and b.startswith(a))


class _Folding(dict):
    """A str.translate table folding case and accents one character to one character,
    so that offsets in the folded text are offsets in the original."""

    def __missing__(self, code: int) -> int:
        folded = _fold(chr(code))
        self[code] = result = ord(folded[0]) if len(folded) == 1 else code
        return result


_FOLDING = _Folding()


def _pattern(phrase: Phrase) -> str:
    parts: list[str] = []
    for k, word in enumerate(phrase.words):
        if CJK_RE.fullmatch(word):
            parts.append(re.escape(word))
            continue
        # The stem is a prefix of every form _same accepts; candidates are checked with _same.
        last_prefix = phrase.prefix and k == len(phrase.words) - 1
        if len(word) == 1 and not last_prefix:
            parts.append((f"(?<!{_LETTER})" if k else "") + re.escape(word) + f"(?!{_LETTER})")  # _same: only itself
            continue
        stem = _stem(word) if not last_prefix else word
        # The first word's start is checked by find_hits: a pattern that opens with
        # letters is searched for by the regex engine's fast literal scan.
        parts.append((f"(?<!{_LETTER})" if k else "") + re.escape(stem if len(stem) < 5 else stem[:5]) + f"{_LETTER}*")
    return r"\W*".join(parts)


def snippet_maker(body: str, phrases: Sequence[Phrase], fallback: str) -> Callable[[], str]:
    """What makes a card's snippet later (:func:`make_snippet`, else *fallback*): a fused
    ranking builds snippets only for the cards it keeps."""
    return lambda: make_snippet(body, phrases) or fallback


def make_snippet(
    body: str, phrases: Sequence[Phrase], chars: int = SNIPPET_CHARS, lead: int = _LEAD_CHARS
) -> str | None:
    """About *chars* characters of *body* around its densest cluster of hits, each hit in
    ``**bold**``, with ``…`` where text was cut; None when no phrase occurs. The body's
    own ``**`` markers are dropped, so every ``**`` pair in a snippet is a highlight."""
    if not phrases or not body:
        return None
    if "**" in body:
        body = body.replace("**", "")  # the note's own bold markers would pair with the highlights
    # Each phrase once, and no more hits of one than a snippet can use: a word repeated 100 times
    # in a query scanned every 512 KiB body 100 times, every hit of it (over 60 s for 4 notes).
    hits = find_hits(body, tuple(dict.fromkeys(phrases)), most=_HITS_MAX)
    if not hits:
        return None
    best = densest(hits, chars, lead)
    start, end = _word_edge(body, best, forward=True), _word_edge(body, min(len(body), best + chars), forward=False)
    out: list[str] = []
    cursor = start
    for first, last, _n in hits:
        if first < start or last > end:
            continue
        if out and first == cursor and out[-1].endswith("**"):
            out[-1] = out[-1][:-2] + body[first:last] + "**"  # adjacent hits (CJK characters): one highlight
        else:
            out.append(body[cursor:first])
            out.append("**" + body[first:last] + "**")
        cursor = last
    out.append(body[cursor:end])
    text = " ".join("".join(out).split())
    return ("…" if start > 0 else "") + text + ("…" if end < len(body.rstrip()) else "")


def phrase_finder(phrases: Sequence[Phrase]) -> list[re.Pattern[str]]:
    """The patterns find_hits uses, compiled once for many texts."""
    return [re.compile(_pattern(p)) for p in phrases]


# A long note's runs of ASCII are lowered whole and its runs of Han and Hangul (which fold to
# themselves) kept; only the rest go through the table (a 52 KB English note: 6.0 -> 1.8 ms).
_KEPT = "\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7a3"
_RUNS = re.compile(f"([\\x00-\\x7f]+)|([{_KEPT}]+)|[^\\x00-\\x7f{_KEPT}]+")


def _fold_run(match: re.Match[str]) -> str:
    if match.lastindex == 1:
        return match.group().lower()
    return match.group() if match.lastindex == 2 else match.group().translate(_FOLDING)


def fold(text: str) -> str:
    """*text* with case and accents folded, character for character (offsets stay)."""
    return text.lower() if text.isascii() else _RUNS.sub(_fold_run, text)


def scan(
    folded: str, phrases: Sequence[Phrase], finder: list[re.Pattern[str]], most: int | None = None
) -> list[tuple[int, int, int]]:
    """Every place in *folded* (see fold) where each phrase occurs: (start, end, phrase
    number), phrase by phrase, the first *most* of each if given. Hits of different phrases
    may overlap."""
    hits: list[tuple[int, int, int]] = []
    for number, (phrase, pattern) in enumerate(zip(phrases, finder, strict=True)):
        bounded = not CJK_RE.fullmatch(phrase.words[0])  # a CJK character is a word by itself
        verdicts: dict[str, bool] = {}  # the same few spellings come back again and again
        at = 0
        left = most
        while (left is None or left > 0) and (m := pattern.search(folded, at)) is not None:
            start = m.start()
            at = start + 1  # a false start must not hide a real match overlapping it
            if bounded and start and _LETTER_RE.match(folded[start - 1]):
                continue  # inside a word
            text = m.group(0)
            ok = verdicts.get(text)
            if ok is None:
                found = [_fold(t) for t in _TOKEN.findall(text)]
                ok = verdicts[text] = len(found) == len(phrase.words) and all(
                    _same(t, w, phrase.prefix and k == len(found) - 1)
                    for k, (t, w) in enumerate(zip(found, phrase.words, strict=True))
                )
            if ok:
                hits.append((start, m.end(), number))
                at = max(at, m.end())
                if left is not None:
                    left -= 1
    return hits


def find_hits(
    text: str, phrases: Sequence[Phrase], finder: list[re.Pattern[str]] | None = None, most: int | None = None
) -> list[tuple[int, int, int]]:
    """Where *phrases* occur in *text*: (start, end, phrase number), in text order and
    without overlaps (at one place the earlier phrase wins); the first *most* of each phrase
    if given. *finder* is phrase_finder(phrases), if already made."""
    if not phrases or not text:
        return []
    hits = scan(fold(text), phrases, finder or phrase_finder(phrases), most)
    if len(phrases) > 1:
        hits.sort()
        kept: list[tuple[int, int, int]] = []
        for hit in hits:
            if not kept or hit[0] >= kept[-1][1]:
                kept.append(hit)
        hits = kept
    return hits


def densest(hits: Sequence[tuple[int, int, int]], chars: int, lead: int) -> int:
    """Where the snippet starts: *lead* characters before the hit whose window of *chars*
    holds the most different phrases, then the most hits (the first such on ties).

    *hits* are (start, end, phrase) in text order without overlaps, so the hits inside a
    window are a run of the list and both ends of the run only move forward: one pass
    (a note repeating a word 100,000 times costs 100,000 steps, not their square).
    """
    best, best_score = 0, (-1, -1)
    counts: dict[int, int] = {}
    lo = hi = 0
    for anchor, _end, _n in hits:
        start = max(0, anchor - lead)
        while hi < len(hits) and hits[hi][1] <= start + chars:
            counts[hits[hi][2]] = counts.get(hits[hi][2], 0) + 1
            hi += 1
        while lo < hi and hits[lo][0] < start:
            n = hits[lo][2]
            counts[n] -= 1
            if not counts[n]:
                del counts[n]
            lo += 1
        score = (len(counts), max(0, hi - lo))
        if score > best_score:
            best, best_score = start, score
    return best


def _word_edge(body: str, at: int, *, forward: bool) -> int:
    """*at* moved off the middle of a word: forward to the start of the next word, or
    back to the end of the previous one (no further than a few characters)."""
    if at <= 0 or at >= len(body):
        return max(0, min(at, len(body)))
    pos = at
    if forward:
        for _ in range(_EDGE_SLACK):
            if pos >= len(body) or (body[pos].isalnum() and not body[pos - 1].isalnum()):
                return pos
            pos += 1
    else:
        for _ in range(_EDGE_SLACK):
            if pos <= 0 or (body[pos - 1].isalnum() and not body[pos].isalnum()) or body[pos - 1] in ".!?;:)":
                return pos
            pos -= 1
    return at
