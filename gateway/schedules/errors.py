"""Why a schedule request cannot be carried out: one sentence for the person, the admin or the operator.

Invariant: every message names what was wrong (the field, the value, the limit), so the tool, the commands,
the admin API and the CLI answer alike.
"""

from __future__ import annotations


class ScheduleError(ValueError):
    """A schedule request that cannot be carried out; ``str(error)`` says why."""


class ScheduleInputError(ScheduleError):
    """Unreadable or impossible input: a time, a duration, a cron expression, a time zone, the text."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ScheduleLimitError(ScheduleError):
    """A limit of this deployment: too many schedules, or runs too close together."""


class ScheduleTargetError(ScheduleError):
    """Scheduled runs cannot go where asked (no such conversation, or a chat nothing can be delivered to)."""


class ScheduleNotFoundError(ScheduleError):
    """No such open schedule (of this person)."""
