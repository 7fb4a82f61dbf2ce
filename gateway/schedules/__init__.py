"""Reminders and scheduled turns: what people and admins ask for, when it fires, and where it lands.

A schedule (one-shot, interval or cron, in a time zone) targets a conversation and either sends a fixed
message or runs a prompt as a turn there; the ``Scheduler`` fires it exactly once per occurrence across
processes (``gateway.storage.schedules``), and the turn queue and the outbox do the rest, so the reply can
be answered in the same conversation.
"""

from gateway.schedules.book import ScheduleBook
from gateway.schedules.clock import BackendClock, Clock, ManualClock, SystemClock
from gateway.schedules.commands import ScheduleCommands
from gateway.schedules.describe import describe_run, describe_schedule, describe_when, local_time
from gateway.schedules.errors import (
    ScheduleError,
    ScheduleInputError,
    ScheduleLimitError,
    ScheduleNotFoundError,
    ScheduleTargetError,
)
from gateway.schedules.firing import RunBudget, ScheduleRules, Unlimited, run_message
from gateway.schedules.recurrence import Recurrence
from gateway.schedules.scheduler import FiringObserver, Scheduler
from gateway.schedules.settings import MissedPolicy, ScheduleSettings
from gateway.schedules.spec import ScheduleRequest, ScheduleSpec, SpecLimits, parse_request, zone
from gateway.schedules.tool import SCHEDULE_TOOL_NAME, schedule_tool

__all__ = [
    "SCHEDULE_TOOL_NAME",
    "BackendClock",
    "Clock",
    "FiringObserver",
    "ManualClock",
    "MissedPolicy",
    "Recurrence",
    "RunBudget",
    "ScheduleBook",
    "ScheduleCommands",
    "ScheduleError",
    "ScheduleInputError",
    "ScheduleLimitError",
    "ScheduleNotFoundError",
    "ScheduleRequest",
    "ScheduleRules",
    "ScheduleSettings",
    "ScheduleSpec",
    "ScheduleTargetError",
    "Scheduler",
    "SpecLimits",
    "SystemClock",
    "Unlimited",
    "describe_run",
    "describe_schedule",
    "describe_when",
    "local_time",
    "parse_request",
    "run_message",
    "schedule_tool",
    "zone",
]
