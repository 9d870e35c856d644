"""Timestamps: UTC, ISO 8601, fixed width so that they sort as strings."""

from __future__ import annotations

from datetime import UTC, datetime

from ..errors import InvalidArgumentError

__all__ = ["iso_from_ns", "now_iso", "parse_when"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_FIRST, _LAST = "0001-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z"


def _stamp(moment: datetime) -> str:
    """*moment* (in UTC) in the fixed-width form; by hand, since strftime writes year 999 as
    "999", which sorts after "2026"."""
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond:06d}Z"
    )


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
    try:
        return _stamp(moment.astimezone(UTC))
    except OverflowError:
        # A time in year 1 or 9999 whose offset takes UTC past the calendar's end
        # (0001-01-01T00:00+05:00): the first or last time there is, which every note is after
        # or before, as it is after or before the time given.
        return _FIRST if moment.year == 1 else _LAST
