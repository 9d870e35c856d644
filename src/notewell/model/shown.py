"""Text from outside (a zip member's name, a transcript's path, a conversation's id) as a
terminal may show it: every character that is not printable written as an escape, so that a
newline cannot start a line of its own and an ANSI sequence cannot move the cursor or recolour
what follows."""

from __future__ import annotations

__all__ = ["shown"]


def shown(text: str) -> str:
    """*text* with each unprintable character (controls, escapes, line and bidi separators) escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
