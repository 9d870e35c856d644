"""Personal data a store or a notebook must not keep: card numbers, IBANs, national ids.

Each pattern is checked as its issuer checks it (the Luhn digit of a card number on a known
issuer's prefix, an IBAN's mod-97 check digits, a Chinese resident id's ISO 7064 digit and
date of birth, the ranges the US never issues as a social security number), so that ids,
timestamps and hashes in logs are not taken for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

__all__ = ["PERSONAL_KINDS", "personal_data_in", "personal_spans", "possible_card_number"]

# A card number as cards print it: 4-4-4-4, 4-6-5 or 4-4-4-4-3 digits with one separator, never
# inside a word, an id or a hex string. A bare run of 15 or 16 digits could be one too, or an id
# (3% of random 16-digit ids pass the checks): that is only warned about.
#
# Each pattern opens with a character class and looks behind after it: the regular expression
# engine then skips to the next character of that class at C speed (a look-behind first is tried
# at every position: the patterns read 6 MB/s of prose, now 40).
_CARD = re.compile(
    r"\d(?<![\w.-]\d)(?:\d{3}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{3}([ -])\d{6}\2\d{5})(?![\w-]|\.\d)"
)
_CARD_RUN = re.compile(r"\d(?<![\w.-]\d)\d{14,15}(?![\w-]|\.\d)")
_CARD_PREFIX = re.compile(
    r"4|5[1-5]|2(?:2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|6(?:011|5|4[4-9])|35(?:2[89]|[3-8]\d)|3(?:0[0-5]|[68])|62"
)
_IBAN = re.compile(r"[A-Z](?<![A-Z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Z0-9])")
_SSN = re.compile(r"\d(?<![\d-]\d)\d{2}-\d{2}-\d{4}(?![\d-])")  # and not a range never issued: _ssns
_CN_ID = re.compile(r"\d(?<!\d\d)\d{16}[\dXx](?![\dXx])")
# What each of those three opens with: 3 digits then a separator and a digit, or 15 digits.
_NUMBERED = re.compile(r"\d\d\d(?:[ -]\d|\d{12})")
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)

# Each kind's name (what a masked span says) and how the notebook's refusal words it.
PERSONAL_KINDS = {
    "card-number": "a card number",
    "iban": "a bank account number (IBAN)",
    "us-ssn": "a US social security number",
    "national-id": "a national id number",
}


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str, pattern: re.Pattern[str] = _CARD) -> Iterator[tuple[int, int]]:
    for m in pattern.finditer(text):
        digits = re.sub(r"[ -]", "", m.group())
        if len(set(digits)) > 1 and _CARD_PREFIX.match(digits) and _luhn(digits):
            yield m.span()


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    for m in _IBAN.finditer(text):
        code = m.group().replace(" ", "")
        if not 15 <= len(code) <= 34:
            continue
        moved = code[4:] + code[:4]
        if int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1:
            yield m.span()


def _cn_ids(text: str) -> Iterator[tuple[int, int]]:
    for m in _CN_ID.finditer(text):
        value = m.group().upper()
        check = sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS, strict=True)) % 11
        if "10X98765432"[check] != value[17]:
            continue
        try:
            born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
        except ValueError:
            continue
        if 1900 <= born.year <= date.today().year:
            yield m.span()


def _ssns(text: str) -> Iterator[tuple[int, int]]:
    for m in _SSN.finditer(text):
        area, group, serial = m.group().split("-")
        if area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000":
            yield m.span()


def personal_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each piece of personal data in *text* as (kind, start, end), kind by kind (a key of
    :data:`PERSONAL_KINDS`); spans of two kinds may overlap."""
    yield from (("iban", *span) for span in _ibans(text))
    if not _NUMBERED.search(text):  # no card, social security number or national id can be there
        return
    yield from (("card-number", *span) for span in _cards(text))
    yield from (("us-ssn", *span) for span in _ssns(text))
    yield from (("national-id", *span) for span in _cn_ids(text))


def personal_data_in(text: str) -> str | None:
    """The kind of personal data *text* holds (``"a card number"``, ...), or None."""
    first = next(personal_spans(text), None)
    return PERSONAL_KINDS[first[0]] if first is not None else None


def possible_card_number(text: str) -> bool:
    """A bare run of 15 or 16 digits that passes a card's checks: a card number, or an id."""
    return next(_cards(text, _CARD_RUN), None) is not None
