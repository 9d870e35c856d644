"""Slugs for tags and kinds."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["slug_is_lossless", "slug_within", "slugify"]

_KEEP_PUNCT = frozenset("-_.+#")
_WS_RUN = re.compile(r"\s+")
_ASCII_DROP = re.compile(r"[^a-z0-9_.+#\s-]")


def slugify(text: str) -> str:
    """NFKC + casefold; Latin diacritics dropped; letters/digits of every script,
    ``- _ . + #`` kept; whitespace runs become ``-``; everything else dropped."""
    if text.isascii():
        # Most tags are plain ASCII: no normalisation or diacritics to deal with.
        return "-".join(_ASCII_DROP.sub("", piece) for piece in text.lower().split())
    return unicode_slug(text)


# A slug keeps most of what it is made from, so text this many times longer than the slug may
# be is refused before it is slugged (a million characters took 0.4 s only to be found too long).
_RAW_FACTOR = 8


def slug_within(text: str, most: int) -> str | None:
    """The slug of *text* if it has one of at most *most* characters, else None (``""`` when
    nothing is left to name it by). Text over ``8 * most`` characters is not slugged at all."""
    if len(text) > _RAW_FACTOR * most:
        return None
    slug = slugify(text)
    return slug if len(slug) <= most else None


def unicode_slug(text: str) -> str:
    """The general path of :func:`slugify` (any script)."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    out: list[str] = []
    keep_marks = False  # marks follow their base: kept after a kept non-Latin letter only
    for ch in unicodedata.normalize("NFD", _WS_RUN.sub(" ", text)):
        cat = unicodedata.category(ch)
        if ch == " ":
            out.append("-")
            keep_marks = False
        elif cat[0] == "M":
            # Only Latin letters lose their diacritics: a Devanagari vowel sign or
            # a Japanese dakuten is part of the letter and stays.
            if keep_marks:
                out.append(ch)
        elif cat[0] in "LN" or ch in _KEEP_PUNCT:
            out.append(ch)
            keep_marks = not unicodedata.name(ch, "").startswith("LATIN")
        else:
            keep_marks = False
    return unicodedata.normalize("NFC", "".join(out))


def slug_is_lossless(raw: str, slug: str) -> bool:
    """True when the slug differs from *raw* only in case and whitespace."""
    return slug == _WS_RUN.sub("-", raw.strip()).casefold()
