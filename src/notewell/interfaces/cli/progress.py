"""A one-line progress bar on stderr for long work (reindex, import)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Call with (done, total); draws at most ten times a second, only on a terminal
    unless forced."""

    def __init__(self, label: str, *, stream: TextIO | None = None, force: bool = False) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
