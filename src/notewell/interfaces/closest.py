"""The word a mistyped one most likely meant, shared by the interfaces (the command line's
commands, options and choices; MCP's tool groups and arguments)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest"]


def closest(word: str, known: Iterable[str]) -> str | None:
    """The one of *known* that *word* most likely mistypes, or None when none is close."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None
