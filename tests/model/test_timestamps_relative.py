"""Relative dates in the caller's time zone, and ages in words (day boundaries, DST, errors)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.errors import InvalidArgumentError
from notewell.model.timestamps import age_words, parse_when, time_zone

# 00:30 UTC on the day Europe moves its clocks forward: Berlin is already at 01:30, New York
# still on the evening before.
NOW = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "zone", "expected"),
    [
        ("today", "UTC", "2026-03-29T00:00:00.000000Z"),
        ("today", "Europe/Berlin", "2026-03-28T23:00:00.000000Z"),  # midnight in Berlin (CET)
        ("today", "America/New_York", "2026-03-28T04:00:00.000000Z"),  # still the 28th there
        ("yesterday", "Europe/Berlin", "2026-03-27T23:00:00.000000Z"),
        ("yesterday", "+05:30", "2026-03-27T18:30:00.000000Z"),
        ("7d", "UTC", "2026-03-22T00:30:00.000000Z"),
        ("2w", "UTC", "2026-03-15T00:30:00.000000Z"),
        ("3m", "UTC", "2025-12-29T00:30:00.000000Z"),
        ("1y", "UTC", "2025-03-29T00:30:00.000000Z"),
        ("12h", "UTC", "2026-03-28T12:30:00.000000Z"),
        (" 7D ", "UTC", "2026-03-22T00:30:00.000000Z"),
        ("2026-01-01", "Europe/Berlin", "2025-12-31T23:00:00.000000Z"),  # a date without offset: in the zone
        ("2026-01-01T10:00:00Z", "Europe/Berlin", "2026-01-01T10:00:00.000000Z"),  # an offset wins
    ],
)
def test_relative_forms_resolve_in_the_callers_zone(value, zone, expected):
    assert parse_when(value, zone=zone, now=NOW) == expected


def test_a_month_back_from_the_31st_is_the_months_last_day():
    assert parse_when("1m", zone="UTC", now=datetime(2026, 3, 31, 12, tzinfo=UTC)) == "2026-02-28T12:00:00.000000Z"


def test_without_a_zone_a_date_is_utc_as_before():
    assert parse_when("2026-01-01") == "2026-01-01T00:00:00.000000Z"


@pytest.mark.parametrize("value", ["someday", "7x", "d7", "-3d", "yesterday-ish", "1.5d", "99999999d"])
def test_anything_else_is_a_clear_error(value):
    with pytest.raises(InvalidArgumentError) as caught:
        parse_when(value, name="updated_after", zone="UTC", now=NOW)
    assert caught.value.message.startswith("updated_after: ") and "7d" in caught.value.message


@pytest.mark.parametrize("zone", ["Mars/Olympus", "+15:00", "../../etc/passwd", "x" * 500])
def test_a_bad_zone_is_a_clear_error(zone):
    with pytest.raises(InvalidArgumentError, match="^tz: "):
        time_zone(zone)


@pytest.mark.parametrize(
    ("when", "words"),
    [
        ("2026-03-29T00:29:50Z", "just now"),
        ("2026-03-29T00:25:00Z", "5 minutes ago"),
        ("2026-03-28T21:30:00Z", "3 hours ago"),
        ("2026-03-28T00:00:00Z", "yesterday"),
        ("2026-03-25T00:30:00Z", "4 days ago"),
        ("2026-03-08T00:30:00Z", "3 weeks ago"),
        ("2026-01-20T00:30:00Z", "2 months ago"),
        ("2025-03-01T00:30:00Z", "1 year ago"),
        ("2026-03-30T00:00:00Z", "in the future"),
        ("not a time", None),
    ],
)
def test_ages_in_words(when, words):
    assert age_words(when, now=NOW) == words


@pytest.mark.slow
@given(st.text(max_size=40))
def test_parse_when_never_fails_but_with_its_error(text):
    try:
        out = parse_when(text, zone="UTC", now=NOW)
    except InvalidArgumentError:
        return
    assert len(out) == 27 and out.endswith("Z")
