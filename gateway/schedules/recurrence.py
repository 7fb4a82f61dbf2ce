"""When a schedule's occurrences fall: one instant, a fixed interval, or a cron expression in a time zone.

Invariants: ``after(t)`` is the first occurrence strictly after ``t`` (None: there is none); cron follows
Debian cron across daylight-saving changes (``cronsim``): a time skipped by a spring-forward runs at the
first valid minute after it, and a time repeated by a fall-back runs once; an interval of whole days keeps
the wall-clock time in its zone (09:00 stays 09:00 across a change), any other interval is exact seconds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim

from gateway.storage.schedules import ScheduleKind

DAY_S = 86_400.0


@dataclass(frozen=True)
class Recurrence:
    """A schedule's rule: ``kind`` with its stored ``spec`` (instant, seconds or expression) in ``zone``."""

    kind: ScheduleKind
    spec: str
    zone: ZoneInfo

    @classmethod
    def of(cls, kind: ScheduleKind, spec: str, timezone: str) -> Recurrence:
        return cls(kind, spec, ZoneInfo(timezone))

    def after(self, instant: float) -> float | None:
        """The first occurrence strictly after ``instant`` (a one-shot has none after its own); an interval
        counts from ``instant``, so call it with an occurrence."""
        if self.kind == "once":
            at = float(self.spec)
            return at if at > instant else None
        if self.kind == "interval":
            return self._next_interval(instant)
        return next(self._cron(instant), None)

    def occurrences(self, after: float, until: float, *, limit: int) -> list[float]:
        """Occurrences in ``(after, until]``, at most ``limit`` of them (the earliest)."""
        found: list[float] = []
        current: float | None = after
        if self.kind == "cron":
            return list(itertools.islice(itertools.takewhile(lambda t: t <= until, self._cron(after)), limit))
        while len(found) < limit:
            current = self.after(current) if current is not None else None
            if current is None or current > until:
                break
            found.append(current)
        return found

    def _next_interval(self, instant: float) -> float:
        seconds = float(self.spec)
        if seconds % DAY_S:
            return instant + seconds
        local = datetime.fromtimestamp(instant, self.zone)
        return (local + timedelta(days=seconds / DAY_S)).timestamp()

    def _cron(self, instant: float) -> Iterator[float]:
        start = datetime.fromtimestamp(instant, self.zone)
        return (moment.timestamp() for moment in CronSim(self.spec, start))
