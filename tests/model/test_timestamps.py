"""Filter bounds: any valid ISO time is a bound, written so that bounds sort as times do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.model.timestamps import parse_when


def test_a_time_past_the_calendars_ends_in_utc_is_its_first_or_last_moment():
    # 0001-01-01T00:00+05:00 is a valid time whose UTC is in year 0: it raised OverflowError (a 500).
    assert parse_when("0001-01-01T00:00:00+05:00") == "0001-01-01T00:00:00.000000Z"
    assert parse_when("9999-12-31T23:59:59-05:00") == "9999-12-31T23:59:59.999999Z"


@pytest.mark.slow
@given(st.datetimes(), st.datetimes())
def test_bounds_sort_as_the_times_do(a, b):
    # strftime wrote year 999 as "999", which sorted after "2026".
    first, second = parse_when(a.isoformat()), parse_when(b.isoformat())
    assert (first < second) == (a < b) and len(first) == len(second) == 27
