"""The chat commands of schedules: ``/reminders`` (list, ``cancel ID``) and ``/timezone`` (show, set).

Invariants: both act only for their sender (their own schedules, their own time zone); answers name what
was wrong in the same words as the tool and the API (``gateway.schedules.errors``).
"""

from __future__ import annotations

from gateway.inbound import Command, CommandCall

from .book import ScheduleBook
from .describe import describe_schedule
from .errors import ScheduleError

REMINDERS_USAGE = "[cancel ID]"


class ScheduleCommands:
    """``/reminders`` and ``/timezone`` over a ``ScheduleBook``."""

    def __init__(self, book: ScheduleBook) -> None:
        self._book = book
        self.commands = (
            Command(
                "reminders",
                "your reminders and scheduled tasks; /reminders cancel ID cancels one",
                self.reminders,
                usage=REMINDERS_USAGE,
            ),
            Command(
                "timezone",
                "show or set your time zone (e.g. /timezone Europe/Berlin)",
                self.timezone,
                usage="[NAME]",
            ),
        )

    async def reminders(self, call: CommandCall) -> str:
        words = call.argument.split()
        if words and words[0].lower() in ("cancel", "stop", "delete"):
            return await self._cancel(call, words[1:])
        if words:
            return f"Usage: /reminders {REMINDERS_USAGE}"
        schedules = await self._book.of_person(call.actor.person_id)
        if not schedules:
            return (
                'You have no reminders or scheduled tasks. Ask me, e.g. "remind me in 10 minutes to stretch".'
            )
        lines = ["Your reminders and scheduled tasks:", *(describe_schedule(s) for s in schedules)]
        return "\n".join([*lines, "Cancel one with /reminders cancel ID."])

    async def _cancel(self, call: CommandCall, words: list[str]) -> str:
        wanted = words[0].lstrip("#") if words else ""
        if not wanted.isdigit():
            return "Say which one: /reminders cancel ID (the number shown by /reminders)."
        try:
            record = await self._book.cancel_for(call.actor.person_id, int(wanted))
        except ScheduleError as exc:
            return str(exc)
        return f"Cancelled: {describe_schedule(record)}"

    async def timezone(self, call: CommandCall) -> str:
        person = call.actor.person_id
        if not call.argument:
            current = await self._book.timezone_of(person)
            return f"Your time zone is {current}. Change it with /timezone NAME (e.g. Europe/Berlin)."
        try:
            name = await self._book.set_timezone(person, call.argument)
        except ScheduleError as exc:
            return str(exc)
        return f"Your time zone is now {name}; new reminders use it."
