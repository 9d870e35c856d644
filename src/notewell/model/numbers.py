"""The one check for a whole-number argument (a limit, an offset, a depth, a size)."""

from __future__ import annotations

from ..errors import InvalidArgumentError

__all__ = ["whole_number"]


def whole_number(name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """*value* if it is a whole number from *low* to *high* (no upper bound: None); else
    InvalidArgumentError naming *name* and the range. True and False are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        wanted = f"from {low} to {high}" if high is not None else f"of at least {low}"
        # An int of over 4,300 digits cannot be printed; say what it is instead.
        shown = value if not isinstance(value, int) or abs(value) < 10**50 else "a very large number"
        raise InvalidArgumentError(f"{name} must be a whole number {wanted}, got {shown!r}")
    return value
