"""When schedules fall, in real time zones across daylight-saving changes, and how requests are read.

Cron follows Debian cron (cronsim): a time skipped by spring-forward runs at the first minute after the gap,
a time repeated by fall-back runs once; a daily interval keeps its wall-clock time; shorter intervals are
exact seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.schedules import (
    Recurrence,
    ScheduleInputError,
    ScheduleLimitError,
    ScheduleRequest,
    SpecLimits,
    parse_request,
)


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def following(recurrence: Recurrence, start: str, count: int) -> list[str]:
    found, at = [], utc(start)
    for _ in range(count):
        nxt = recurrence.after(at)
        assert nxt is not None
        found.append(datetime.fromtimestamp(nxt, UTC).strftime("%m-%d %H:%M"))
        at = nxt
    return found


def test_a_daily_cron_keeps_local_time_when_new_york_springs_forward() -> None:
    nine = Recurrence.of("cron", "0 9 * * *", "America/New_York")
    # 09:00 EST is 14:00 UTC; from Sunday 10 March 2030 09:00 EDT is 13:00 UTC.
    assert following(nine, "2030-03-08T12:00", 4) == [
        "03-08 14:00",
        "03-09 14:00",
        "03-10 13:00",
        "03-11 13:00",
    ]


def test_a_cron_time_inside_the_berlin_gaps_and_overlaps_runs_once() -> None:
    half_past_two = Recurrence.of("cron", "30 2 * * *", "Europe/Berlin")
    # 31 March 2030 has no 02:30 (02:00 CET -> 03:00 CEST): it runs at 03:00 CEST (01:00 UTC).
    assert following(half_past_two, "2030-03-29T12:00", 3) == ["03-30 01:30", "03-31 01:00", "04-01 00:30"]
    # 27 October 2030 has 02:30 twice (CEST, then CET): it runs at the first only.
    assert following(half_past_two, "2030-10-25T12:00", 3) == ["10-26 00:30", "10-27 00:30", "10-28 01:30"]


def test_a_daily_interval_keeps_its_wall_clock_time_and_an_hourly_one_its_seconds() -> None:
    daily = Recurrence.of("interval", "86400.0", "Europe/Berlin")
    assert following(daily, "2030-03-30T08:00", 2) == ["03-31 07:00", "04-01 07:00"]  # 09:00 CET, then CEST
    hourly = Recurrence.of("interval", "3600.0", "Europe/Berlin")
    assert following(hourly, "2030-03-31T00:00", 3) == ["03-31 01:00", "03-31 02:00", "03-31 03:00"]


def test_a_one_shot_has_one_occurrence() -> None:
    once = Recurrence.of("once", repr(utc("2030-03-30T09:00")), "UTC")
    assert once.after(utc("2030-03-30T08:00")) == utc("2030-03-30T09:00")
    assert once.after(utc("2030-03-30T09:00")) is None


NOW = utc("2030-03-17T17:46:40")  # a Sunday


@pytest.mark.parametrize(
    ("request_", "first_run"),
    [
        (ScheduleRequest(at="18:00", message="x"), "2030-03-17T18:00"),
        (ScheduleRequest(at="17:00", message="x"), "2030-03-18T17:00"),  # passed today: tomorrow
        (ScheduleRequest(at="9pm", message="x", timezone="Europe/Berlin"), "2030-03-17T20:00"),
        (ScheduleRequest(at="tomorrow 09:30", message="x"), "2030-03-18T09:30"),
        (ScheduleRequest(at="2030-04-01 09:30", message="x", timezone="Europe/Berlin"), "2030-04-01T07:30"),
        (ScheduleRequest(after="1h30m", message="x"), "2030-03-17T19:16:40"),
        (ScheduleRequest(every="2 hours", prompt="x"), "2030-03-17T19:46:40"),
        (ScheduleRequest(cron="0 9 * * 1", prompt="x", timezone="America/New_York"), "2030-03-18T13:00"),
    ],
)
def test_requests_are_read_in_the_time_zone_they_name(request_: ScheduleRequest, first_run: str) -> None:
    assert parse_request(request_, now=NOW, timezone="UTC").first_run_at == utc(first_run)


@pytest.mark.parametrize(
    ("request_", "says"),
    [
        (ScheduleRequest(at="2030-03-01 09:00", message="x"), "2030-03-01 09:00 (UTC) is in the past"),
        (ScheduleRequest(at="today 09:00", message="x"), "09:00 today (UTC) has already passed"),
        (ScheduleRequest(at="quarter past nine", message="x"), "Can't read the time 'quarter past nine'"),
        (ScheduleRequest(at="25:00", message="x"), "Can't read the time '25:00': use 00:00 to 23:59"),
        (ScheduleRequest(after="soon", message="x"), "Can't read the duration 'soon'"),
        (ScheduleRequest(after="0 minutes", message="x"), "must be more than zero"),
        (ScheduleRequest(cron="* * * *", message="x"), "must have 5 fields (minute hour day-of-month"),
        (ScheduleRequest(cron="0 25 * * *", message="x"), "'0 25 * * *' is not valid: bad hour"),
        (ScheduleRequest(cron="0 9 30 2 *", message="x"), "'0 9 30 2 *' is not valid: bad day-of-month"),
        (
            ScheduleRequest(at="09:00", message="x", timezone="Mars/Olympus"),
            "Unknown time zone 'Mars/Olympus'",
        ),
        (ScheduleRequest(message="x"), "Say when"),
        (ScheduleRequest(at="09:00", cron="0 9 * * *", message="x"), "only one of at, in, every or cron"),
        (ScheduleRequest(at="09:00"), "Say what to do"),
        (ScheduleRequest(at="09:00", message="x", prompt="y"), "not both"),
        (ScheduleRequest(at="09:00", message="x" * 5000), "at most 4,000 are allowed"),
        (
            ScheduleRequest(after="5 minutes", starting="09:00", message="x"),
            "'starting' only goes with 'every'",
        ),
    ],
)
def test_bad_requests_are_refused_naming_what_was_wrong(request_: ScheduleRequest, says: str) -> None:
    with pytest.raises(ScheduleInputError, match=None) as refused:
        parse_request(request_, now=NOW, timezone="UTC", limits=SpecLimits(max_text_chars=4000))
    assert says in str(refused.value)


@pytest.mark.parametrize(
    "request_", [ScheduleRequest(every="30s", message="x"), ScheduleRequest(cron="*/5 * * * *", message="x")]
)
def test_runs_closer_than_the_minimum_interval_are_refused(request_: ScheduleRequest) -> None:
    with pytest.raises(ScheduleLimitError) as refused:
        parse_request(request_, now=NOW, timezone="UTC", limits=SpecLimits(min_interval_s=600))
    assert "runs more often than allowed: at least 10 min between runs" in str(refused.value)
