"""The worker pool: claims runnable jobs under per-conversation leases and runs them with bounded concurrency.

Invariants: at most ``concurrency`` turns run in this process; every running turn holds its conversation's
lease, renewed every ``lease_s / 3`` — a turn whose lease was lost is cancelled, since another worker may
already own the job; a job a budget refuses is closed by the claim itself (with its notice) and one it
holds back stays queued for a later claim (gateway.storage.budgets); draining stops claiming, gives
in-flight turns ``drain_grace_s``, then cancels the rest and hands their jobs back to the queue (leases
released), so another process answers them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self, final

from agent_core.storage.errors import StateError, StateUnavailableError
from gateway.storage.budgets import BudgetGate
from gateway.storage.queue import ClaimedJob, TurnQueueRepository

from .busy_policy import BusyPolicy
from .settings import QueueSettings
from .signals import Signals, wait_signal
from .turn_lane import LaneOutcome, TurnAgent, TurnLane

_LOG = logging.getLogger("mnemogate.queue")

LaneObserver = Callable[[LaneOutcome], None]


def new_holder() -> str:
    """A lease holder id unique across hosts, processes and pools."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@final
class WorkerPool:
    """``async with WorkerPool(...)``: runs until the context exits, which drains (see module docstring)."""

    def __init__(
        self,
        *,
        queue: TurnQueueRepository,
        agent: TurnAgent,
        signals: Signals,
        settings: QueueSettings,
        holder: str | None = None,
        observer: LaneObserver | None = None,
        budget: BudgetGate | None = None,
    ) -> None:
        """``budget``: asked by every claim about each job that would call the model (None: no budgets)."""
        self._queue = queue
        self._budget = budget
        self._busy = BusyPolicy.named(settings.busy_policy)
        self._agent = agent
        self._signals = signals
        self._settings = settings
        self.holder = holder or new_holder()
        self._observer = observer
        self._lanes: dict[asyncio.Task[LaneOutcome], ClaimedJob] = {}
        self._draining = False
        self._claimer: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._lane_ended = False
        self.turns_finished = 0
        self.last_activity = time.time()

    @property
    def alive(self) -> bool:
        """Whether the pool is still claiming work (for readiness)."""
        return self._claimer is not None and not self._claimer.done() and not self._draining

    @property
    def in_flight(self) -> int:
        return len(self._lanes)

    async def __aenter__(self) -> Self:
        self._claimer = asyncio.create_task(self._claim_loop(), name="worker-claims")
        self._claimer.add_done_callback(_log_crash)
        self._heartbeat = asyncio.create_task(self._heartbeat_loop(), name="worker-heartbeat")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.drain()

    async def drain(self, grace_s: float | None = None) -> int:
        """Stop claiming, wait up to the grace period, cancel the rest; returns how many jobs went back."""
        if self._draining:
            return 0
        self._draining = True
        await _cancel(self._claimer)
        grace = self._settings.drain_grace_s if grace_s is None else grace_s
        lanes = list(self._lanes)
        if lanes:
            await asyncio.wait(lanes, timeout=grace)
        unfinished = [task for task in lanes if not task.done()]
        jobs = [self._lanes[task].id for task in unfinished]
        for task in unfinished:
            task.cancel()
        if unfinished:
            await asyncio.gather(*unfinished, return_exceptions=True)
        released = 0
        if jobs:
            released = await self._queue.release(self.holder, jobs)
            self._signals.jobs.set()
            _LOG.info("drain: handed %d unfinished turn(s) back to the queue", released)
        await _cancel(self._heartbeat)
        return released

    # -- claiming --------------------------------------------------------------------------------

    async def _claim_loop(self) -> None:
        interval = self._settings.poll_min_s
        signalled = False
        while not self._draining:
            # Woken by a local enqueue alone, a job is waiting: the claim need not look first. A lane
            # that ended sets the same signal, and then there may well be nothing, so it looks.
            expect_work = signalled and not self._lane_ended
            self._signals.jobs.clear()
            self._lane_ended = False
            free = self._settings.concurrency - self.in_flight
            claimed = await self._claim(free, expect_work=expect_work)
            for job in claimed:
                self._start(job)
            backoff = min(interval * 2, self._settings.poll_max_s)
            interval = self._settings.poll_min_s if claimed else backoff
            signalled = False
            if len(claimed) == free > 0:
                continue  # the claim stopped at the limit, not for lack of work: room may be left now
            signalled = await wait_signal(self._signals.jobs, interval)

    async def _claim(self, free: int, *, expect_work: bool = False) -> list[ClaimedJob]:
        if free <= 0:
            return []
        settings = self._settings
        try:
            return await self._queue.claim(
                self.holder,
                lease_s=settings.lease_s,
                limit=free,
                max_attempts=settings.max_attempts,
                expect_work=expect_work,
                budget=self._budget,
            )
        except StateError:
            _LOG.warning("could not claim jobs; retrying", exc_info=True)
            return []

    def _start(self, job: ClaimedJob) -> None:
        lane = TurnLane(
            queue=self._queue,
            agent=self._agent,
            holder=self.holder,
            job=job,
            check_every_s=self._settings.interrupt_check_s,
            busy_policy=self._busy,
        )
        task = asyncio.create_task(lane.run(), name=f"turn-{job.id}")
        self._lanes[task] = job
        task.add_done_callback(self._lane_done)

    def _lane_done(self, task: asyncio.Task[LaneOutcome]) -> None:
        job = self._lanes.pop(task, None)
        self.last_activity = time.time()
        self._lane_ended = True
        self._signals.jobs.set()
        if task.cancelled():
            return
        if (error := task.exception()) is not None:
            # Its lease is no longer renewed, so the job is re-claimed (up to max_attempts) elsewhere.
            job_id = job.id if job is not None else "?"
            if isinstance(error, StateUnavailableError) and not error.damaged:
                _LOG.warning(
                    "turn of job %s stopped, the database is out of reach: %s; it runs again once "
                    "its lease ends",
                    job_id,
                    error,
                )
            else:
                _LOG.error("turn lane for job %s crashed", job_id, exc_info=error)
            return
        self.turns_finished += 1
        self._signals.outbox.set()
        if self._observer is not None:
            self._observer(task.result())

    # -- leases ----------------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        period = self._settings.lease_s / 3
        while True:
            await asyncio.sleep(period)
            try:
                await self._renew()
            except Exception:
                # Lane boundary: a heartbeat that died silently would let another process start a
                # second turn of a running conversation once the lease lapses, so log and keep beating.
                _LOG.exception("lease heartbeat failed; retrying in %.1f s", period)

    async def _renew(self) -> None:
        held = {job.conversation_id: task for task, job in self._lanes.items()}
        if not held:
            return
        conversations = list(held)
        try:
            lost = await self._queue.renew(self.holder, conversations, lease_s=self._settings.lease_s)
        except StateError:
            _LOG.warning("could not renew leases", exc_info=True)
            return
        for conversation_id in lost:
            task = held[conversation_id]
            if not task.done():
                _LOG.warning("lease of %s was lost; cancelling its turn", conversation_id)
                task.cancel()


async def _cancel(task: asyncio.Task[None] | None) -> None:
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        _LOG.error("the worker pool stopped claiming jobs", exc_info=task.exception())
