"""The usage calendar: "today", "this month" and the times an operator types (``2026-03-01``, ``7d``), turned
into epoch ranges in the zone usage is reported in (``usage.timezone``, else ``admin.timezone``).

Invariants: a day is the zone's local midnight to the next one (23 or 25 hours across a daylight-saving
change); a month runs from local midnight of its 1st to that of the next month's 1st; a time that cannot be
read is a ``UsagePeriodError`` naming the accepted forms, never a guess.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:  # the config imports the inbound package, which shows usage in /status
    from gateway.config import Settings

__all__ = ["UsageCalendar", "UsagePeriodError", "usage_zone"]

_RELATIVE = re.compile(r"^(\d+)([hdw])$")
_UNIT_S = {"h": 3600, "d": 86400, "w": 7 * 86400}
FORMS = "today, yesterday, month, last-month, YYYY-MM-DD, YYYY-MM-DDTHH:MM, or an age like 12h, 7d, 2w"


class UsagePeriodError(ValueError):
    """A ``--since``/``--until`` (or query parameter) that names no time."""


def usage_zone(settings: Settings) -> str:
    """The zone usage days and months are counted in: ``usage.timezone``, else the console's."""
    return settings.usage.timezone or settings.admin.timezone


class UsageCalendar:
    """Day and month boundaries in one zone; ``now`` is injectable for tests."""

    def __init__(self, zone: str = "UTC", *, now: Callable[[], float] = time.time) -> None:
        self.zone_name = zone
        self._zone = ZoneInfo(zone)
        self._now = now

    def now(self) -> float:
        return self._now()

    def _midnight(self, day: dt.date) -> float:
        return dt.datetime.combine(day, dt.time(), self._zone).timestamp()

    def _today(self) -> dt.date:
        return dt.datetime.fromtimestamp(self._now(), self._zone).date()

    def today(self) -> tuple[float, float]:
        """Today in the zone, as [start, end)."""
        day = self._today()
        return self._midnight(day), self._midnight(day + dt.timedelta(days=1))

    def this_month(self) -> tuple[float, float]:
        """The current calendar month in the zone, as [start, end)."""
        first = self._today().replace(day=1)
        return self._midnight(first), self._midnight(_next_month(first))

    def parse(self, text: str) -> float:
        """Epoch seconds of ``text`` (see ``FORMS``); ``UsagePeriodError`` when it names no time."""
        word = text.strip().lower()
        today = self._today()
        named = {
            "today": today,
            "yesterday": today - dt.timedelta(days=1),
            "month": today.replace(day=1),
            "last-month": _previous_month(today.replace(day=1)),
        }
        if word in named:
            return self._midnight(named[word])
        relative = _RELATIVE.match(word)
        if relative:
            return self._now() - int(relative.group(1)) * _UNIT_S[relative.group(2)]
        try:
            if len(word) == 10:
                return self._midnight(dt.date.fromisoformat(word))
            moment = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            raise UsagePeriodError(f"cannot read the time {text!r}; use {FORMS}") from None
        local = moment if moment.tzinfo is not None else moment.replace(tzinfo=self._zone)
        return local.timestamp()


def _next_month(first: dt.date) -> dt.date:
    return (first + dt.timedelta(days=32)).replace(day=1)


def _previous_month(first: dt.date) -> dt.date:
    return (first - dt.timedelta(days=1)).replace(day=1)
