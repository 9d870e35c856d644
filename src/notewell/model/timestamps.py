"""Timestamps: UTC, ISO 8601, fixed width so that they sort as strings; relative dates
(``7d``, ``2w``, ``3m``, ``yesterday``, ``today``) read in the caller's time zone; and how old
a time is, in words an agent reads at a glance (``3 days ago``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from ..errors import InvalidArgumentError

__all__ = ["age_words", "iso_from_ns", "just_after", "now_iso", "parse_when", "time_zone"]

_RELATIVE = re.compile(r"(\d{1,5})\s*([hdwmy])")
_UNITS = {"h": "hours", "d": "days", "w": "weeks", "m": "months", "y": "years"}
_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?")
_FORMS = "2026-11-29, 2026-11-29T10:00:00Z, 7d, 2w, 3m, 1y, 12h, yesterday or today"

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


def just_after(stamp: str) -> str | None:
    """The timestamp one microsecond after *stamp* (fixed-width ISO 8601, UTC); None past the
    calendar's last one. A page of notes ends at its oldest time: the next is asked for below
    this, the ties read again (see services/reports.py and stale.py)."""
    try:
        moment = datetime.fromisoformat(stamp[:-1] + "+00:00") + timedelta(microseconds=1)
    except (OverflowError, ValueError):
        return None
    return _stamp(moment)


def iso_from_ns(ns: int) -> str:
    """A file's mtime (nanoseconds since the epoch) as a timestamp."""
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime(_FORMAT)


def time_zone(name: str | None) -> tzinfo:
    """The time zone *name* says (an IANA name such as ``Europe/Berlin``, ``UTC``, or an offset
    such as ``+02:00``); None: this machine's own. InvalidArgumentError for anything else."""
    if name is None or not str(name).strip():
        return datetime.now().astimezone().tzinfo or UTC
    text = str(name).strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET.fullmatch(text)
    if offset:
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if delta > timedelta(hours=14):
            raise InvalidArgumentError(f"tz: {text!r} is more than 14 hours from UTC")
        return timezone(-delta if sign == "-" else delta)
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # No zone data on the system (a slim image, Windows): `pip install tzdata`; offsets always work.
        raise InvalidArgumentError(
            f"tz: {text[:60]!r} is not a time zone this machine knows (use e.g. Europe/Berlin or +02:00)"
        ) from None


def _months_back(moment: datetime, months: int) -> datetime:
    """*moment* that many calendar months earlier (the 31st becomes the month's last day)."""
    total = moment.year * 12 + moment.month - 1 - months
    year, month = divmod(total, 12)
    if year < 1:
        return moment.replace(year=1, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    day = moment.day
    while True:
        try:
            return moment.replace(year=year, month=month + 1, day=day)
        except ValueError:
            day -= 1


def _relative(text: str, now: datetime) -> datetime | None:
    """The moment a relative form names, *now* being in the caller's zone; None: not one."""
    word = text.lower()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if word == "today":
        return midnight
    if word == "yesterday":
        # A calendar day earlier, at its midnight in the zone (a day of 23 or 25 hours included).
        day = midnight.date() - timedelta(days=1)
        return datetime(day.year, day.month, day.day, tzinfo=now.tzinfo)
    if word == "now":
        return now
    found = _RELATIVE.fullmatch(word)
    if found is None:
        return None
    count, unit = int(found.group(1)), found.group(2)
    try:
        if unit == "m":
            return _months_back(now, count)
        if unit == "y":
            return _months_back(now, 12 * count)
        return now - timedelta(**{_UNITS[unit]: count})
    except OverflowError:
        return datetime(1, 1, 1, tzinfo=UTC)


def parse_when(
    value: str | datetime, *, name: str = "date", zone: str | None = None, now: datetime | None = None
) -> str:
    """A filter bound as a timestamp: an ISO date or time (``2026-11-29``, ``2026-11-29T10:00Z``;
    one without an offset is in *zone*), a datetime, or a relative form: ``7d`` (7 days ago),
    ``2w``, ``3m`` (calendar months), ``1y``, ``12h``, ``yesterday`` and ``today`` (their
    midnight in *zone*, the caller's time zone: see :func:`time_zone`). *now*: the present (tests).

    Raises InvalidArgumentError for anything else.
    """
    where = time_zone(zone)
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        text = value.strip()
        moment_or_none = _relative(text, (now or datetime.now(UTC)).astimezone(where))
        if moment_or_none is not None:
            moment = moment_or_none
        else:
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise InvalidArgumentError(f"{name}: {value[:60]!r} is not a date (use {_FORMS})") from None
    else:
        raise InvalidArgumentError(f"{name}: expected a date string, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=where if zone is not None else UTC)
    try:
        return _stamp(moment.astimezone(UTC))
    except OverflowError:
        # A time in year 1 or 9999 whose offset takes UTC past the calendar's end
        # (0001-01-01T00:00+05:00): the first or last time there is, which every note is after
        # or before, as it is after or before the time given.
        return _FIRST if moment.year == 1 else _LAST


def age_words(iso: str | None, *, now: datetime | None = None) -> str | None:
    """How long ago *iso* was, as a person says it: ``just now``, ``5 minutes ago``, ``3 hours
    ago``, ``yesterday``, ``4 days ago``, ``3 weeks ago``, ``2 months ago``, ``1 year ago``
    (``in the future`` for a clock ahead); None when it does not parse."""
    if not iso:
        return None
    try:
        moment = datetime.fromisoformat(iso[:-1] + "+00:00" if iso.endswith("Z") else iso)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = ((now or datetime.now(UTC)) - moment).total_seconds()
    if seconds < -60:
        return "in the future"
    for limit, size, unit in (
        (60, 1, None),
        (3600, 60, "minute"),
        (86400, 3600, "hour"),
        (2 * 86400, 86400, "yesterday"),
        (14 * 86400, 86400, "day"),
        (60 * 86400, 7 * 86400, "week"),
        (365 * 86400, 30 * 86400, "month"),
    ):
        if seconds < limit:
            if unit is None:
                return "just now"
            if unit == "yesterday":
                return "yesterday"
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    n = int(seconds // (365 * 86400))
    return f"{n} year{'' if n == 1 else 's'} ago"
