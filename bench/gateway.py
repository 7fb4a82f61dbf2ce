"""``mnemogate bench gateway``: gateway overhead from inbound submit to reply queued, with W worker processes.

A zero-latency scripted model answers every turn, so the figures are the gateway's own cost: the inbound
pipeline (dedupe, access, rate limit, commands), the enqueue transaction, cross-process claiming under
leases, the turn loop's reads and writes, and the job-completing transaction that queues the reply.
``conversations`` chat users each send ``messages`` messages, one after another (a user waits for the
reply before the next message), with at most ``inflight`` users typing at once. Latency of a message is
``outbox.created_at`` of its reply minus the submit time (both wall clock on one host). Afterwards the
transcripts are checked: ``missing`` replies, ``duplicates`` (replies beyond one per message) and
``overlaps`` (two turns of one conversation running at once, from ``turn_jobs`` timestamps).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import multiprocessing
import shutil
import tempfile
import time
from collections import defaultdict
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from agent_core.llm.scripted import ScriptedClient, ScriptStep
from agent_core.storage.sqlite import StateStore
from gateway.config import Home, Settings
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.runtime import build_gateway, open_runtime, worker_pool

_PLATFORM = "bench"
_WATCH_S = 0.002
_DEADLINE_S = 600.0


def bench_config(concurrency: int) -> dict[str, Any]:
    return {
        "access": {_PLATFORM: {"mode": "open"}},
        "rate_limit": {"enabled": False},
        "state": {"index_enabled": False},
        "queue": {"concurrency": concurrency, "poll_min_s": 0.005, "poll_max_s": 0.05},
    }


def run(
    home: Path,
    conversations: int,
    messages: int,
    workers: int,
    *,
    inflight: int | None = None,
    concurrency: int = 16,
) -> dict[str, float | int]:
    """Run in a fresh directory under ``home`` (removed afterwards); return the figures."""
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-gateway-", dir=home))
    config = bench_config(concurrency)
    ctx = multiprocessing.get_context("spawn")
    stop, ready = ctx.Event(), [ctx.Event() for _ in range(workers)]
    procs = [
        ctx.Process(target=_worker_main, args=(str(workdir), config, stop, ready[n])) for n in range(workers)
    ]
    try:
        asyncio.run(_prepare(workdir, config))
        for proc in procs:
            proc.start()
        for event in ready:
            if not event.wait(120):
                raise RuntimeError("a bench worker did not start")
        # 12 users typing at once per worker process keeps p99 near the overhead, not queueing.
        users = inflight or 12 * workers
        figures = asyncio.run(_drive(workdir, config, conversations, messages, users))
    finally:
        stop.set()
        for proc in procs:
            proc.join(60)
            if proc.is_alive():
                proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    return figures


def _worker_main(home: str, config: dict[str, Any], stop: Event, ready: Event) -> None:
    asyncio.run(_worker(Path(home), config, stop, ready))


async def _worker(home: Path, config: dict[str, Any], stop: Event, ready: Event) -> None:
    client = ScriptedClient(default=ScriptStep.reply("ok"))
    async with open_runtime(Home(home), Settings(**config), client=client) as runtime, worker_pool(runtime):
        ready.set()
        await asyncio.to_thread(stop.wait)


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
        watcher = asyncio.create_task(_watch(runtime.state, replies))

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
        checks = await runtime.state.run_read(_checks)
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


async def _watch(state: StateStore, replies: dict[str, asyncio.Queue[float]]) -> None:
    """Hand each newly queued reply's time to the user waiting on its conversation."""
    last = 0
    sql = "SELECT id, conversation_id, created_at FROM outbox WHERE id > ? AND kind = 'reply' ORDER BY id"
    while True:
        rows = await state.run_read(functools.partial(_rows_after, sql=sql, after=last))
        for outbox_id, conversation_id, created_at in rows:
            last = max(last, int(outbox_id))
            replies[str(conversation_id)].put_nowait(float(created_at))
        await asyncio.sleep(_WATCH_S)


def _rows_after(conn: Any, *, sql: str, after: int) -> list[tuple[Any, ...]]:
    return list(conn.execute(sql, (after,)).fetchall())


def _message(conversation: int, n: int, at: float) -> InboundMessage:
    user = f"user{conversation}"
    return InboundMessage(
        event_id=f"{conversation}:{n}",
        chat=ChatRef(_PLATFORM, f"chat{conversation}", ChatKind.DM),
        sender=UserRef(_PLATFORM, user),
        text=f"message {n}",
        message_id=f"{conversation}:{n}",
        sent_at=at,
    )


def _checks(conn: Any) -> dict[str, int]:
    replies = conn.execute("SELECT count(*) FROM outbox WHERE kind = 'reply'").fetchone()[0]
    per_conversation = conn.execute(
        "SELECT m.conversation_id, sum(m.role = 'user'), sum(m.role = 'assistant' AND m.tool_calls IS NULL) "
        "FROM messages m GROUP BY m.conversation_id"
    ).fetchall()
    answered = sum(min(users, answers) for _, users, answers in per_conversation)
    duplicates = sum(max(answers - users, 0) for _, users, answers in per_conversation)
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for conversation_id, started, finished in conn.execute(
        "SELECT conversation_id, started_at, finished_at FROM turn_jobs WHERE started_at IS NOT NULL "
        "ORDER BY conversation_id, started_at"
    ):
        spans[conversation_id].append((started, finished or float("inf")))
    overlaps = sum(
        1 for runs in spans.values() for (_, end), (start, _) in itertools.pairwise(runs) if start < end
    )
    return {"replies": int(replies), "answered": answered, "duplicates": duplicates, "overlaps": overlaps}


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return values[index]
