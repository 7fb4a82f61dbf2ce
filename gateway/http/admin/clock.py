"""The console's clock: epoch seconds shown as readable times in the configured zone (``admin.timezone``),
and the zone's calendar days turned back into epoch ranges for filters and "today".

Invariants: every time a console page shows goes through ``ConsoleClock`` (so one setting changes them all);
a day is the zone's local midnight to the next one (23 or 25 hours across a daylight-saving change).
"""

from __future__ import annotations

import datetime as dt
import time
import zoneinfo
from collections.abc import Callable


class ConsoleClock:
    """Readable times in one zone; ``now`` is injectable for tests."""

    def __init__(self, zone: str = "UTC", *, now: Callable[[], float] = time.time) -> None:
        self.zone_name = zone
        self._zone = zoneinfo.ZoneInfo(zone)
        self._now = now

    def now(self) -> float:
        return self._now()

    def local(self, at: float) -> dt.datetime:
        return dt.datetime.fromtimestamp(at, self._zone)

    def format(self, at: float | None) -> str:
        """``2025-03-01 14:02:11 CET``; an empty string for None."""
        if at is None:
            return ""
        return self.local(at).strftime("%Y-%m-%d %H:%M:%S %Z")

    def iso(self, at: float | None) -> str:
        """The machine-readable form (for ``<time datetime=…>``)."""
        return "" if at is None else self.local(at).isoformat(timespec="seconds")

    def ago(self, at: float | None) -> str:
        """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago`` (``in …`` for the future)."""
        if at is None:
            return "never"
        seconds = self._now() - at
        future, seconds = seconds < 0, abs(seconds)
        if seconds < 45:
            return "just now" if not future else "in a moment"
        for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
            if seconds >= size:
                count = round(seconds / size)
                label = f"{count} {unit}{'s' if unit == 'day' and count != 1 else ''}"
                return f"in {label}" if future else f"{label} ago"
        return "just now"

    def day_start(self, day: dt.date | None = None) -> float:
        """Epoch seconds of local midnight starting ``day`` (default: today in the zone)."""
        date = day or self.local(self._now()).date()
        return dt.datetime.combine(date, dt.time(), self._zone).timestamp()

    def day_after(self, day: dt.date) -> float:
        """Epoch seconds of local midnight ending ``day``."""
        return self.day_start(day + dt.timedelta(days=1))

    def hour_floor(self, at: float) -> float:
        """The start of the local hour holding ``at``."""
        local = self.local(at).replace(minute=0, second=0, microsecond=0)
        return local.timestamp()


def parse_day(text: str | None) -> dt.date | None:
    """A ``YYYY-MM-DD`` form field as a date; None when empty or not a date."""
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        return None
