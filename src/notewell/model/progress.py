"""How a long operation (a bulk add, a rebuild, embedding) reports how far it has got."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress"]

# Told (done, total) after each step.
Progress = Callable[[int, int], None]
