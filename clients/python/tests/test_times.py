"""to_datetime / to_timestamp at the edges of what a datetime holds."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from larder_client import to_datetime
from larder_client.rpc import build, to_timestamp
from larder_client.messages import CreateMealRecordRequest

UTC = dt.timezone.utc
FIRST = -62135596800  # 0001-01-01T00:00:00Z
LAST = 253402300799   # 9999-12-31T23:59:59Z


def test_to_datetime_drops_nanoseconds_and_the_timestamp_keeps_them():
    stamp = Timestamp(seconds=1767225600, nanos=123456789)
    back = to_timestamp(to_datetime(stamp))
    assert (back.seconds, back.nanos) == (1767225600, 123456000)
    request = build(CreateMealRecordRequest, None, {"meal_record": {"eaten_at": stamp}})
    assert request.meal_record.eaten_at.nanos == 123456789


def test_local_times_outside_years_1_to_9999_are_a_value_error():
    with pytest.raises(ValueError, match=r"^Timestamp\(seconds=-62135596800, nanos=0\) has no datetime in "
                                         r"America/New_York: .*keep the Timestamp"):
        to_datetime(Timestamp(seconds=FIRST), ZoneInfo("America/New_York"))
    with pytest.raises(ValueError, match=r"has no datetime in Pacific/Kiritimati"):
        to_datetime(Timestamp(seconds=LAST), ZoneInfo("Pacific/Kiritimati"))
    with pytest.raises(ValueError, match=r"Seconds -62135596801 must be in range"):
        to_datetime(Timestamp(seconds=FIRST - 1))
    assert to_datetime(Timestamp(seconds=FIRST)) == dt.datetime(1, 1, 1, tzinfo=UTC)
    assert to_datetime(Timestamp(seconds=LAST, nanos=999999999)) == dt.datetime.max.replace(tzinfo=UTC)


def test_datetimes_before_year_1_in_utc_are_a_value_error_naming_the_field():
    early = dt.datetime(1, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    with pytest.raises(ValueError, match=r"^0001-01-01T00:30:00\+01:00 is outside the years 1-9999 in UTC"):
        to_timestamp(early)
    with pytest.raises(ValueError, match=r"^larder\.v1\.MealRecord\.eaten_at: 0001-01-01T00:30:00\+01:00 is outside"):
        build(CreateMealRecordRequest, None, {"meal_record": {"name": "x", "eaten_at": early}})
    late = dt.datetime(9999, 12, 31, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-1)))
    with pytest.raises(ValueError, match=r"outside the years 1-9999 in UTC"):
        to_timestamp(late)
    assert to_timestamp(dt.datetime(1, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(minutes=-1)))).seconds \
        == FIRST + 31 * 60
