"""What a note is to the rest of notewell: checked text, its title, and the
plain-data shapes (Note, Card) every interface returns."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import InvalidArgumentError, InvalidNoteError, NoteTooLargeError
from .header import HEADER_MAX, LIMITS, ParsedNote, oversized_header, parse_note
from .numbers import whole_number
from .timestamps import age_words

__all__ = [
    "AUTHOR_MAX",
    "DEFAULT_MAX_BYTES",
    "MODEL_MAX",
    "Card",
    "Note",
    "check_label",
    "check_revision",
    "check_text",
    "check_unicode",
    "LINE_TITLE_CHARS",
    "derive_title",
    "heading_text",
    "line_title",
    "note_age",
    "note_from_text",
    "PREVIEW_CHARS",
    "preview",
    "superseded_texts",
    "title_and_body",
    "written_title",
]

DEFAULT_MAX_BYTES = 1024 * 1024
AUTHOR_MAX = 200
MODEL_MAX = 100
_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_HEADING_START = re.compile(r"[ ]{0,3}#[ \t]+")


def check_text(text: str | bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[str, bytes]:
    """Validate note text; return it as str and as the exact bytes to store.

    Raises InvalidNoteError (empty, NUL bytes, not UTF-8, a header over HEADER_MAX characters)
    or NoteTooLargeError.
    """
    if isinstance(text, bytes | bytearray):
        data = bytes(text)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidNoteError(f"note is not valid UTF-8 (byte {exc.start})") from None
    elif isinstance(text, str):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidNoteError("note contains unpaired surrogates and is not valid UTF-8") from None
    else:
        raise InvalidNoteError(f"note text must be a string, not {type(text).__name__}")
    if len(data) > max_bytes:
        raise NoteTooLargeError(f"note is {len(data)} bytes; the limit is {max_bytes} bytes")
    if "\x00" in text:
        raise InvalidNoteError("note contains a NUL byte")
    if not text.strip():
        raise InvalidNoteError("note is empty")
    header = oversized_header(text)
    if header is not None:
        raise InvalidNoteError(
            f"the note's header is {header:,} characters; the limit is {HEADER_MAX:,} (long text belongs in the body)"
        )
    return text, data


def check_unicode(value: str, name: str) -> str:
    """*value* unchanged if it is text a file or a database can hold (no lone surrogate, as
    a non-UTF-8 command-line argument arrives); else InvalidArgumentError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"{name}: not valid Unicode text (it holds a lone surrogate)") from None
    return value


def check_revision(revision: object) -> int | None:
    """A revision number asked for (None: the current one); else InvalidArgumentError."""
    return None if revision is None else whole_number("revision", revision)


def check_label(value: str | None, name: str, limit: int) -> str | None:
    """A one-line label (author, model) stripped, or None when empty; else InvalidArgumentError."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a string")
    value = value.strip()
    if not value:
        return None
    if "\n" in value or "\r" in value or "\x00" in value:
        raise InvalidArgumentError(f"{name} must be one line")
    if len(value) > limit:
        raise InvalidArgumentError(f"{name} is {len(value)} characters; the limit is {limit}")
    return check_unicode(value, name)


def heading_text(line: str) -> str | None:
    """The text of an ATX heading of level 1 (``# Title``, an optional closing ``#`` run
    dropped, blanks stripped), or None when it has none. By hand: the regex it replaces backtracked quadratically on a
    heading padded with blanks (40,000 of them: 20 s on every add)."""
    start = _HEADING_START.match(line)
    if start is None:
        return None
    rest = line[start.end() :].rstrip(" \t")
    if not rest:
        return None
    bare = rest.rstrip("#")
    if bare and bare[-1] in " \t":  # a closing sequence: hashes after a blank
        rest = bare
    return rest.strip() or None  # a heading of blanks names nothing


def written_title(parsed: ParsedNote) -> str:
    """The title the note gives itself: the header's, else the first ``# `` heading of the
    body, else "" (a note of plain text)."""
    if parsed.header and parsed.header.get("title"):
        return str(parsed.header["title"])
    for line, in_code in _fenced_lines(parsed.body):
        if not in_code and (title := heading_text(line)) is not None:
            return title.strip()[: LIMITS["title"]]
    return ""


def _fenced_lines(body: str) -> Iterator[tuple[str, bool]]:
    """The body's lines but its fence lines, each with whether a code fence holds it."""
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if m:  # a fence line names a language, not the note
            marker = m.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        yield line, fence is not None


def derive_title(parsed: ParsedNote, filename: str) -> str:
    """The note's own title (:func:`written_title`), else its first line of words shortened
    (:func:`line_title`), else the file name."""
    title = written_title(parsed) or line_title(parsed.body)
    if title:
        return title
    stem = filename.rsplit("/", 1)[-1]
    return stem[:-3] if stem.endswith(".md") else stem


LINE_TITLE_CHARS = 80
# What opens a line without being its words: list, task and quote marks, lesser headings' hashes.
_LINE_MARKUP = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)]|>|#{1,6}|\[[ xX]\])(?=[ \t]|$)[ \t]*)*")
_SENTENCE_END = re.compile(r"[。！？]|[.!?](?=\s)")


def line_title(body: str) -> str:
    """A title for a note that has none: its first line of words outside a code fence (else the
    first inside one), without the list, task, quote or heading marks it opens with; past
    LINE_TITLE_CHARS characters it ends at its first sentence's end, else at the last word that
    fits, with an ellipsis. "" when no line holds a letter or a digit."""
    in_code = ""
    for raw, fenced in _fenced_lines(body):
        if fenced:
            in_code = in_code or _words_of(raw)
            continue
        if words := _words_of(raw):
            return _shortened(words)
    return _shortened(in_code) if in_code else ""


def _words_of(raw: str) -> str:
    """A line's words without the marks it opens with (and a heading's closing hashes), on one
    line; "" when it holds no letter or digit."""
    line = " ".join(raw[_LINE_MARKUP.match(raw).end() :].split())  # type: ignore[union-attr]  # it matches ""
    if raw.lstrip().startswith("#"):
        line = re.sub(r"(?:^| )#+$", "", line)
    return line if any(ch.isalnum() for ch in line) else ""


def _shortened(line: str) -> str:
    if len(line) <= LINE_TITLE_CHARS:
        return line
    end = _SENTENCE_END.search(line, 12, LINE_TITLE_CHARS)
    if end is not None:  # a question keeps its mark; a statement's full stop goes
        return line[: end.end()] if end.group() in "?!？！" else line[: end.start()]
    cut = line[: LINE_TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= LINE_TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def note_age(created_at: str, updated_at: str) -> str | None:
    """How old a note is, as an agent reads it at a glance: ``written 2 hours ago`` for one
    never changed, else ``updated 3 days ago`` (None when the time does not parse)."""
    words = age_words(updated_at)
    if words is None:
        return None
    return ("written " if updated_at == created_at else "updated ") + words


PREVIEW_CHARS = 240


def preview(body: str) -> str:
    """The opening of a body on one line: a card's snippet when no word of the query shows.
    A ``# heading`` the body opens with is left out: the card shows it as its title already."""
    start = len(body) - len(body.lstrip("\r\n\t "))
    start = body.rfind("\n", 0, start) + 1  # the first line with words, from its own start
    end = body.find("\n", start)
    first = body[start:] if end < 0 else body[start:end]
    if heading_text(first) is not None:
        body = "" if end < 0 else body[end + 1 :]
    return " ".join(body.split())[:PREVIEW_CHARS]


def title_and_body(text: str, filename: str) -> tuple[str, str]:
    """The title (:func:`derive_title`) and the body of a note's text, as the index keeps them."""
    parsed = parse_note(text)
    return derive_title(parsed, filename), parsed.body


def superseded_texts(versions: Sequence[tuple[int, str]], filename: str) -> list[tuple[int, str, str]]:
    """(revision, title, body) of each of a note's revisions whose title or body the next one
    changed, from its (revision, text) pairs oldest first, the current text last: what search
    keeps of older revisions (one that changed only the header adds nothing to find)."""
    parts = [(revision, *title_and_body(text, filename)) for revision, text in versions]
    return [part for part, after in zip(parts, parts[1:], strict=False) if part[1:] != after[1:]]


def _copied(value: Any) -> Any:
    """*value* with its lists and dicts copied, as dataclasses.asdict copies them (a list of
    strings in one C call: asdict deep-copied each of a note's 50,000 links, 0.4 s a read)."""
    if isinstance(value, list):
        return list(value) if all(type(v) is str for v in value) else [_copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value


def _as_dict(obj: Any) -> dict[str, Any]:
    return {f.name: _copied(getattr(obj, f.name)) for f in fields(obj)}


@dataclass(slots=True)
class Card:
    """A search or list hit: enough to decide whether to read the note."""

    id: str
    title: str
    kind: str | None
    tags: list[str]
    builds_on: list[str]
    model: str | None
    author: str | None
    created_at: str
    updated_at: str
    snippet: str
    score: float | None
    attempt_id: str | None = None
    project: str | None = None
    campaign: str | None = None
    note_kind: str = "note"  # or "summary": what end_attempt wrote
    attempt_outcome: str | None = None
    attempt_ended_at: str | None = None
    mode: str = "keyword"  # the engine that found it: keyword or semantic (its score is that engine's)
    # The older revision whose text matched (None: the current text). Such a card comes after
    # every card its current text found; the rest of it is the note as it is now.
    matched_revision: int | None = None
    # The later notes the viewer may see that name this one in ``supersedes`` (newest first).
    superseded_by: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Its fields, and ``age``: how old it is in words (``updated 3 days ago``)."""
        return {**_as_dict(self), "age": note_age(self.created_at, self.updated_at)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Card:
        """The card a :meth:`to_dict` made (its ``age`` is worked out again, not kept)."""
        return cls(**{k: v for k, v in data.items() if k != "age"})

    @classmethod
    def from_columns(cls, columns: Sequence[Any], snippet: str, score: float | None) -> Card:
        """A card from a store's card columns, in the order of the stores' card queries (tags and
        builds_on as lists: each store decodes its own column types first)."""
        (nid, title, kind, tags, builds_on, model, author, created, updated) = columns[:9]
        attempt_id, project, campaign, note_kind, outcome, ended = columns[9:15]
        return cls(
            id=nid,
            title=title,
            kind=kind,
            tags=tags,
            builds_on=builds_on,
            model=model,
            author=author,
            created_at=created,
            updated_at=updated,
            snippet=snippet,
            score=score,
            attempt_id=attempt_id,
            project=project,
            campaign=campaign,
            note_kind=note_kind or "note",
            attempt_outcome=outcome,
            attempt_ended_at=ended,
        )


@dataclass(slots=True)
class Note:
    """A whole note: its text exactly as written, the parsed header and the links to it."""

    id: str
    path: str
    title: str
    kind: str | None
    tags: list[str]
    builds_on: list[str]
    model: str | None
    summary: str | None
    author: str | None
    created_at: str
    updated_at: str
    revision: int
    revisions: int
    text: str
    header: dict[str, Any] | None
    extra: list[str]
    body: str
    backlinks: list[dict[str, Any]] = field(default_factory=list)
    attempt_id: str | None = None
    note_kind: str = "note"
    attempt: dict[str, Any] | None = None  # the attempt it was written on (Attempt.to_dict())
    supersedes: list[str] = field(default_factory=list)  # the header's supersedes: ids it corrects
    # The later notes the viewer may see that name this one in their supersedes (newest first).
    superseded_by: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Its fields, and ``age``: how old it is in words (``updated 3 days ago``)."""
        return {**_as_dict(self), "age": note_age(self.created_at, self.updated_at)}


def note_from_text(text: str, *, path: str, model: str | None, **meta: Any) -> Note:
    """A whole note from its text and what the store keeps beside it (*meta*: id, author,
    created_at, updated_at, revision, revisions, backlinks, attempt_id, note_kind, attempt).
    Title, kind, tags, links, summary and model come from the header as written."""
    parsed = parse_note(text)
    header = parsed.header or {}
    return Note(
        path=path,
        title=derive_title(parsed, path),
        kind=header.get("kind"),
        tags=list(header.get("tags", [])),
        builds_on=list(header.get("builds_on", [])),
        supersedes=list(header.get("supersedes", [])),
        model=header.get("model") or model,
        summary=header.get("summary"),
        text=text,
        header=parsed.header,
        extra=parsed.extra,
        body=parsed.body,
        **meta,
    )
