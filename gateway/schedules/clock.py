"""The clocks a scheduler reads "now" from: the backend's (production), the machine's, or a manual one.

Invariant: a scheduler only ever asks its clock, so a test drives every instant with ``ManualClock`` and no
module global is patched; ``BackendClock`` follows the storage's clock (the server's on PostgreSQL), so
hosts whose clocks differ still agree on what is due.
"""

from __future__ import annotations

import time
from typing import Protocol

from gateway.storage.schedules import ScheduleRepository


class Clock(Protocol):
    """Epoch seconds now."""

    async def now(self) -> float: ...


class SystemClock:
    """This machine's clock."""

    async def now(self) -> float:
        return time.time()


class BackendClock:
    """The storage backend's clock (``ScheduleRepository.now``)."""

    def __init__(self, schedules: ScheduleRepository) -> None:
        self._schedules = schedules

    async def now(self) -> float:
        return await self._schedules.now()


class ManualClock:
    """A clock that moves only when told (tests, benchmarks); a fake that is product code."""

    def __init__(self, at: float) -> None:
        self.at = at

    async def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> float:
        """Move forward ``seconds``; returns the new instant."""
        self.at += seconds
        return self.at

    def set(self, instant: float) -> None:
        self.at = instant
