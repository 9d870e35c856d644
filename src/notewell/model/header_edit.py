"""Careful header edits: add tags, set the summary, and change nothing else.

Comments, unknown keys, the order and the formatting of every other line stay
byte for byte; the note's line endings (LF or CRLF) are kept. A note without a
header gets one.
"""

from __future__ import annotations

import re

from ..errors import InvalidArgumentError
from .header import LIMITS, HeaderLayout, ParsedNote, header_layout, parse_note, quote_value
from .ids import is_note_id
from .note import heading_text, line_title, written_title
from .slug import slug_within

__all__ = ["with_body", "with_line", "with_summary", "with_supersedes", "with_tags"]

_BARE_ITEM = re.compile(r"[^\W_][\w.+-]*")
_SUMMARY_MAX = 2000


def _opens_with_heading(body: str) -> bool:
    first = body.lstrip("\ufeff").lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
    return heading_text(first) is not None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _item(tag: str) -> str:
    return tag if _BARE_ITEM.fullmatch(tag) else quote_value(tag)


def _new_header(text: str, lines: list[str]) -> str:
    nl = _newline(text)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    return bom + nl.join(["---", *lines, "---"]) + nl + text[len(bom) :]


def _insert_before_close(text: str, layout: HeaderLayout, line: str) -> str:
    close_start = layout.lines[-1][0]
    return text[:close_start] + line + _newline(text) + text[close_start:]


def _line_span(layout: HeaderLayout, lineno: int) -> tuple[int, int, str]:
    return layout.lines[lineno + 1]


def with_tags(text: str, tags: list[str] | tuple[str, ...]) -> tuple[str, list[str]]:
    """*text* with *tags* added to its header (slugged, duplicates dropped); returns the
    new text and the tags actually added. InvalidArgumentError for a tag with nothing
    to keep or past the 20-tag limit."""
    most = LIMITS["tags"]
    wanted: dict[str, None] = {}  # in order, each once (a list made this quadratic in the tags given)
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidArgumentError(f"a tag must be a string, not {type(tag).__name__}")
        slug = slug_within(tag, LIMITS["tag"])
        if not slug:
            shown = repr(tag) if len(tag) <= 60 else f"of {len(tag):,} characters"
            raise InvalidArgumentError(f"tag {shown} is empty or over {LIMITS['tag']} characters as a slug")
        wanted[slug] = None
        if len(wanted) > most:  # stop at once: the rest cannot fit whatever the note holds
            raise InvalidArgumentError(f"a note holds at most {most} tags; more than {most} different ones were given")
    parsed = parse_note(text)
    have = set((parsed.header or {}).get("tags", []))
    new = [t for t in wanted if t not in have]
    if not new:
        return text, []
    if len(have) + len(new) > most:
        raise InvalidArgumentError(
            f"a note holds at most {most} tags; it has {len(have)} and {len(new)} new ones would make"
            f" {len(have) + len(new)}"
        )
    return _with_items(text, parsed, "tags", new), new


def with_supersedes(text: str, note_ids: list[str] | tuple[str, ...]) -> tuple[str, list[str]]:
    """*text* with *note_ids* added to its header's ``supersedes`` (ids it has are skipped);
    returns the new text and the ids actually added. InvalidArgumentError for one that is not
    a note id. Every other line stays byte for byte, as with :func:`with_tags`."""
    wanted: dict[str, None] = {}
    for nid in note_ids:
        if not isinstance(nid, str) or not is_note_id(nid.strip()):
            shown = repr(nid)[:60]
            raise InvalidArgumentError(f"supersedes: {shown} is not a note id (ids look like nte_0h3k9x2c7m)")
        wanted[nid.strip()] = None
    parsed = parse_note(text)
    have = set((parsed.header or {}).get("supersedes", []))
    new = [n for n in wanted if n not in have]
    return (_with_items(text, parsed, "supersedes", new), new) if new else (text, [])


def _with_items(text: str, parsed: ParsedNote, key: str, new: list[str]) -> str:
    """*text* with *new* items added to the list field *key* of its header (made if need be)."""
    layout = header_layout(text)
    if layout is None:
        return _new_header(text, [f"{key}: [" + ", ".join(_item(t) for t in new) + "]"])
    entry = layout.first(key)
    if entry is None:
        return _insert_before_close(text, layout, f"{key}: [" + ", ".join(_item(t) for t in new) + "]")
    nl = _newline(text)
    if entry.item_lines or (not entry.values and not entry.is_list):
        # A block list (or an empty key): one "- tag" line each, after the last one.
        if entry.item_lines:
            last_no, last_line = entry.item_lines[-1]
            prefix = re.match(r"[ \t]*-[ \t]*", last_line).group(0)  # type: ignore[union-attr]
            if not prefix.endswith((" ", "\t")):
                prefix += " "  # copied from an empty "-": an item needs a blank after its dash
        else:
            last_no, prefix = entry.lineno, "  - "
        at = _line_span(layout, last_no)[1]
        added = "".join(prefix + _item(t) + nl for t in new)
        return text[:at] + added + text[at:]
    start, _end, line = _line_span(layout, entry.lineno)
    comment_at = len(line)
    for _no, comment in entry.comments:
        found = line.rfind(comment)
        if found >= 0:
            comment_at = min(comment_at, found)
    items = ", ".join(_item(t) for t in new)
    if entry.is_list:
        open_at = line.index("[")
        close = line.rfind("]", 0, comment_at)
        if line[open_at + 1 : close].strip():
            changed = line[:close].rstrip() + ", " + items + line[close:]
        else:
            changed = line[: open_at + 1] + items + line[close:]
    else:
        colon = line.index(":")
        # The old value becomes the list's first item, quoted where it holds "," "]" or quotes,
        # so that it stays the one tag it was.
        value = entry.values[0].value
        if any(e.lstrip().lower().startswith(key) for e in parsed.extra):
            # The reader set this line aside (it is kept, unread, among the extras): guessing
            # what it meant could lose it, so it is left for a person to fix.
            raise InvalidArgumentError(f"the note's {key}: value {value!r} is not plain {key}; fix that line first")
        comment = line[comment_at:]
        tail = f" {comment}" if comment.strip() else ""  # blanks of any kind around the value go
        listed = f"[{_item(value)}, {items}]" if value.strip() else f"[{items}]"
        changed = line[: colon + 1] + " " + listed + tail
    return text[:start] + changed + text[start + len(line) :]


def with_summary(text: str, summary: str) -> str:
    """*text* with ``summary:`` in its header set to *summary* (whitespace collapsed to
    one line). A note without a header gets one, with its current title, since a
    summary alone does not make a header."""
    if not isinstance(summary, str):
        raise InvalidArgumentError(f"a summary must be a string, not {type(summary).__name__}")
    one_line = " ".join(summary.split())
    if not one_line:
        raise InvalidArgumentError("the summary is empty")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in one_line):
        raise InvalidArgumentError("a summary holds no control characters (NUL, escape, ...)")
    if len(one_line) > _SUMMARY_MAX:
        raise InvalidArgumentError(f"the summary is {len(one_line)} characters; the limit is {_SUMMARY_MAX}")
    line = "summary: " + quote_value(one_line)
    layout = header_layout(text)
    if layout is None:
        title = written_title(parse_note(text))
        head = [f"title: {quote_value(title)}"] if title else []
        if not head:
            raise InvalidArgumentError("a note with no title or heading needs one before it can take a summary")
        return _new_header(text, [*head, line])
    return with_line(text, "summary", line)


def with_line(text: str, key: str, line: str) -> str:
    """*text* with the header entry for *key* (its line and any ``- item`` lines under it)
    replaced by the one line *line*, or *line* added before the closing delimiter. A note
    without a header gets one holding *line* (which must then be a field that makes one)."""
    layout = header_layout(text)
    if layout is None:
        return _new_header(text, [line])
    entry = layout.first(key)
    if entry is None:
        return _insert_before_close(text, layout, line)
    start, end, _old = _line_span(layout, entry.lineno)
    if entry.item_lines:
        end = _line_span(layout, entry.item_lines[-1][0])[1]
    return text[:start] + line + _newline(text) + text[end:]


def with_body(text: str, body: str) -> str:
    """*text* with its body replaced by *body*: the header block stays byte for byte. A note
    without a header keeps the ``# heading`` its title comes from, when it opens with one and
    *body* does not bring a heading of its own; one titled by its first line keeps that title
    in a new header when *body* would title it otherwise (the body changes, the title stays)."""
    layout = header_layout(text)
    if layout is None:
        first = text.lstrip("\ufeff").lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
        if heading_text(first) is not None and not _opens_with_heading(body):
            return first + _newline(text) + _newline(text) + body.lstrip("\r\n")
        title = "" if written_title(parse_note(text)) else line_title(text)
        if title and not written_title(parse_note(body)) and line_title(body) != title:
            return _new_header(body, [f"title: {quote_value(title)}"])
        return body
    end = layout.lines[-1][1]
    head = text[:end]
    if not head.endswith("\n"):
        head += _newline(text)  # the closing delimiter was the last line
    return head + body
