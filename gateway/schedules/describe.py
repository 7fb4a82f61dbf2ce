"""Schedules and runs in words, as /reminders, the tool, the CLI and the admin API show them.

Invariant: an instant is always shown in the schedule's own time zone, with the zone's name, so a person
reads the time they asked for.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from gateway.storage.schedules import ScheduleRecord, ScheduleRun

from .recurrence import DAY_S
from .spec import describe_seconds


def local_time(instant: float, timezone: str, *, with_date: bool = True) -> str:
    """``instant`` in ``timezone``: "2030-03-30 09:30 CEST" (or "09:30 CEST")."""
    moment = datetime.fromtimestamp(instant, ZoneInfo(timezone))
    return moment.strftime("%Y-%m-%d %H:%M %Z" if with_date else "%H:%M %Z")


def describe_when(schedule: ScheduleRecord) -> str:
    """ "once at …", "every 2 h", "every day at 09:00", "cron 0 9 * * 1 (at 09:00 on Monday)"."""
    if schedule.kind == "once":
        return f"once at {local_time(float(schedule.spec), schedule.timezone)}"
    if schedule.kind == "interval":
        seconds = float(schedule.spec)
        if seconds == DAY_S and schedule.next_run_at is not None:
            return f"every day at {local_time(schedule.next_run_at, schedule.timezone, with_date=False)}"
        return f"every {describe_seconds(seconds)}"
    return f"cron {schedule.spec} ({_explain(schedule.spec)}, {schedule.timezone})"


def _explain(expression: str) -> str:
    try:
        text = CronSim(expression, datetime.now(ZoneInfo("UTC"))).explain()
    except (CronSimError, ValueError, KeyError):
        return "cron"
    return text[0].lower() + text[1:] if text else "cron"


def describe_schedule(schedule: ScheduleRecord) -> str:
    """One line: id, what, when, and its next run or state."""
    what = "message" if schedule.action == "message" else "task"
    line = f"#{schedule.id} {what} {_quoted(schedule.text)} — {describe_when(schedule)}"
    if schedule.state == "active" and schedule.next_run_at is not None and schedule.kind != "once":
        line += f"; next {local_time(schedule.next_run_at, schedule.timezone)}"
    elif schedule.state == "paused":
        line += f"; paused: {schedule.reason or 'no reason recorded'}"
    elif schedule.state != "active":
        line += f"; {schedule.state}" + (f" ({schedule.reason})" if schedule.reason else "")
    return line


def describe_run(run: ScheduleRun, timezone: str) -> str:
    """One line: when it was due, whether it ran, and whether its reply arrived."""
    late = (
        " (caught up late" + (f", {run.missed} more missed" if run.missed else "") + ")"
        if run.catch_up
        else ""
    )
    return (
        f"run #{run.id} due {local_time(run.occurrence_at, timezone)}{late}: task {run.task}, "
        f"delivery {run.delivery.replace('_', ' ')}"
    )


def _quoted(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
