"""Scripts written without spaces between words (Chinese, Japanese, Korean).

FTS5's unicode61 tokenizer turns a run of ideographs into one token, so ``素数``
would never match ``关于素数的笔记``. The index therefore stores such text with a
zero-width space around every CJK character (one token per character) and a
query wraps its CJK terms the same way inside a phrase, which matches exactly
the adjacent characters: a substring match of any length, ranked by the same
BM25 as every other word.
"""

from __future__ import annotations

import re

__all__ = ["CJK_RE", "SEP", "has_cjk", "segment", "unsegment"]

SEP = "\u200b"
CJK_RE = re.compile(
    "["
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B-H
    "]"
)
_CJK_RUN = re.compile(CJK_RE.pattern + "+")
_DOUBLE = SEP + SEP


def has_cjk(text: str) -> bool:
    """True when *text* holds a character that is indexed one by one."""
    return not text.isascii() and CJK_RE.search(text) is not None


def segment(text: str) -> str:
    """Surround every CJK character with a separator the tokenizer splits on."""
    if not has_cjk(text):
        return text
    # One call per run of CJK characters, not per character (bulk imports spent seconds in the
    # per-character callback); the text made is the same, separator for separator.
    return _CJK_RUN.sub(lambda m: SEP + _DOUBLE.join(m.group(0)) + SEP, text)


def unsegment(text: str) -> str:
    """Undo :func:`segment` (for snippets shown to people)."""
    return text.replace(SEP, "")
