"""What a command reads as a note's text: a FILE, standard input or ``--text``; and the help of
``--author`` and ``--model``, the options that say who wrote it."""

from __future__ import annotations

import sys

from ...errors import InvalidArgumentError, InvalidNoteError

__all__ = ["AUTHOR_HELP", "MODEL_HELP", "decode", "line_ended", "read_input"]

AUTHOR_HELP = "who writes it (default: $NOTEWELL_AUTHOR)"
MODEL_HELP = "the model that wrote it (default: $NOTEWELL_MODEL)"


def read_input(source: str | None) -> bytes:
    """The bytes of file *source*, or of standard input for ``-`` (or None, unless a terminal)."""
    if source in (None, "-"):
        if source is None and sys.stdin.isatty():
            raise InvalidArgumentError("give a FILE, '-' to read standard input, or --text")
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {source}: {exc.strerror}") from None


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidNoteError(f"note is not valid UTF-8 (byte {exc.start})") from None


def line_ended(text: str) -> str:
    """A text typed on the command line, ending in a newline as a file's last line does."""
    return text if not text or text.endswith("\n") else text + "\n"
