"""The items of a JSON array read from a stream one at a time, in memory bounded by the largest.

An export's ``conversations.json`` is one array of every conversation: ``json.loads`` of it
holds the whole tree at once, about twelve times the text (a 1 MB zip that unpacks to 512 MB
needed more than 6 GB). Here the text is decoded as it comes and each item parsed as soon as
it is whole, so what is held is the item being read and the next chunk.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import InvalidArgumentError

__all__ = ["ItemTooLarge", "NotAnArray", "json_array_items", "json_lines"]

_SPACE = " \t\r\n"
_CHUNK = 1 << 20


class NotAnArray(ValueError):
    """The stream holds JSON that is not an array (its first character names what it is)."""


class ItemTooLarge(ValueError):
    """An item of the array is longer than the limit."""


class _Text:
    """Decoded text from *read*, consumed from the front."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self.read = read
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self, at_least: int) -> bool:
        """Read at least *at_least* more bytes (fewer at the end); False when there were none."""
        if self.eof:
            return False
        data = self.read(max(at_least, _CHUNK))
        self.buf = self.buf[self.pos :] + self.utf8.decode(data, final=not data)
        self.pos = 0
        self.eof = not data
        return bool(data)

    def skip_space(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more(_CHUNK):
                return ""


def json_array_items(read: Callable[[int], bytes], *, max_item: int) -> Iterator[Any]:
    """Each item of the JSON array that *read* (``file.read``) gives; ValueError for text that
    is not one (cut short, two values, not JSON), :class:`NotAnArray` for another JSON value,
    :class:`ItemTooLarge` for an item of more than *max_item* characters. An item is parsed
    again only after the text read for it doubled, so the work stays linear in its length."""
    decoder = json.JSONDecoder()
    text = _Text(read)
    first = text.skip_space()
    if first == "\ufeff":
        text.pos += 1
        first = text.skip_space()
    if first != "[":
        raise NotAnArray(first) if first else ValueError("no JSON value: the text is empty")
    text.pos += 1
    if text.skip_space() == "]":
        text.pos += 1
        _only_space_left(text)
        return
    while True:
        if not text.skip_space():
            raise ValueError("the array is cut short")
        yield _one_item(decoder, text, max_item)
        after = text.skip_space()
        text.pos += 1
        if after == "]":
            _only_space_left(text)
            return
        if after != ",":
            raise ValueError(f"expected ',' or ']' after an item, found {after or 'the end'!r}")


def _one_item(decoder: json.JSONDecoder, text: _Text, max_item: int) -> Any:
    while True:
        value: Any = None
        try:
            value, end = decoder.raw_decode(text.buf, text.pos)
        except json.JSONDecodeError:
            end = -1
        # A value that ends where the text read ends may go on (a number's digits, or its "." or
        # "e" and what follows, read in the next chunk): read on.
        near_end = end == len(text.buf) or (isinstance(value, (int, float)) and len(text.buf) - end < 8)
        if end != -1 and (not near_end or text.eof):
            if end - text.pos > max_item:
                raise ItemTooLarge(f"an item of more than {max_item:,} characters")
            text.pos = end
            return value
        held = len(text.buf) - text.pos
        if held > max_item:
            raise ItemTooLarge(f"an item of more than {max_item:,} characters")
        if not text.more(held) and end == -1:  # more(held) doubles what is held: linear work in all
            raise ValueError("the array is cut short, or an item is not JSON")


def _only_space_left(text: _Text) -> None:
    if text.skip_space():
        raise ValueError("more text after the array")


def json_lines(data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each object of a JSON-lines transcript *data* with its line number (from 1), blank lines
    and lines that are not objects skipped. A last line still being written (not JSON yet) is
    left for the next import; any other line that is not JSON is an InvalidArgumentError."""
    lines = data.rstrip(b"\n").split(b"\n")
    if lines and lines[-1].strip():
        try:
            json.loads(lines[-1])
        except ValueError:
            lines = lines[:-1]  # still being written: the next import reads it whole
        except RecursionError:
            pass  # whole, but nested too deep: refused below
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            raise InvalidArgumentError(f"line {number} is not JSON") from None
        except RecursionError:
            raise InvalidArgumentError(f"line {number} is nested too deep to read") from None
        if isinstance(line, dict):
            yield number, line
