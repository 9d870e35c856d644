"""Counting tokens offline: an exact BPE count where ``bpe-openai`` is installed, else an estimate.

The estimate follows how BPE vocabularies split text, so that it stays close on CJK text
(about one token per character) and on code (punctuation is a token of its own), where the
usual "characters / 4" is off by a factor of up to four. It errs high rather than low,
because a budget that is met on the estimate must be met for real.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache

from ..errors import InvalidArgumentError, UnavailableError
from .cjk import CJK_RE

__all__ = ["TokenCounter", "default_counter", "estimate_tokens", "exact_counter", "load_counter"]

TokenCounter = Callable[[str], int]

_PIECE = re.compile(
    rf"(?P<hangul>[\uac00-\ud7af]+)|(?P<cjk>(?:{CJK_RE.pattern})+)|(?P<fullwidth>[\uff01-\uff5e]+)"
    r"|(?P<mixed>\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+\b)|(?P<ascii>[A-Za-z]+)|(?P<digits>\d+)"
    r"|(?P<word>[^\W\d_]+)|(?P<space>\n+|\s{2,}|[^\S ]| (?=\d))|(?P<punct>[!-/:-@\[-`{-~]+)|(?P<symbol>[^\w\s])"
)
_EMOJI = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff]")


@lru_cache(maxsize=65536)
def _han(ch: str) -> int:
    """A common character (in GB2312: simplified Chinese, kana) is about one token; the rest
    (most traditional characters, rare ones) take two or three."""
    try:
        ch.encode("gb2312")
    except UnicodeEncodeError:
        return 2
    return 1


def estimate_tokens(text: str) -> int:
    """About how many tokens *text* costs without a tokenizer: at or a little above OpenAI's
    cl100k count on English prose, code, logs, hashes, Chinese (simplified and traditional),
    Japanese, Korean, Russian, French, Thai, emoji and fullwidth text (measured in
    tests/model/test_token_count.py), never the far-too-low "characters / 4"."""
    total = 0
    for m in _PIECE.finditer(text):
        kind = m.lastgroup
        n = m.end() - m.start()
        if kind == "cjk":
            total += math.ceil(1.05 * sum(_han(ch) for ch in m.group()))
        elif kind == "hangul":
            total += math.ceil(n * 1.25)
        elif kind == "fullwidth":  # three bytes each, rarely merged
            total += 2 * n
        elif kind == "mixed":  # hex digests, ids, base64: BPE splits them finely
            total += math.ceil(n / 1.25)
        elif kind == "ascii":  # a common word is one token; a long one splits
            total += 1 if n <= 8 else math.ceil(n / 5)
        elif kind == "digits":  # BPE vocabularies split numbers in threes
            total += math.ceil(n / 3)
        elif kind == "word":  # letters beyond ASCII and CJK: Cyrillic, Greek, accented words, Thai
            total += math.ceil(n / 1.8)
        elif kind == "space":
            total += 1
        elif kind == "punct":
            total += math.ceil(n / 2)
        elif kind == "symbol":  # emoji take three or four bytes and rarely merge
            total += 3 if _EMOJI.match(m.group()) else 2
    return total


_ENCODE_CHARS = 40_000  # characters encoded at once (see exact_counter)


@lru_cache(maxsize=8)  # loading a vocabulary takes ~0.15 s: once per process and encoding
def exact_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """An exact count with a BPE *encoding* of OpenAI's (``cl100k_base``, ``o200k_base``),
    from the ``bpe-openai`` package, which carries its vocabularies (nothing downloads)."""
    try:
        import bpe_openai
    except ImportError:
        raise UnavailableError(
            "exact token counts need bpe-openai (pip install '.[tokens]' in notewell's clone)"
        ) from None
    try:
        enc = bpe_openai.get_encoding(encoding)
    except Exception as exc:  # the package's own error types vary between versions
        names = ", ".join(bpe_openai.list_encoding_names())
        raise InvalidArgumentError(f"unknown encoding {encoding!r} ({names}): {exc}") from None

    def count(text: str) -> int:
        # In pieces cut at a line break or blank: the encoder refuses a text of more than 200,000
        # tokens (a 1 MiB note has 333,333), and a piece of _ENCODE_CHARS characters is at most 4 tokens
        # a character (one a byte). A word cut across pieces would count a token more; cuts at
        # blanks keep that from happening but for a piece with none.
        total, start = 0, 0
        while start < len(text):
            end = min(len(text), start + _ENCODE_CHARS)
            if end < len(text):
                cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
                if cut > start:
                    end = cut
            total += len(enc.encode(text[start:end], disallowed_special=()))
            start = end
        return total

    count.__name__ = f"count_{encoding}"
    return count


def default_counter() -> TokenCounter:
    """The exact cl100k count where bpe-openai is installed, else the estimate."""
    try:
        return exact_counter("cl100k_base")
    except UnavailableError:
        return estimate_tokens


def load_counter(name: str | None) -> TokenCounter:
    """A counter by name: ``auto`` (or nothing), ``estimate``, or an encoding name."""
    if name in (None, "", "auto"):
        return default_counter()
    if name == "estimate":
        return estimate_tokens
    return exact_counter(name)
