"""Timestamps: UTC, ISO 8601, fixed width so that they sort as strings."""

from __future__ import annotations

from datetime import UTC, datetime

from ..errors import InvalidArgumentError

__all__ = ["iso_from_ns", "now_iso", "parse_when"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now_iso() -> str:
    """Now, e.g. ``2026-11-29T21:53:13.123456Z``."""
    return datetime.now(UTC).strftime(_FORMAT)


def iso_from_ns(ns: int) -> str:
    """A file's mtime (nanoseconds since the epoch) as a timestamp."""
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime(_FORMAT)


def parse_when(value: str | datetime, *, name: str = "date") -> str:
    """A filter bound (``2026-11-29``, an ISO timestamp or a datetime) as a timestamp.

    Raises InvalidArgumentError for anything else.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidArgumentError(
                f"{name}: {value!r} is not a date (use e.g. 2026-11-29 or 2026-11-29T10:00:00Z)"
            ) from None
    else:
        raise InvalidArgumentError(f"{name}: expected a date string, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(_FORMAT)
