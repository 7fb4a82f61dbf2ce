"""The console's clock: readable times in the configured zone, and calendar days of that zone as epoch ranges
(a date filter over a daylight-saving change covers that day's 23 or 25 hours, not 24)."""

from __future__ import annotations

import datetime as dt

from gateway.http.admin.clock import ConsoleClock, parse_day

# 2025-03-30 10:00 UTC: Berlin is at CEST (+02:00) since 01:00 UTC that day.
NOW = dt.datetime(2025, 3, 30, 10, 0, tzinfo=dt.UTC).timestamp()


def test_times_are_shown_in_the_zone_with_its_abbreviation() -> None:
    berlin = ConsoleClock("Europe/Berlin", now=lambda: NOW)
    assert berlin.format(NOW) == "2025-03-30 12:00:00 CEST"
    assert berlin.format(NOW - 86400) == "2025-03-29 11:00:00 CET"
    assert ConsoleClock("UTC", now=lambda: NOW).format(NOW) == "2025-03-30 10:00:00 UTC"
    assert berlin.format(None) == "" and berlin.ago(None) == "never"
    assert [berlin.ago(NOW - s) for s in (10, 300, 7200, 3 * 86400)] == [
        "just now", "5 min ago", "2 h ago", "3 days ago"
    ]  # fmt: skip


def test_a_day_is_local_midnight_to_midnight_even_across_a_clock_change() -> None:
    berlin = ConsoleClock("Europe/Berlin", now=lambda: NOW)
    day = parse_day("2025-03-30")
    assert day is not None
    assert berlin.day_after(day) - berlin.day_start(day) == 23 * 3600
    assert berlin.day_start() == berlin.day_start(day)  # "today" in Berlin
    assert berlin.format(berlin.day_start(day)) == "2025-03-30 00:00:00 CET"
    assert parse_day("30/03/2025") is None and parse_day("") is None
