"""Note and attempt ids: a prefix and ten characters of [0-9a-z]."""

from __future__ import annotations

import hashlib
import re
import secrets

from ..errors import ConflictError, InvalidIdError

__all__ = [
    "ATTEMPT_ID_RE",
    "ID_ALPHABET",
    "ID_RE",
    "NOTE_ID_RE",
    "check_note_id",
    "derived_note_id",
    "is_attempt_id",
    "is_link_id",
    "is_note_id",
    "new_attempt_id",
    "new_note_id",
    "new_note_ids",
    "used_id_error",
]

ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_RE = re.compile(r"(?:nte|att)_[0-9a-z]{10}")
NOTE_ID_RE = re.compile(r"nte_[0-9a-z]{10}")
ATTEMPT_ID_RE = re.compile(r"att_[0-9a-z]{10}")


def _encode(number: int) -> str:
    chars = []
    for _ in range(10):
        number, digit = divmod(number, 36)
        chars.append(ID_ALPHABET[digit])
    return "".join(chars)


def new_note_id() -> str:
    """A fresh random note id (about 51 bits of randomness)."""
    return "nte_" + _encode(secrets.randbits(52) % 36**10)


# A batch's ids share their first characters: an index keyed by id then takes the batch in a few
# neighbouring pages instead of touching most of its pages (random ids doubled the bytes a bulk
# import writes). Each id is still uniform over all 36^10, as two independent draws, so ids from
# different batches (another process, another machine) collide no more often than fully random ones.
_BATCH_PREFIX = 4


def _random_chars(count: int) -> str:
    return _encode(secrets.randbelow(36**count))[:count]


def new_note_ids(count: int) -> list[str]:
    """*count* distinct fresh note ids for one batch: a random prefix they share, and random rest."""
    if count <= 1:
        return [new_note_id() for _ in range(count)]
    rest = 10 - _BATCH_PREFIX
    share = max(1, 36**rest // 1000)  # at most a sparse share of a prefix's ids: a new prefix for more
    ids: dict[str, None] = {}  # one for all parts: two parts may draw the same prefix
    while len(ids) < count:
        prefix, goal = "nte_" + _random_chars(_BATCH_PREFIX), min(count, len(ids) + share)
        while len(ids) < goal:
            ids.setdefault(prefix + _random_chars(rest))
    return list(ids)


def new_attempt_id() -> str:
    """A fresh random attempt id."""
    return "att_" + _encode(secrets.randbits(52) % 36**10)


def is_attempt_id(text: object) -> bool:
    """True when *text* is exactly an attempt id."""
    return isinstance(text, str) and ATTEMPT_ID_RE.fullmatch(text) is not None


def derived_note_id(relpath: str) -> str:
    """The id a file found in the folder gets from its path.

    Derived rather than random so that rebuilding the index without the journal
    gives a hand-made note the same id again.
    """
    digest = hashlib.sha256(("notewell:" + relpath).encode("utf-8")).digest()
    return "nte_" + _encode(int.from_bytes(digest[:8], "big"))


def is_note_id(text: object) -> bool:
    """True when *text* is exactly a note id."""
    return isinstance(text, str) and NOTE_ID_RE.fullmatch(text) is not None


def is_link_id(text: object) -> bool:
    """True when *text* is a note or attempt id (what builds_on may hold)."""
    return isinstance(text, str) and ID_RE.fullmatch(text) is not None


def check_note_id(note_id: object) -> str:
    """*note_id* stripped, or InvalidIdError when it is not a note id."""
    if not isinstance(note_id, str):
        raise InvalidIdError(f"a note id must be a string, not {type(note_id).__name__}")
    note_id = note_id.strip()
    if NOTE_ID_RE.fullmatch(note_id) is None:
        shown = note_id if len(note_id) <= 60 else note_id[:57] + "..."
        raise InvalidIdError(f"not a note id: {shown!r} (ids look like nte_0h3k9x2c7m)")
    return note_id


def used_id_error(note_id: str) -> ConflictError:
    """The error for a chosen note id the store has used (both stores say it alike)."""
    return ConflictError(f"the store has used the id {note_id} already: choose another (notewell.new_note_id())")
