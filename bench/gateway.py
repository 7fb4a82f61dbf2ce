"""``mnemogate bench gateway``: gateway overhead from inbound submit to reply queued, with W worker processes.

A zero-latency scripted model answers every turn, so the figures are the gateway's own cost: the inbound
pipeline (dedupe, access, rate limit, commands), the enqueue transaction, cross-process claiming under
leases, the turn loop's reads and writes, and the job-completing transaction that queues the reply.
``conversations`` chat users each send ``messages`` messages, one after another (a user waits for the
reply before the next message), with at most ``inflight`` users typing at once. Latency of a message is
``outbox.created_at`` of its reply minus the submit time (both wall clock on one host). Afterwards the
transcripts are checked: ``missing`` replies, ``duplicates`` (replies beyond one per message) and
``overlaps`` (two turns of one conversation running at once, from the jobs' start and finish times).

Then, with the worker processes stopped (so the throughput figures are untouched), the database round
trips of a turn are counted in this one process (``count_round_trips``): ``Storage.stats()`` counts
every call into state.db (each read, write or append is one round trip; ``write_commits`` the write
transactions). A pool of concurrency 1 that polls only when signalled runs ``round_trip_turns`` turns
one after another on the same home, each a message through the inbound pipeline (dedupe, identity,
access, enqueue) and the pool's turn (claim, turn loop reads and writes, the job-completing transaction
that queues the reply). A turn's count starts with everything quiet and stops the moment its lane
finished (the pool's lane observer), so the pool's wake after the lane — a claim that finds nothing —
is not counted; it is reported as ``db_idle_round_trips_per_turn`` (everything until quiet again). No
delivery loop runs, so delivering the reply is not counted. ``db_round_trips_per_turn`` and
``db_writes_per_turn`` average the plain turns: a message in the live conversation of a known person;
``db_round_trips_first_turn`` and ``db_writes_first_turn`` average each conversation's first message (a
new person, account and conversation). ``client_cpu_ms_per_turn`` is this process's CPU over those turns
(less sensitive to a busy machine than the wall clock) and, on PostgreSQL with the server on this
machine, ``server_cpu_ms_per_turn`` the CPU of the server processes serving it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import shutil
import signal
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from agent_core.llm import UsageEvent
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from agent_core.storage import StoreStats
from gateway.config import Home, Settings, StorageSettings
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.delivery.settings import DEFAULT_LEASE_S
from gateway.queue import WorkerPool
from gateway.runtime import build_gateway, open_runtime, worker_pool
from gateway.storage.admin_reads import AdminReads
from gateway.storage.backend import Storage
from gateway.storage.queue import TurnQueueRepository

from .gateway_failover import host_home, leased_adapter, measure

_PLATFORM = "bench"
_WATCH_S = 0.002
_DEADLINE_S = 600.0
_QUIET_S = 0.05
_NEVER_S = 3600.0
# Every reply reports its tokens as a real model's does, so a turn's figures include recording its usage
# (priced as a known model: the usage log's row carries a cost, as it would in production).
_MODEL = "anthropic:claude-sonnet-4-5"
_USAGE = UsageEvent(input_tokens=1_200, output_tokens=40, cache_read_tokens=1_000)


def bench_config(concurrency: int, storage: StorageSettings | None = None) -> dict[str, Any]:
    return {
        "access": {_PLATFORM: {"mode": "open"}},
        "rate_limit": {"enabled": False},
        "storage": storage or {"sqlite": {"index_enabled": False}},
        "queue": {"concurrency": concurrency, "poll_min_s": 0.005, "poll_max_s": 0.05},
    }


def run(
    home: Path,
    conversations: int,
    messages: int,
    workers: int,
    *,
    storage: StorageSettings | None = None,
    hosts: int = 1,
    lease_s: float = DEFAULT_LEASE_S,
    inflight: int | None = None,
    concurrency: int = 16,
    round_trip_turns: int = 50,
) -> dict[str, float | int]:
    """Run in a fresh directory under ``home`` (removed afterwards); return the figures.

    ``storage``: the backend (default: SQLite in the work directory, its search index off). ``hosts`` > 1
    (PostgreSQL only) runs that many worker processes instead of ``workers``, each with its own home and a
    leased adapter under ``lease_s``, and measures the failover when the adapter's owner is killed -9.
    """
    if hosts > 1 and (storage is None or storage.backend != "postgres"):
        raise ValueError("--hosts needs --backend postgres: hosts share no files, only the database")
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-gateway-", dir=home))
    config = bench_config(concurrency, storage)
    count = hosts if hosts > 1 else workers
    homes = [host_home(workdir, n) if hosts > 1 else workdir for n in range(count)]
    ctx = multiprocessing.get_context("spawn")
    ready = [ctx.Event() for _ in range(count)]
    lease = lease_s if hosts > 1 else None
    procs = [
        ctx.Process(target=_worker_main, args=(str(homes[n]), config, ready[n], n, lease))
        for n in range(count)
    ]
    failover: dict[str, float | int] = {}
    try:
        try:
            asyncio.run(_prepare(workdir, config))
            for proc in procs:
                proc.start()
            for event in ready:
                if not event.wait(120):
                    raise RuntimeError("a bench worker did not start")
            # 12 users typing at once per worker process keeps p99 near the overhead, not queueing.
            users = inflight or 12 * count
            figures = asyncio.run(_drive(workdir, config, conversations, messages, users))
            if lease is not None:
                failover = asyncio.run(_failover(workdir, config, procs))
        finally:
            _stop(procs)
        counted = asyncio.run(count_round_trips(workdir, config, round_trip_turns, messages=messages))
        processes = {
            "hosts": hosts,
            "worker_processes": count,
            "turns_total": int(figures["replies"]) + max(round_trip_turns, 1),
        }
        return {**figures, **counted, **failover, **processes, **({"lease_s": lease} if lease else {})}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _stop(procs: Sequence[BaseProcess]) -> None:
    """SIGTERM every worker (a drain), then wait (a shared Event deadlocks once a waiter was killed -9)."""
    for proc in procs:
        if proc.pid is not None and proc.is_alive():
            proc.terminate()
    for proc in procs:
        if proc.pid is None:
            continue  # never started
        proc.join(60)
        if proc.is_alive():
            proc.kill()


def _worker_main(home: str, config: dict[str, Any], ready: Event, host: int, lease_s: float | None) -> None:
    asyncio.run(_worker(Path(home), config, ready, host, lease_s))


async def _worker(home: Path, config: dict[str, Any], ready: Event, host: int, lease_s: float | None) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    client = ScriptedClient(default=ScriptStep.reply("ok", usage=_USAGE), name=_MODEL)
    async with (
        open_runtime(Home(home), Settings(**config), client=client) as runtime,
        worker_pool(runtime),
        contextlib.AsyncExitStack() as stack,
    ):
        if lease_s is not None:
            await stack.enter_async_context(leased_adapter(runtime.storage.adapter_leases, host, lease_s))
        ready.set()
        await stop.wait()


async def _failover(
    home: Path, config: dict[str, Any], hosts: Sequence[BaseProcess]
) -> dict[str, float | int]:
    async with open_runtime(Home(home), Settings(**config), client=ScriptedClient()) as runtime:
        return await measure(runtime.storage.adapter_leases, hosts)


async def _prepare(home: Path, config: dict[str, Any]) -> None:
    """Create and migrate the home before the workers race to."""
    async with open_runtime(Home(home), Settings(**config), client=ScriptedClient()):
        return


async def _drive(
    home: Path, config: dict[str, Any], conversations: int, messages: int, users: int
) -> dict[str, float | int]:
    client = ScriptedClient()  # this process never runs a turn
    async with open_runtime(Home(home), Settings(**config), client=client) as runtime:
        gateway = build_gateway(runtime)
        replies: dict[str, asyncio.Queue[float]] = defaultdict(asyncio.Queue)
        submits: list[tuple[float, float]] = []
        pending = iter(range(conversations))
        watcher = asyncio.create_task(_watch(runtime.storage.admin, replies))

        async def user() -> None:
            for conversation in pending:
                for n in range(messages):
                    submitted = time.time()
                    stop = await gateway.pipeline.process(_message(conversation, n, submitted))
                    if stop.conversation_id is None:
                        raise RuntimeError(f"message not queued: {stop.reason}")
                    queued_at = await asyncio.wait_for(replies[stop.conversation_id].get(), 60)
                    submits.append((submitted, queued_at))

        began = time.perf_counter()
        try:
            await asyncio.wait_for(asyncio.gather(*(user() for _ in range(users))), _DEADLINE_S)
        finally:
            watcher.cancel()
        wall = time.perf_counter() - began
        checks = await _checks(runtime.storage.admin, runtime.storage.queue)
    latencies = sorted(max(queued - submitted, 0.0) * 1000 for submitted, queued in submits)
    expected = conversations * messages
    return {
        "turns_per_s": round(len(submits) / wall, 1) if wall > 0 else 0.0,
        "p50_ms": round(_percentile(latencies, 50), 2),
        "p99_ms": round(_percentile(latencies, 99), 2),
        "replies": checks["replies"],
        "missing": max(expected - checks["answered"], 0),
        "duplicates": checks["duplicates"],
        "overlaps": checks["overlaps"],
        "wall_s": round(wall, 3),
    }


async def _watch(reads: AdminReads, replies: dict[str, asyncio.Queue[float]]) -> None:
    """Hand each newly queued reply's time to the user waiting on its conversation."""
    last = 0
    while True:
        for reply in await reads.queued_replies(after=last):
            last = max(last, reply.position)
            replies[reply.conversation_id].put_nowait(reply.created_at)
        await asyncio.sleep(_WATCH_S)


def _message(conversation: int | str, n: int, at: float) -> InboundMessage:
    user = f"user{conversation}"
    return InboundMessage(
        event_id=f"{conversation}:{n}",
        chat=ChatRef(_PLATFORM, f"chat{conversation}", ChatKind.DM),
        sender=UserRef(_PLATFORM, user),
        text=f"message {n}",
        message_id=f"{conversation}:{n}",
        sent_at=at,
    )


async def _checks(reads: AdminReads, queue: TurnQueueRepository) -> dict[str, int]:
    replies = await reads.outbox_count(kind="reply")
    tallies = await reads.message_tallies()
    answered = sum(min(t.user_messages, t.assistant_replies) for t in tallies)
    duplicates = sum(max(t.assistant_replies - t.user_messages, 0) for t in tallies)
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for job in sorted(await queue.jobs(), key=lambda j: (j.conversation_id, j.started_at or 0.0)):
        if job.started_at is not None:
            spans[job.conversation_id].append((job.started_at, job.finished_at or float("inf")))
    overlaps = sum(
        1 for runs in spans.values() for (_, end), (start, _) in itertools.pairwise(runs) if start < end
    )
    return {"replies": replies, "answered": answered, "duplicates": duplicates, "overlaps": overlaps}


def _round_trip_config(config: dict[str, Any]) -> dict[str, Any]:
    """One lane, polling only when signalled, leases long enough that no heartbeat falls inside a turn."""
    queue = {**config["queue"], "concurrency": 1, "poll_min_s": _NEVER_S, "poll_max_s": _NEVER_S}
    return {**config, "queue": {**queue, "lease_s": _NEVER_S}}


async def count_round_trips(
    home: Path, config: dict[str, Any], turns: int, *, messages: int = 5
) -> dict[str, float | int]:
    """Database round trips and writes of ``turns`` turns run one by one (see the module docstring).

    The turns go to ``ceil(turns / messages)`` new conversations of ``messages`` messages each; the first
    message of each conversation is counted apart from the plain turns that follow it.
    """
    settings = Settings(**_round_trip_config(config))
    client = ScriptedClient(default=ScriptStep.reply("ok", usage=_USAGE), name=_MODEL)
    async with open_runtime(Home(home), settings, client=client) as runtime:
        storage = runtime.storage
        gateway = build_gateway(runtime)
        ended: list[StoreStats] = []
        pool = WorkerPool(
            queue=runtime.storage.queue,
            agent=runtime.agent,
            signals=runtime.signals,
            settings=settings.queue,
            observer=lambda _: ended.append(storage.stats()),
        )
        first: list[tuple[int, int]] = []
        plain: list[tuple[int, int]] = []
        idle: list[int] = []
        async with pool:
            await _quiet(storage)
            cpu = _CpuMeter(settings.storage)
            for turn in range(max(turns, 1)):
                conversation, n = divmod(turn, max(messages, 1))
                before = storage.stats()
                await gateway.pipeline.process(_message(f"rt{conversation}", n, time.time()))
                await _until(lambda: len(ended) > len(first) + len(plain), "the turn to finish")
                after = ended[turn]
                trips = after.round_trips - before.round_trips
                (plain if n else first).append((trips, after.write_commits - before.write_commits))
                idle.append(await _quiet(storage) - after.round_trips)
            spent = cpu.per_turn_ms(max(turns, 1))
    return {
        **spent,
        "db_round_trips_per_turn": _mean(trips for trips, _ in plain),
        "db_writes_per_turn": _mean(writes for _, writes in plain),
        "db_round_trips_first_turn": _mean(trips for trips, _ in first),
        "db_writes_first_turn": _mean(writes for _, writes in first),
        "db_idle_round_trips_per_turn": _mean(idle),
    }


class _CpuMeter:
    """CPU spent from now: this process's (the pipeline, the pool, the store's threads) and, on PostgreSQL
    with the server on this machine, the server processes serving this process's connections."""

    def __init__(self, storage: StorageSettings) -> None:
        self._postgres = storage.postgres if storage.backend == "postgres" else None
        self._process = time.process_time()
        self._server = self._server_now()

    def _server_now(self) -> dict[int, float]:
        if self._postgres is None:
            return {}
        from gateway.storage.postgres.scratch import backends_cpu_s

        return backends_cpu_s(self._postgres)

    def per_turn_ms(self, turns: int) -> dict[str, float]:
        figures = {"client_cpu_ms_per_turn": round((time.process_time() - self._process) * 1000 / turns, 2)}
        if self._postgres is not None:
            now = self._server_now()
            server = sum(spent - self._server.get(pid, 0.0) for pid, spent in now.items())
            if now:
                figures["server_cpu_ms_per_turn"] = round(server * 1000 / turns, 2)
        return figures


async def _quiet(storage: Storage) -> int:
    """Wait until no call reaches state.db for ``_QUIET_S``; the round-trip count then."""
    deadline = time.monotonic() + 60
    last = storage.stats().round_trips
    while time.monotonic() < deadline:
        await asyncio.sleep(_QUIET_S)
        now = storage.stats().round_trips
        if now == last:
            return now
        last = now
    raise RuntimeError("state.db never went quiet")


async def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)


def _mean(values: Iterable[int]) -> float:
    found = list(values)
    return round(sum(found) / len(found), 2) if found else 0.0


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return values[index]
