"""How alike two note texts are in their words, on a scale that means the same in every store.

A search engine's scores (BM25, a model's cosine) rank notes within one store; to say "this new
note says what that one says" needs a figure that does not depend on the store's size or its
other notes. :func:`word_overlap` is the cosine of the two texts' sets of content words (stop
words left out; a CJK run as its overlapping character pairs): 1 for the same words, 0 for none
shared. The keyword search finds the candidates; this decides which are near-duplicates.
"""

from __future__ import annotations

import math
import re

from ..model.cjk import CJK_RE
from .query import STOP_WORDS as _STOP

__all__ = ["DUPLICATE_QUERY_WORDS", "content_words", "probe_query", "word_overlap"]

DUPLICATE_QUERY_WORDS = 24  # the words of a new note a candidate search asks for
_WORD = re.compile(r"\w+")
_CJK_RUN = re.compile(CJK_RE.pattern + "+")
_MAX_CHARS = 20_000  # the opening of a long note says what it is about


def content_words(text: str) -> set[str]:
    """The distinct content words of *text*, case-folded (CJK runs as character pairs)."""
    text = text[:_MAX_CHARS]
    words: set[str] = set()
    for run in _CJK_RUN.findall(text):
        words.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    for word in _WORD.findall(_CJK_RUN.sub(" ", text)):
        folded = word.casefold()
        if len(folded) > 1 and folded not in _STOP and not folded.isdigit():
            words.add(folded)
    return words


def word_overlap(a: set[str], b: set[str]) -> float:
    """The cosine of two word sets: |a & b| / sqrt(|a| |b|), 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def probe_query(title: str, body: str) -> str:
    """A plain-words query for the notes most like a new one: its title's words, then its body's
    first distinct content words, at most DUPLICATE_QUERY_WORDS."""
    chosen: dict[str, None] = {}
    for part in (title, body[:_MAX_CHARS]):
        for run in _CJK_RUN.findall(part):
            chosen.setdefault(run[:8], None)
        for word in _WORD.findall(_CJK_RUN.sub(" ", part)):
            folded = word.casefold()
            if len(folded) > 2 and folded not in _STOP and not folded.isdigit():
                chosen.setdefault(folded, None)
            if len(chosen) >= DUPLICATE_QUERY_WORDS:
                return " ".join(chosen)
    return " ".join(chosen)
