"""Budget periods: where the current day and month begin and end in the budgets' time zone.

Invariant: boundaries are local midnights (the 1st of the month for months) in ``timezone``, computed from
the wall clock there, so a DST change makes a 23- or 25-hour day, never a shifted boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from gateway.storage.budgets import Periods


@dataclass(frozen=True, slots=True)
class PeriodClock:
    """Day and month boundaries in one time zone."""

    timezone: str = "UTC"

    def periods(self, now: float) -> Periods:
        return Periods(day_start=self.day_start(now), month_start=self.month_start(now))

    def day_start(self, now: float) -> float:
        local = datetime.fromtimestamp(now, self._zone)
        return datetime(local.year, local.month, local.day, tzinfo=self._zone).timestamp()

    def day_end(self, now: float) -> float:
        local = datetime.fromtimestamp(now, self._zone)
        following = local.date() + timedelta(days=1)
        return datetime(following.year, following.month, following.day, tzinfo=self._zone).timestamp()

    def month_start(self, now: float) -> float:
        local = datetime.fromtimestamp(now, self._zone)
        return datetime(local.year, local.month, 1, tzinfo=self._zone).timestamp()

    def month_end(self, now: float) -> float:
        local = datetime.fromtimestamp(now, self._zone)
        year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
        return datetime(year, month, 1, tzinfo=self._zone).timestamp()

    def local(self, at: float) -> str:
        """``at`` as people read it in this zone, e.g. ``Sun 6 Dec 2026, 00:00 Europe/Berlin``."""
        local = datetime.fromtimestamp(at, self._zone)
        return f"{local:%a} {local.day} {local:%b %Y, %H:%M} {self.timezone}"

    @property
    def _zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)
