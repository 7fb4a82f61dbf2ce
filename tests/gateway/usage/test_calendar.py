"""Usage periods in a time zone: days of 23 and 25 hours across daylight saving, months, and the times an
operator types — each read in the usage zone, anything else refused by name."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from gateway.storage.usage_reads import calendar_days
from gateway.usage import UsageCalendar, UsagePeriodError

BERLIN = ZoneInfo("Europe/Berlin")


def _at(text: str) -> float:
    return dt.datetime.fromisoformat(text).replace(tzinfo=BERLIN).timestamp()


def test_calendar_days_follow_the_zone_across_daylight_saving() -> None:
    days = calendar_days(_at("2026-03-28T23:30"), _at("2026-03-30T00:10"), "Europe/Berlin")
    assert [name for name, _, _ in days] == ["2026-03-28", "2026-03-29", "2026-03-30"]
    assert [round((end - start) / 3600) for _, start, end in days] == [24, 23, 24]
    autumn = calendar_days(_at("2026-10-25T12:00"), _at("2026-10-25T13:00"), "Europe/Berlin")
    assert [round((end - start) / 3600) for _, start, end in autumn] == [25]


def test_today_and_this_month_are_the_zones() -> None:
    now = _at("2026-03-31T23:30")
    calendar = UsageCalendar("Europe/Berlin", now=lambda: now)
    assert calendar.today() == (_at("2026-03-31T00:00"), _at("2026-04-01T00:00"))
    assert calendar.this_month() == (_at("2026-03-01T00:00"), _at("2026-04-01T00:00"))
    tokyo = UsageCalendar("Asia/Tokyo", now=lambda: now)  # already April 1st there
    assert dt.datetime.fromtimestamp(tokyo.this_month()[0], ZoneInfo("Asia/Tokyo")).date() == dt.date(
        2026, 4, 1
    )


def test_the_times_an_operator_types() -> None:
    now = _at("2026-03-15T10:00")
    calendar = UsageCalendar("Europe/Berlin", now=lambda: now)
    assert calendar.parse("today") == _at("2026-03-15T00:00")
    assert calendar.parse("Yesterday") == _at("2026-03-14T00:00")
    assert calendar.parse("month") == _at("2026-03-01T00:00")
    assert calendar.parse("last-month") == _at("2026-02-01T00:00")
    assert calendar.parse("2026-01-02") == _at("2026-01-02T00:00")
    assert calendar.parse("2026-01-02T09:30") == _at("2026-01-02T09:30")
    assert calendar.parse("2026-01-02T09:30+00:00") == _at("2026-01-02T10:30")
    assert calendar.parse("12h") == now - 12 * 3600
    assert calendar.parse("7d") == now - 7 * 86400
    assert calendar.parse("2w") == now - 14 * 86400
    for bad in ("last tuesday", "7x", "2026-13-01", ""):
        with pytest.raises(UsagePeriodError, match="cannot read the time"):
            calendar.parse(bad)
