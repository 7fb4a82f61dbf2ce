"""Schedules across processes and hosts, on every backend: two schedulers firing at the same instant never
fire one occurrence twice (on PostgreSQL two "hosts": processes with homes of their own on one schema), and
a process killed (-9) right after it fired a reminder, before anything delivered it, leaves it to be
delivered once after the restart — and never fired again."""

from __future__ import annotations

import asyncio
import os
import signal
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from gateway.schedules import ManualClock, Scheduler, ScheduleRules, ScheduleSettings
from gateway.storage import open_storage
from tests.spawned import DEADLINE_S, SPAWN, stop_spawned
from tests.storage.contract.backends import BACKEND_KINDS, BACKENDS
from tests.storage.contract.test_schedules import T0, live_conversation, schedule
from tests.storage.contract.together import run_together

from .harness import world, world_config


@pytest.fixture(params=BACKEND_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        request.getfixturevalue("postgres_database")
    return str(request.param)


def host_home(kind: str, shared: Path, own: Path) -> Path:
    """A host's home: on PostgreSQL its own directory (the data is in the shared schema), on SQLite the one
    home every process shares (state.db is the data)."""
    return own if kind == "postgres" else shared


def fire_as_host(
    kind: str, shared: str, own: str, now: float, barrier: Barrier, out: Queue[list[int]]
) -> None:
    """Multiprocessing target: a scheduler on its own clock at ``now``, ticking until nothing is due."""

    async def run() -> list[int]:
        settings = BACKENDS[kind].settings(Path(shared))
        async with open_storage(host_home(kind, Path(shared), Path(own)), settings) as storage:
            rules = ScheduleRules(ScheduleSettings(batch=4))
            scheduler = Scheduler(storage.schedules, rules, clock=ManualClock(now))
            barrier.wait(timeout=DEADLINE_S)
            fired: list[int] = []
            while runs := await scheduler.tick():
                fired.extend(run.run_id for run in runs if run.run_id is not None)
            return fired

    out.put(asyncio.run(run()))


async def _seed(kind: str, home: Path, count: int) -> list[int]:
    async with open_storage(home, BACKENDS[kind].settings(home)) as storage:
        targets = [await live_conversation(storage, f"u{n}") for n in range(5)]
        for n in range(count):
            await storage.schedules.create(schedule(targets[n % 5], at=T0 + n), max_per_person=count)
        return sorted(s.id for s in await storage.schedules.find(limit=count))


def test_two_schedulers_at_the_same_instant_fire_each_occurrence_once(kind: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    ids = asyncio.run(_seed(kind, shared, 60))
    hosts = [(kind, str(shared), str(tmp_path / f"host-{n}"), T0 + 120) for n in range(2)]
    for _, _, own, _ in hosts:
        Path(own).mkdir()
    first, second = run_together(fire_as_host, hosts)
    assert not set(first) & set(second) and len(first) + len(second) == 60

    async def fired() -> list[int]:
        async with open_storage(shared, BACKENDS[kind].settings(shared)) as storage:
            return sorted(run.schedule_id for run in await storage.schedules.runs(limit=100))

    assert asyncio.run(fired()) == ids


def fire_then_die(kind: str, home: str, now: float) -> None:
    """Multiprocessing target: fire what is due, then die at once (kill -9) before anything runs it."""

    async def run() -> None:
        settings = BACKENDS[kind].settings(Path(home))
        async with open_storage(Path(home), settings) as storage:
            scheduler = Scheduler(
                storage.schedules, ScheduleRules(ScheduleSettings()), clock=ManualClock(now)
            )
            assert [run.outcome for run in await scheduler.tick()] == ["fired"]
            os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(run())


async def test_a_reminder_fired_by_a_process_killed_at_once_is_delivered_once_after_the_restart(
    kind: str, home: Path
) -> None:
    config = world_config(storage=BACKENDS[kind].settings(home))
    clock = ManualClock(T0 - 600)
    async with world(home, config=config, clock=clock) as w:
        await w.say("remind me in 10 minutes to stretch", event="e1")
        await w.idle()
    crashed = SPAWN.Process(target=fire_then_die, args=(kind, str(home), T0))
    try:
        crashed.start()
        crashed.join(DEADLINE_S)
        assert crashed.exitcode == -signal.SIGKILL
    finally:
        stop_spawned([crashed])
    clock.set(T0 + 5)
    async with world(home, config=config, clock=clock) as w:
        assert await w.tick() == []  # fired before the crash: never again
        await w.idle()
        assert w.texts() == ["⏰ Reminder: stretch"]
        (run,) = await w.runtime.storage.schedules.runs()
        assert (run.task, run.delivery) == ("ran", "sent")
