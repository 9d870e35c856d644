"""What a store holds of a conversation imported before: its parts, found by ids derived from the
source's own, the last one's header (which turns it holds) and the attempt they were written on."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotFoundError
from ..model.conversations import Conversation
from ..model.header import parse_note
from ..model.ids import derived_note_id
from .contract import NoteStore

__all__ = ["Kept", "kept_parts", "last_part_start", "part_note_id"]


def part_note_id(source: str, source_id: str, number: int) -> str:
    """The note id of part *number* of a conversation: the same every import, in every store."""
    return derived_note_id(f"import:{source}:{source_id}:{number}")


def header_extras(text: str) -> dict[str, str]:
    out = {}
    for line in parse_note(text).extra:
        key, _, raw = line.partition(":")
        raw = raw.strip()
        try:
            value = json.loads(raw) if raw.startswith('"') else raw
        except ValueError:
            value = raw
        out[key.strip()] = str(value)
    return out


@dataclass
class Kept:
    """What the store holds of a conversation: how many parts, the last one's header extras and
    text, and the attempt the parts were written on (their project: where new parts go too)."""

    count: int = 0
    extras: dict[str, str] = field(default_factory=dict)
    text: str = ""
    attempt: dict[str, Any] | None = None


def kept_parts(store: NoteStore, source: str, source_id: str) -> Kept:
    kept = Kept()
    while True:
        try:
            note = store.get_note(part_note_id(source, source_id, kept.count + 1))
        except NotFoundError:
            return kept
        kept = Kept(kept.count + 1, header_extras(note.text), note.text, note.attempt)


def last_part_start(conv: Conversation, extras: dict[str, str]) -> tuple[int, int] | None:
    """Where the last part kept starts and ends in ``conv.turns`` (its turns are written again,
    with any that came after; a start of -1 when they moved: the part is not written again);
    None when the turns it holds are not where they were (edited, another branch). Found by its
    last message's id where it has one: the turns before it may have been counted otherwise."""
    first, _, upto = extras.get("messages", "").partition("-")
    if not (first.isdigit() and upto.isdigit()) or not 1 <= int(first) <= int(upto):
        return None
    last = extras.get("last_message")
    shift = 0
    at_place = int(upto) <= len(conv.turns) and conv.turns[int(upto) - 1].ident == last
    if last and not at_place:
        where = [i for i, t in enumerate(conv.turns) if t.ident == last]
        if len(where) != 1:
            return None  # gone, or not one place to tell
        shift = where[0] + 1 - int(upto)
    # The part counted other turns before its last one than the file holds now (copied from a
    # session it resumed, which earlier versions kept; a continuation file without the session's
    # start; turns found since in another file): a negative start says so, and the caller then
    # never writes the part again, only adds what comes after it.
    start, end = int(first) - 1 + shift, int(upto) + shift
    if end < 1 or end > len(conv.turns):
        return None
    return (start if shift == 0 else -1), end
