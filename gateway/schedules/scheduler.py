"""The scheduler of one process: it fires due schedules into their conversations, once, across processes.

Invariants: firing goes through ``ScheduleRepository.fire_due`` (one transaction per batch, an occurrence
fired once whatever other processes or hosts fire at the same time), judged by ``ScheduleRules``; "now" is
only ever its ``Clock`` (tests drive ``tick`` with a ``ManualClock``); local workers are woken when a run's
job was queued. Run as a loop (``async with``), it sleeps until the soonest due schedule, at most
``poll_s`` (schedules other processes add are seen within that), or until ``signals.schedules`` says one
was added here; a failing pass is logged and retried after ``poll_s``, never ending the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from types import TracebackType
from typing import Self

from gateway.queue import Signals
from gateway.queue.signals import wait_signal
from gateway.storage.schedules import FiredRun, ScheduleRepository

from .clock import Clock
from .firing import ScheduleRules

_LOG = logging.getLogger("mnemogate.schedules")

_MIN_WAIT_S = 0.002

FiringObserver = Callable[[FiredRun], None]
"""Told of every run fired (and every schedule skipped, paused or finished) by this process."""


class Scheduler:
    """Fires what is due: ``tick()`` once, or a loop while entered."""

    def __init__(
        self,
        schedules: ScheduleRepository,
        rules: ScheduleRules,
        *,
        clock: Clock,
        signals: Signals | None = None,
        observer: FiringObserver | None = None,
    ) -> None:
        self._schedules = schedules
        self._rules = rules
        self._clock = clock
        self._signals = signals
        self._observer = observer
        self._settings = rules.settings
        self._changed = signals.schedules if signals is not None else asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def tick(self) -> list[FiredRun]:
        """Fire everything due at the clock's now (in batches); returns what was done."""
        now = await self._clock.now()
        await self._rules.budget.prepare(now)
        fired: list[FiredRun] = []
        while True:
            batch = await self._schedules.fire_due(now, self._rules, limit=self._settings.batch)
            fired.extend(batch)
            if len(batch) < self._settings.batch:
                break
        if self._signals is not None and any(run.job_id is not None for run in fired):
            self._signals.jobs.set()
        for run in fired:
            if run.outcome == "paused":
                _LOG.warning("schedule %d paused: its target is gone", run.schedule_id)
            if self._observer is not None:
                self._observer(run)
        return fired

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._loop(), name="scheduler")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        poll_s = self._settings.poll_s
        while True:
            self._changed.clear()
            try:
                fired = await self.tick()
                wait_s = 0.0 if len(fired) >= self._settings.batch else await self._until_due(poll_s)
            except Exception:
                # The loop's boundary: a failed pass (database away, a bug) is retried, never fatal.
                _LOG.error("firing due schedules failed; retrying in %.1f s", poll_s, exc_info=True)
                wait_s = poll_s
            if wait_s > 0:
                await wait_signal(self._changed, wait_s)

    async def _until_due(self, poll_s: float) -> float:
        soonest = await self._schedules.next_due_at()
        if soonest is None:
            return poll_s
        # A floor: a schedule still due after a pass is held by another process's firing right now.
        return max(_MIN_WAIT_S, min(poll_s, soonest - await self._clock.now()))
