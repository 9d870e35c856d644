"""The optional, lenient note header.

A header is a block from a first line ``---`` to the next ``---`` line in which
every line is blank, a ``# comment``, a ``key: value`` line (bare or quoted
value, or an inline list) or a ``- item`` under a key with an empty value; any
of these may end in a `` # comment``. The block counts only when one of title,
kind (or ``type``), tags, builds_on, supersedes or model is present; otherwise the whole
text is body. Nothing written in a header is lost: what a field cannot keep
goes verbatim into ``extra``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .ids import is_link_id
from .slug import slug_is_lossless, slug_within

__all__ = [
    "HEADER_FIELDS",
    "HEADER_MAX",
    "HeaderLayout",
    "header_layout",
    "quote_value",
    "compose_note",
    "LIMITS",
    "ParsedNote",
    "oversized_header",
    "parse_note",
]

HEADER_FIELDS = ("title", "kind", "tags", "builds_on", "model", "summary", "supersedes")
# Any one of these makes a block a header; summary alone does not.
_QUALIFYING = frozenset({"title", "kind", "type", "tags", "builds_on", "model", "supersedes"})
LIMITS = {"title": 200, "kind": 40, "tag": 40, "tags": 20, "model": 100}
# A note's header closes within this many characters of its start: a write past it is refused.
# Its fields are short (20 tags, a title, a few thousand builds_on ids at most): the cap
# keeps every header shape well under 100 ms to read, where a 1 MiB one took half a second.
HEADER_MAX = 65_536
_CLOSING = re.compile(r"\n---[ \t]*\r?(?:\n|\Z)")

_KEY_START = set("#-[]{}\"',:")
_DELIM = re.compile(r"---[ \t]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """A note split into its header (or None), the header's leftovers and the body."""

    header: dict[str, Any] | None
    extra: list[str]
    body: str

    def to_dict(self) -> dict[str, Any]:
        return {"header": self.header, "extra": list(self.extra), "body": self.body}


@dataclass(slots=True)
class _Value:
    value: str
    raw: str


@dataclass(slots=True)
class _Entry:
    lineno: int
    key: str
    line: str  # the key line as written, without its line ending
    values: list[_Value] = field(default_factory=list)
    is_list: bool = False
    scalar_comment: str | None = None
    comments: list[tuple[int, str]] = field(default_factory=list)  # trailing comments (lineno, text)
    item_lines: list[tuple[int, str]] = field(default_factory=list)


def _split_comment(rest: str) -> tuple[str, str | None]:
    """Split a bare value from a trailing `` # comment``."""
    m = re.search(r"(?:^|[ \t])#", rest)
    if m is None:
        return rest.rstrip(), None
    start = m.start() if rest[m.start()] == "#" else m.start() + 1
    return rest[:start].rstrip(), rest[start:]


def _scan_quoted(s: str, i: int) -> tuple[str, int] | None:
    """Parse a quoted string at s[i]; return (value, index after it) or None."""
    quote = s[i]
    out: list[str] = []
    j = i + 1
    while j < len(s):
        c = s[j]
        if quote == "'":
            if c == "'":
                if j + 1 < len(s) and s[j + 1] == "'":
                    out.append("'")
                    j += 2
                    continue
                return "".join(out), j + 1
            out.append(c)
            j += 1
            continue
        if c == '"':
            return "".join(out), j + 1
        if c == "\\" and j + 1 < len(s):
            nxt = s[j + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                j += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(nxt)
            if width:
                digits = s[j + 2 : j + 2 + width]
                if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                    code = int(digits, 16)
                    if code <= 0x10FFFF:
                        out.append(chr(code))
                        j += 2 + width
                        continue
            out.append(c)
            j += 1
            continue
        out.append(c)
        j += 1
    return None


def _tail_comment(s: str, i: int) -> tuple[bool, str | None]:
    """After a closed value at s[i:], only spaces and an optional `` # comment`` may follow."""
    tail = s[i:]
    stripped = tail.lstrip(" \t")
    if not stripped:
        return True, None
    if stripped.startswith("#") and len(stripped) < len(tail):
        return True, stripped.rstrip()
    return False, None


_ITEM_END = re.compile(r"[,\]]")


def _parse_inline_list(s: str) -> tuple[list[_Value], str | None] | None:
    values: list[_Value] = []
    i = 1
    n = len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            return None
        if s[i] == "]" and not values:
            ok, comment = _tail_comment(s, i + 1)
            return (values, comment) if ok else None
        if s[i] in "\"'":
            got = _scan_quoted(s, i)
            if got is None:
                return None
            value, j = got
            raw = s[i:j]
            while j < n and s[j] in " \t":
                j += 1
        else:
            end = _ITEM_END.search(s, i)  # in C: a header of 50,000 ids spent most of its parse here
            j = end.start() if end else n
            raw = s[i:j].rstrip(" \t")
            value = raw
        values.append(_Value(value, raw))
        if j >= n:
            return None
        if s[j] == "]":
            ok, comment = _tail_comment(s, j + 1)
            return (values, comment) if ok else None
        if s[j] != ",":
            return None
        i = j + 1


def _parse_scalar(rest: str) -> tuple[_Value, str | None]:
    if rest[:1] in ("'", '"'):
        got = _scan_quoted(rest, 0)
        if got is not None:
            value, j = got
            ok, comment = _tail_comment(rest, j)
            if ok:
                return _Value(value, rest[:j]), comment
    bare, comment = _split_comment(rest)
    return _Value(bare, bare), comment


def _lines(text: str, start: int) -> list[tuple[int, int, str]]:
    """Lines from *start* up to and including the closing delimiter.

    Returns (line start, line end incl. newline, content) triples, or [] when the
    block never closes.
    """
    out = []
    pos = start
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        content = text[pos : (end - 1 if nl >= 0 else end)]
        if content.endswith("\r"):
            content = content[:-1]
        out.append((pos, end, content))
        if len(out) > 1 and _DELIM.fullmatch(content):
            return out
        pos = end
    return []


# Key and item lines are split by hand: a regex with a lazy value before trailing blanks
# backtracks quadratically on a long run of blanks (40,000 spaces took 23 s).
def _key_line(line: str) -> tuple[str, str] | None:
    """``key: value`` as (key, value without its surrounding blanks), or None."""
    colon = line.find(":")
    if colon <= 0 or line[0].isspace() or line[0] in _KEY_START:
        return None
    rest = line[colon + 1 :]
    value = rest.strip(" \t")
    if value and rest[0] not in " \t":
        return None  # "a:b" is not a key line
    return line[:colon].rstrip(" \t"), value


def _item_line(line: str) -> str | None:
    """``- value`` (indented or not) as the value without its surrounding blanks, or None."""
    rest = line.lstrip(" \t")
    if not rest.startswith("-"):
        return None
    rest = rest[1:]
    value = rest.strip(" \t")
    if value and rest[0] not in " \t":
        return None  # "-x" is not an item
    return value


def _classify(block: list[str]) -> list[_Entry | tuple[int, str]] | None:
    """Turn header lines into entries and whole-line comments; None if a line is not allowed."""
    items: list[_Entry | tuple[int, str]] = []
    open_list: _Entry | None = None
    for lineno, line in enumerate(block):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            items.append((lineno, line))
            continue
        item = _item_line(line)
        if item is not None:
            if open_list is None:
                return None
            value, comment = _parse_scalar(item)
            open_list.values.append(value)
            open_list.is_list = True
            open_list.item_lines.append((lineno, line))
            if comment:
                open_list.comments.append((lineno, comment))
            continue
        keyed = _key_line(line)
        if keyed is None:
            return None
        entry = _Entry(lineno=lineno, key=keyed[0], line=line)
        rest = keyed[1]
        open_list = None
        if not rest:
            open_list = entry
        elif rest.startswith("#"):
            entry.comments.append((lineno, rest))
            open_list = entry
        elif rest.startswith("["):
            parsed = _parse_inline_list(rest)
            if parsed is not None:
                entry.values, comment = parsed
                entry.is_list = True
                if comment:
                    entry.comments.append((lineno, comment))
            else:
                value, comment = _parse_scalar(rest)
                entry.values = [value]
                if comment:
                    entry.comments.append((lineno, comment))
        else:
            value, comment = _parse_scalar(rest)
            entry.values = [value]
            if comment:
                entry.comments.append((lineno, comment))
        items.append(entry)
    return items


class _Builder:
    def __init__(self) -> None:
        self.header: dict[str, Any] = {}
        self.extra: list[tuple[int, str]] = []
        self.seen: dict[str, set[str]] = {}  # raw values met per field: only exact repeats go unechoed

    def whole(self, entry: _Entry) -> None:
        """Keep an entry's lines verbatim (its comments included)."""
        self.extra.append((entry.lineno, entry.line))
        self.extra.extend(entry.item_lines)

    def value(self, lineno: int, entry: _Entry, v: _Value) -> None:
        self.extra.append((lineno, f"{entry.key}: {v.raw}"))

    def comments(self, entry: _Entry) -> None:
        self.extra.extend(entry.comments)

    def scalar(self, entry: _Entry, name: str, limit: int | None, slug: bool = False) -> None:
        if entry.is_list or len(entry.values) != 1 or not entry.values[0].value.strip():
            self.whole(entry)
            return
        raw = entry.values[0]
        value = raw.value.strip()
        if slug:
            value = slug_within(raw.value, limit or len(raw.value)) or ""
        if not value or "\n" in value or (limit is not None and len(value) > limit):
            self.whole(entry)
            return
        seen = self.seen.setdefault(name, set())
        if name in self.header:
            if raw.value.strip() in seen:
                self.comments(entry)  # an exact repeat: nothing to keep
            else:
                seen.add(raw.value.strip())
                self.whole(entry)
            return
        seen.add(raw.value.strip())
        self.header[name] = value
        if slug and not slug_is_lossless(raw.value, value):
            self.value(entry.lineno, entry, raw)
        self.comments(entry)

    def tags(self, entry: _Entry) -> None:
        tags: list[str] = self.header.setdefault("tags", [])
        lines = self._value_lines(entry)
        for v, lineno in zip(entry.values, lines, strict=True):
            if not v.raw:
                continue
            slug = slug_within(v.value, LIMITS["tag"])
            if not slug:
                self.value(lineno, entry, v)
                continue
            seen = self.seen.setdefault("tags", set())
            if slug in tags:
                # A duplicate after slugging is dropped; unless it repeats a value exactly,
                # it is surfaced as written.
                if v.value not in seen:
                    seen.add(v.value)
                    self.value(lineno, entry, v)
                continue
            seen.add(v.value)
            if len(tags) >= LIMITS["tags"]:
                self.value(lineno, entry, v)
                continue
            tags.append(slug)
            if not slug_is_lossless(v.value, slug):
                self.value(lineno, entry, v)
        self.comments(entry)

    def links(self, entry: _Entry, name: str) -> None:
        """builds_on or supersedes: note and attempt ids, in order, each once."""
        links: list[str] = self.header.setdefault(name, [])
        # A set beside the list: a header of 50,000 ids was quadratic with `not in links` (27 s).
        # Made once: setdefault's default would copy the list again for each line of the key.
        known = self.seen.get(name)
        if known is None:
            known = self.seen[name] = set(links)
        for v, lineno in zip(entry.values, self._value_lines(entry), strict=True):
            target = v.value.strip()
            if not v.raw:
                continue
            if not is_link_id(target):
                self.value(lineno, entry, v)
            elif target not in known:
                known.add(target)
                links.append(target)
        self.comments(entry)

    @staticmethod
    def _value_lines(entry: _Entry) -> list[int]:
        if entry.item_lines:
            return [lineno for lineno, _ in entry.item_lines]
        return [entry.lineno] * len(entry.values)


def oversized_header(text: str) -> int | None:
    """The length of *text*'s header when it closes past :data:`HEADER_MAX` characters (a
    write is refused for it), else None. A header by :func:`parse_note`'s own rule: a block
    that opens with ``---`` but is not a header (a rule, then prose) is body and not refused."""
    start = 1 if text.startswith("\ufeff") else 0
    first = text.find("\n", start)
    opening = text[start:first]
    if first < 0 or not _DELIM.fullmatch(opening[:-1] if opening.endswith("\r") else opening):
        return None
    closing = _CLOSING.search(text, first)  # the line _lines would close on, found in C
    if closing is None or closing.start() + 1 - start <= HEADER_MAX:
        return None
    lines = _lines(text, start)
    items = _classify([content for _, _, content in lines[1:-1]]) if lines else None
    if items is None or not {item.key for item in items if isinstance(item, _Entry)} & _QUALIFYING:
        return None
    return lines[-1][0] - start


def parse_note(text: str) -> ParsedNote:
    """Split *text* into its optional header, the header's extras and the body.

    Never raises for any string; when there is no header, ``body`` is the whole text.
    """
    start = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", start):
        return ParsedNote(None, [], text)
    lines = _lines(text, start)
    if len(lines) < 2 or not _DELIM.fullmatch(lines[0][2]):
        return ParsedNote(None, [], text)
    block = [content for _, _, content in lines[1:-1]]
    items = _classify(block)
    if items is None:
        return ParsedNote(None, [], text)
    keys = {item.key for item in items if isinstance(item, _Entry)}
    if not keys & _QUALIFYING:
        return ParsedNote(None, [], text)
    b = _Builder()
    for item in items:
        if not isinstance(item, _Entry):
            b.extra.append(item)
            continue
        key = item.key
        if key == "title":
            b.scalar(item, "title", LIMITS["title"])
        elif key in ("kind", "type"):
            b.scalar(item, "kind", LIMITS["kind"], slug=True)
        elif key == "model":
            b.scalar(item, "model", LIMITS["model"])
        elif key == "summary":
            b.scalar(item, "summary", None)
        elif key == "tags":
            if item.values:
                b.tags(item)
            else:
                b.header.setdefault("tags", [])
                b.comments(item)
        elif key in ("builds_on", "supersedes"):
            b.links(item, key)
        else:
            b.whole(item)
    b.extra.sort(key=lambda pair: pair[0])
    body = text[lines[-1][1] :]
    return ParsedNote(b.header, [line for _, line in b.extra], body)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


def quote_value(value: str) -> str:
    """*value* as a quoted header value that reads back exactly (one line only)."""
    return _quote(value)


@dataclass(frozen=True, slots=True)
class HeaderLayout:
    """Where a note's header sits, line by line, for edits that touch only what they must.

    ``lines`` are (start, end incl. newline, content) of every line of the block, the
    two delimiters included; an entry's line numbers count from the line after the
    opening delimiter, so entry line *k* is ``lines[k + 1]``.
    """

    lines: list[tuple[int, int, str]]
    entries: list[Any]  # the header's key entries, in order (first of a repeated key first)

    def first(self, key: str) -> Any | None:
        return next((e for e in self.entries if e.key == key), None)


def header_layout(text: str) -> HeaderLayout | None:
    """The layout of *text*'s header, or None when it has none (the same rule as parse_note)."""
    start = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", start):
        return None
    lines = _lines(text, start)
    if len(lines) < 2 or not _DELIM.fullmatch(lines[0][2]):
        return None
    items = _classify([content for _, _, content in lines[1:-1]])
    if items is None:
        return None
    entries = [item for item in items if isinstance(item, _Entry)]
    if not {e.key for e in entries} & _QUALIFYING:
        return None
    return HeaderLayout(lines, entries)


def compose_note(
    body: str,
    *,
    title: str | None = None,
    kind: str | None = None,
    tags: list[str] | tuple[str, ...] = (),
    builds_on: list[str] | tuple[str, ...] = (),
    model: str | None = None,
    summary: str | None = None,
    supersedes: list[str] | tuple[str, ...] = (),
) -> str:
    """A note text with a header holding the given fields, then *body*.

    Values are quoted so that :func:`parse_note` reads back exactly what was given;
    a field whose value cannot be one header line raises ValueError.
    """
    lines = ["---"]
    for name, value in (("title", title), ("kind", kind), ("model", model), ("summary", summary)):
        if value is None:
            continue
        if "\n" in value or "\r" in value:
            raise ValueError(f"{name} must be one line")
        lines.append(f"{name}: {_quote(value)}")
    for name, values in (("tags", tags), ("builds_on", builds_on), ("supersedes", supersedes)):
        if any("\n" in v or "\r" in v for v in values):
            raise ValueError(f"{name} must be one line each")
        if values:
            lines.append(f"{name}: [" + ", ".join(_quote(t) for t in values) + "]")
    if len(lines) == 1:
        return body
    lines.append("---")
    return "\n".join(lines) + "\n" + body
