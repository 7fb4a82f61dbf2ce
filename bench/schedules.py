"""``mnemogate bench schedules``: ``count`` one-shot reminders due within ``window_s``, fired by
``schedulers`` scheduler loops at once; every one fired once, and the lag from due to fired (p50/p99/max).

Setup: ``conversations`` conversations, each with a person and a delivered greeting, and the schedules spread
evenly over the window, created through the port. Creating them takes a while, so the schedulers read a clock
shifted back by the setup time (``OffsetClock``): in the schedulers' time the window starts when they start,
and every schedule is due ahead of them, as in production. A run's lag is the scheduler's clock right after
the transaction that fired it committed, minus its due time. What the runs queued (one job each) is counted
but not run: this measures firing, not turns. ``fired_once``: every schedule has exactly one run and every
run one job.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.config import StorageSettings
from gateway.contracts import ChatKind, ChatRef
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.schedules import Scheduler, ScheduleRules, ScheduleSettings
from gateway.storage import Storage, open_storage
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChunkReceipt
from gateway.storage.queue import JobReply, TurnRequest
from gateway.storage.schedules import FiredRun, NewSchedule, ScheduleTarget

_PLATFORM = "bench"
_AT_ONCE = 6  # setup writes in flight (below the default pool of 8 connections)
T = TypeVar("T")
_GRACE_S = 120.0


class OffsetClock:
    """The machine's clock minus ``offset_s`` (the schedulers' time starts when they do)."""

    def __init__(self, offset_s: float) -> None:
        self.offset_s = offset_s

    async def now(self) -> float:
        return time.time() - self.offset_s


def run(
    home: Path,
    count: int,
    *,
    window_s: float = 60.0,
    conversations: int = 1_000,
    schedulers: int = 2,
    storage: StorageSettings | None = None,
) -> dict[str, Any]:
    return asyncio.run(_bench(home, count, window_s, min(conversations, count), schedulers, storage))


async def _bench(
    home: Path,
    count: int,
    window_s: float,
    conversations: int,
    schedulers: int,
    settings: StorageSettings | None,
) -> dict[str, Any]:
    async with open_storage(home, settings or StorageSettings()) as storage:
        started = time.time()
        targets = await _conversations(storage, conversations)
        seeded = time.time()
        due_from = started  # the schedules' window starts at the setup's start, in the schedulers' time
        reminders = (
            _reminder(targets[n % conversations], due_from + window_s * n / count) for n in range(count)
        )
        await _together(storage.schedules.create(r, max_per_person=count) for r in reminders)
        created = time.time()
        lags = await _fire_all(storage, count, window_s, schedulers, offset_s=created - due_from)
        return {
            **await _outcome(storage, count),
            "schedules": count,
            "window_s": window_s,
            "schedulers": schedulers,
            "conversations": conversations,
            "setup_conversations_s": round(seeded - started, 2),
            "setup_schedules_s": round(created - seeded, 2),
            "create_per_s": round(count / max(created - seeded, 1e-9)),
            "lag_ms_p50": round(statistics.median(lags) * 1000, 2) if lags else None,
            "lag_ms_p99": round(_percentile(lags, 0.99) * 1000, 2) if lags else None,
            "lag_ms_max": round(max(lags) * 1000, 2) if lags else None,
        }


async def _conversations(storage: Storage, count: int) -> list[ScheduleTarget]:
    """``count`` persons' conversations, each with one answered and delivered message (as a chat has)."""
    targets = await _together(_greeting(storage, n) for n in range(count))
    while jobs := await storage.queue.claim("bench", lease_s=600, limit=100, max_attempts=3):
        answer = NewMessage(role="assistant", content="hi", author="mnemogate")
        await _together(
            storage.queue.finish(job.id, "bench", state="done", reply=JobReply("hi", append=answer))
            for job in jobs
        )
    while items := await storage.outbox.claim([_PLATFORM], "bench", claim_s=600, limit=100):
        await _together(storage.outbox.mark_sent(item.id, ChunkReceipt(0, f"m{item.id}")) for item in items)
    return targets


async def _greeting(storage: Storage, n: int) -> ScheduleTarget:
    person = await storage.identity.ensure_account(_PLATFORM, f"u{n}", None)
    actor = Actor(person, platform=_PLATFORM, account_id=f"u{n}")
    chat = chat_to_text(ChatRef(_PLATFORM, f"dm-{n}", ChatKind.DM))
    request = TurnRequest(
        actor=actor,
        event_id=f"hello-{n}",
        session_key=f"{_PLATFORM}:dm-{n}",
        principal=Principal.of(actor, chat_id=f"dm-{n}"),
        chat_ref=chat,
        reply_to=None,
        message=NewMessage(role="user", content="hello", author=person),
    )
    queued = await storage.queue.enqueue(request, QUEUE_WHEN_BUSY)
    return ScheduleTarget(queued.conversation_id or "", person, _PLATFORM, chat)


async def _together(work: Iterable[Awaitable[T]], at_once: int = _AT_ONCE) -> list[T]:
    """Every awaitable of ``work``, ``at_once`` at a time (a PostgreSQL pool serves several at once)."""
    limit = asyncio.Semaphore(at_once)

    async def one(step: Awaitable[T]) -> T:
        async with limit:
            return await step

    return list(await asyncio.gather(*(one(step) for step in work)))


def _reminder(target: ScheduleTarget, due: float) -> NewSchedule:
    return NewSchedule(
        target, "once", repr(due), "UTC", "message", "⏰ Reminder: stretch", due, created_by="bench"
    )


async def _fire_all(
    storage: Storage, count: int, window_s: float, schedulers: int, *, offset_s: float
) -> list[float]:
    clock = OffsetClock(offset_s)
    lags: list[float] = []
    fired: list[FiredRun] = []
    done = asyncio.Event()

    def observe(run: FiredRun) -> None:
        if run.run_id is None or run.occurrence_at is None:
            return
        lags.append(time.time() - offset_s - run.occurrence_at)
        fired.append(run)
        if len(fired) >= count:
            done.set()

    rules = ScheduleRules(ScheduleSettings(missed_after_s=_GRACE_S), platforms=None)
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(schedulers):
            await stack.enter_async_context(
                Scheduler(storage.schedules, rules, clock=clock, observer=observe)
            )
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(window_s + _GRACE_S):
                await done.wait()
    return lags


async def _outcome(storage: Storage, count: int) -> dict[str, Any]:
    runs = await storage.schedules.runs(limit=count * 2)
    per_schedule: dict[int, int] = {}
    for run in runs:
        per_schedule[run.schedule_id] = per_schedule.get(run.schedule_id, 0) + 1
    jobs = {run.job_id for run in runs if run.job_id is not None}
    once = (
        len(per_schedule) == count and all(n == 1 for n in per_schedule.values()) and len(jobs) == len(runs)
    )
    return {"fired": len(runs), "fired_once": once, "duplicates": sum(n - 1 for n in per_schedule.values())}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
