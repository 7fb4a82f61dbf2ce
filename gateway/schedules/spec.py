"""Reading a schedule request: the one place that turns "at 09:30", "in 10 minutes", "every 2 hours",
"0 9 * * 1" and a time zone into a validated ``ScheduleSpec`` — or a ``ScheduleInputError`` naming what was
wrong. The tool, ``/timezone``, the admin API and the CLI all come through here, so they answer alike.

Invariants: a spec is only made from a known IANA time zone; a one-shot is never in the past (a bare time of
day means its next occurrence, today or tomorrow; a dated time that has passed is refused); a repeating
schedule never runs more often than ``min_interval_s``; exactly one "when" and exactly one of message or
prompt are given.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from gateway.storage.schedules import ScheduleAction, ScheduleKind

from .errors import ScheduleInputError, ScheduleLimitError
from .recurrence import Recurrence

_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)?\s*(?:,|and)?\s*")
_CLOCK = re.compile(
    r"(?:(?P<day>today|tomorrow)\s+(?:at\s+)?)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?::(?P<s>\d{2}))?"
    r"\s*(?P<half>am|pm)?"
)
_HAS_TIME = re.compile(r"\d[T ]\d{1,2}:\d{2}")
CRON_FIELDS = "minute hour day-of-month month day-of-week"
_CRON_GAPS_CHECKED = 48
WHEN_FIELDS = ("at", "in", "every", "cron")


@dataclass(frozen=True)
class ScheduleRequest:
    """A schedule as asked for, unvalidated: exactly one of ``at``/``after`` ("in")/``every``/``cron``, and
    exactly one of ``message`` (sent as it is) or ``prompt`` (run as a turn); ``timezone`` overrides the
    person's; ``starting`` is the first run of an ``every`` schedule (default: one interval from now)."""

    at: str | None = None
    after: str | None = None
    every: str | None = None
    cron: str | None = None
    message: str | None = None
    prompt: str | None = None
    timezone: str | None = None
    starting: str | None = None


@dataclass(frozen=True)
class ScheduleSpec:
    """A validated schedule: how its recurrence is stored (``Recurrence``) and its first run."""

    kind: ScheduleKind
    spec: str
    timezone: str
    action: ScheduleAction
    text: str
    first_run_at: float


@dataclass(frozen=True)
class SpecLimits:
    """What this deployment allows (from ``ScheduleSettings``)."""

    min_interval_s: float = 60.0
    max_text_chars: int = 4000


def shown(text: str, limit: int = 60) -> str:
    """A value as an error message quotes it: stripped, cut to ``limit`` characters, in quotes."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; ``ScheduleInputError`` naming it when this machine does not know it."""
    cleaned = name.strip()
    try:
        if not cleaned or cleaned.startswith(("/", ".")) or ".." in cleaned:
            raise ValueError(cleaned)
        return ZoneInfo(cleaned)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleInputError(
            "timezone",
            f"Unknown time zone {shown(cleaned)}: use an IANA name such as Europe/Berlin, America/New_York "
            "or UTC.",
        ) from None


def parse_request(
    request: ScheduleRequest, *, now: float, timezone: str, limits: SpecLimits = SpecLimits()
) -> ScheduleSpec:
    """``request`` validated at ``now``; ``timezone`` is used when the request names none."""
    tz_name = (request.timezone or "").strip() or timezone
    tz = zone(tz_name)
    action, text = _action(request, limits)
    when = _when(request)
    if request.starting is not None and when != "every":
        raise ScheduleInputError(
            "starting", "'starting' only goes with 'every' (the first of repeated runs)."
        )
    if when == "at":
        instant = parse_time(str(request.at), tz, now)
        return ScheduleSpec("once", repr(instant), tz.key, action, text, instant)
    if when == "in":
        seconds = parse_duration(str(request.after), "in")
        return ScheduleSpec("once", repr(now + seconds), tz.key, action, text, now + seconds)
    if when == "every":
        seconds = parse_duration(str(request.every), "every")
        _check_interval(seconds, f"every {describe_seconds(seconds)}", limits)
        first = now + seconds if request.starting is None else parse_time(request.starting, tz, now)
        return ScheduleSpec("interval", repr(seconds), tz.key, action, text, first)
    expression = parse_cron(str(request.cron), tz, now, limits)
    next_run = Recurrence("cron", expression, tz).after(now)
    assert next_run is not None  # parse_cron refused an expression that never matches
    return ScheduleSpec("cron", expression, tz.key, action, text, next_run)


def _when(request: ScheduleRequest) -> str:
    given = [
        name
        for name, value in zip(
            WHEN_FIELDS, (request.at, request.after, request.every, request.cron), strict=True
        )
        if value is not None and str(value).strip()
    ]
    if not given:
        raise ScheduleInputError(
            "when", "Say when: give one of 'at' (a time), 'in' (a delay), 'every' or 'cron'."
        )
    if len(given) > 1:
        raise ScheduleInputError(
            "when", f"Give only one of at, in, every or cron (got {' and '.join(given)})."
        )
    return given[0]


def _action(request: ScheduleRequest, limits: SpecLimits) -> tuple[ScheduleAction, str]:
    message, prompt = (request.message or "").strip(), (request.prompt or "").strip()
    if message and prompt:
        raise ScheduleInputError(
            "message", "Give a message (sent as it is) or a prompt (run as a turn), not both."
        )
    if not message and not prompt:
        raise ScheduleInputError(
            "message", "Say what to do: a message to send, or a prompt to run as a turn (it is empty)."
        )
    text = message or prompt
    if len(text) > limits.max_text_chars:
        raise ScheduleInputError(
            "message" if message else "prompt",
            f"The {'message' if message else 'prompt'} is {len(text):,} characters; at most "
            f"{limits.max_text_chars:,} are allowed.",
        )
    return ("message", text) if message else ("prompt", text)


def parse_duration(text: str, field: str = "in") -> float:
    """ "90s", "10 minutes", "1h30m", "2 days" (a bare number is seconds) as seconds, more than zero."""
    cleaned = text.strip().lower()
    position, total = 0, 0.0
    for part in _DURATION_PART.finditer(cleaned):
        if part.start() != position or not part.group(0):
            break
        unit = part.group(2) or "s"
        if unit not in _UNITS:
            break
        total += float(part.group(1)) * _UNITS[unit]
        position = part.end()
    if not cleaned or position != len(cleaned):
        raise ScheduleInputError(
            field,
            f"Can't read the duration {shown(text)}: use a number and a unit, e.g. 90s, 10 minutes, 2h30m.",
        )
    if total <= 0:
        raise ScheduleInputError(field, f"The duration {shown(text)} must be more than zero.")
    return total


def parse_time(text: str, tz: ZoneInfo, now: float) -> float:
    """A moment in ``tz``: "09:30", "9pm", "tomorrow 09:30" (the next such moment), or a date and time
    (refused when it has passed)."""
    cleaned = " ".join(text.strip().lower().split())
    clock = _CLOCK.fullmatch(cleaned)
    if clock is not None and (clock.group("m") is not None or clock.group("half") is not None):
        return _clock_time(clock, text, tz, now)
    moment = _date_time(text, tz)
    if moment.timestamp() <= now:
        shown = moment.strftime("%Y-%m-%d %H:%M")
        raise ScheduleInputError(
            "at", f"{shown} ({tz.key}) is in the past; give a time that is still to come."
        )
    return moment.timestamp()


def _clock_time(clock: re.Match[str], text: str, tz: ZoneInfo, now: float) -> float:
    hour, minute, second = int(clock.group("h")), int(clock.group("m") or 0), int(clock.group("s") or 0)
    half = clock.group("half")
    if half is not None:
        if not 1 <= hour <= 12:
            raise ScheduleInputError(
                "at", f"Can't read the time {shown(text)}: {hour} is not an hour on a 12-hour clock."
            )
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ScheduleInputError("at", f"Can't read the time {shown(text)}: use 00:00 to 23:59.")
    today = datetime.fromtimestamp(now, tz).date()
    day = today + timedelta(days=1) if clock.group("day") == "tomorrow" else today
    moment = _local(day, hour, minute, second, tz)
    if moment.timestamp() <= now:
        if clock.group("day") == "today":
            raise ScheduleInputError("at", f"{moment.strftime('%H:%M')} today ({tz.key}) has already passed.")
        if clock.group("day") is None:  # a bare time of day is its next occurrence
            moment = _local(day + timedelta(days=1), hour, minute, second, tz)
    return moment.timestamp()


def _local(day: date, hour: int, minute: int, second: int, tz: ZoneInfo) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=tz)


def _date_time(text: str, tz: ZoneInfo) -> datetime:
    cleaned = text.strip()
    try:
        if not _HAS_TIME.search(cleaned):
            raise ValueError(cleaned)
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ScheduleInputError(
            "at",
            f"Can't read the time {shown(cleaned)}: use HH:MM (e.g. 09:30), 'tomorrow 09:30', or a date "
            "and time such as 2030-03-30 09:30.",
        ) from None
    return moment.replace(tzinfo=tz) if moment.tzinfo is None else moment


def parse_cron(text: str, tz: ZoneInfo, now: float, limits: SpecLimits = SpecLimits()) -> str:
    """A five-field cron expression that matches at least once and not more often than allowed."""
    expression = " ".join(text.split())
    fields = expression.split(" ") if expression else []
    if len(fields) != 5:
        raise ScheduleInputError(
            "cron",
            f"The cron expression {shown(expression)} must have 5 fields ({CRON_FIELDS}); "
            f"it has {len(fields)}.",
        )
    try:
        CronSim(expression, datetime.fromtimestamp(now, tz))
    except CronSimError as exc:
        raise ScheduleInputError(
            "cron", f"The cron expression {shown(expression)} is not valid: {str(exc).lower()}."
        ) from None
    runs = Recurrence("cron", expression, tz).occurrences(now, float("inf"), limit=_CRON_GAPS_CHECKED + 1)
    if not runs:
        raise ScheduleInputError("cron", f"The cron expression {shown(expression)} never matches a date.")
    gaps = [later - earlier for earlier, later in itertools.pairwise(runs)]
    if gaps:
        _check_interval(min(gaps), f"the cron expression {shown(expression)}", limits)
    return expression


def _check_interval(seconds: float, what: str, limits: SpecLimits) -> None:
    if seconds < limits.min_interval_s:
        raise ScheduleLimitError(
            f"{what[0].upper()}{what[1:]} runs more often than allowed: at least "
            f"{describe_seconds(limits.min_interval_s)} between runs."
        )


def describe_seconds(seconds: float) -> str:
    """ "90 s", "10 min", "2 h 30 min", "1 day" — a duration as people read it."""
    whole = round(seconds)
    parts = []
    for size, unit in ((86400, "day"), (3600, "h"), (60, "min"), (1, "s")):
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''}")
    return " ".join(parts) or f"{seconds:g} s"
