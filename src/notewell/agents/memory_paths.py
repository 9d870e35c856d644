"""Paths of Anthropic's memory tool (``memory_20250818``), checked once: every path lies under
``/memories``.

A memory path never becomes a file path (each memory file is a note, stored under its note id),
so nothing on disk can be reached through one; still a path is refused, in the protocol's error
form, when it could mean something else to a reader or another implementation: ``..`` or ``.``
segments, empty segments (``//``), a backslash, a NUL or another control character, a
percent-encoded byte (``%2e%2e``), a name that starts or ends with a blank (a title would lose
it), or one outside ``/memories``. So is a path that could pass for another: one holding an
invisible character (Unicode's format characters: zero-width spaces and joiners, a byte order
mark, the marks that reverse text's direction), one not in Unicode's composed form (NFC: ``café``
decomposed would be a second file named alike), or a name that is ``.`` or ``..``, or holds a
slash, once its compatibility forms are folded (``．．``, ``a／b``, as NFKC reads them).
"""

from __future__ import annotations

import re
import unicodedata

from ..errors import InvalidArgumentError

__all__ = ["MAX_PATH_CHARS", "MAX_SEGMENTS", "ROOT", "MemoryCommandError", "check_path", "shown", "under"]

ROOT = "/memories"
MAX_PATH_CHARS = 1024  # a path's characters: titles and headers stay small
MAX_SEGMENTS = 32  # directories deep, the file included
_SEGMENT_BYTES = 255  # as most file systems allow
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # and the line breaks str.splitlines() knows
_SHOWN_CHARS = 300


class MemoryCommandError(InvalidArgumentError):
    """A memory command the protocol refuses; the message is the protocol's text, sent to the
    model as the tool's error."""


def _invisible(text: str) -> str | None:
    """The first format character (Unicode's Cf) in *text*, if any."""
    return next((c for c in text if unicodedata.category(c) == "Cf"), None)


def shown(text: str) -> str:
    """*text* as an error may quote it: control and format characters escaped, cut after 300
    characters."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if _invisible(text) is not None:
        text = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in text)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def check_path(path: object) -> str:
    """*path* as the one form it is kept in (``/memories`` or ``/memories/a/b.md``, no slash at
    the end), or MemoryCommandError saying why it is refused."""
    if not isinstance(path, str):
        raise MemoryCommandError(f"Error: the path must be a string, not {type(path).__name__}")
    if len(path) > MAX_PATH_CHARS:
        raise MemoryCommandError(f"Error: the path {shown(path)} is over {MAX_PATH_CHARS} characters")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise MemoryCommandError(f"Error: the path {shown(path)!a} is not valid UTF-8") from None
    if _CONTROL.search(path) or "\\" in path or _ENCODED.search(path):
        raise MemoryCommandError(f"Path {shown(path)} would escape /memories directory")
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise MemoryCommandError(f"Path must start with /memories, got: {shown(path)}")
    kept = path[:-1] if path.endswith("/") and path != ROOT + "/" else path
    if kept == ROOT + "/":
        return ROOT
    segments = kept.split("/")[2:]
    folded = [unicodedata.normalize("NFKC", segment) for segment in segments]
    if any(fold in ("", ".", "..") or "/" in fold or "\\" in fold for fold in folded):
        raise MemoryCommandError(f"Path {shown(path)} would escape /memories directory")
    hidden = _invisible(kept)
    if hidden is not None:
        raise MemoryCommandError(f"Error: the path {shown(path)} holds an invisible character (U+{ord(hidden):04X})")
    if not unicodedata.is_normalized("NFC", kept):
        raise MemoryCommandError(f"Error: the path {shown(path)} is not in Unicode's composed form (NFC)")
    if len(segments) > MAX_SEGMENTS:
        raise MemoryCommandError(f"Error: the path {shown(path)} is over {MAX_SEGMENTS} directories deep")
    if any(segment != segment.strip() for segment in segments):
        raise MemoryCommandError(f"Error: a name in {shown(path)} starts or ends with a blank")
    if any(len(segment.encode("utf-8")) > _SEGMENT_BYTES for segment in segments):
        raise MemoryCommandError(f"Error: a name in {shown(path)} is over {_SEGMENT_BYTES} bytes")
    return kept


def under(path: str, directory: str) -> bool:
    """True when *path* lies inside *directory* (both checked paths), not at it."""
    return path.startswith(directory + "/")
