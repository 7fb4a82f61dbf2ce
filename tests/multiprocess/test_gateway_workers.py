"""Two worker PROCESSES on one home: every message answered exactly once, in order, never two turns of one
conversation at the same time (checked from the stored turn timestamps)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from pathlib import Path

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from gateway.storage.sqlite import SqliteStorage, open_state_store

from .gateway_fleet import message, queue_for, start_worker, stop_worker, write_config

CONVERSATIONS = 50
MESSAGES = 3


async def _wait_settled(storage: SqliteStorage, timeout: float) -> None:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # Held messages wait only for a queued job, so no open job means none is held either.
        if all(job.state in ("done", "failed") for job in await storage.queue.jobs()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("turns did not settle in time")


async def test_two_worker_processes_answer_every_message_once_in_order(home: Path) -> None:
    # A model that takes 30 ms per answer keeps both processes busy (4 turns each at most at once).
    async with FakeOpenAIServer(default=FakeReply(text="ok", delay_s=0.03)) as fake:
        model = {"provider": "openai", "model": "fake", "base_url": fake.base_url}
        write_config(home, {"model": model, "queue": {"concurrency": 4}})
        await _run_fleet(home)


async def _run_fleet(home: Path) -> None:
    workers = [start_worker(home), start_worker(home)]
    try:
        async with open_state_store(home) as state:
            storage = SqliteStorage(state)
            queue = queue_for(storage)
            for n in range(MESSAGES):
                for conversation in range(CONVERSATIONS):
                    result = await queue.enqueue(*message(conversation, n))
                    assert not result.duplicate
            # A platform retry of every first message changes nothing.
            for conversation in range(CONVERSATIONS):
                assert (await queue.enqueue(*message(conversation, 0))).duplicate
            await _wait_settled(storage, timeout=90)
            await _check(storage)
    finally:
        codes = [stop_worker(worker) for worker in workers]
    assert codes == [0, 0]


async def _check(storage: SqliteStorage) -> None:
    jobs = await storage.queue.jobs()
    conversations = sorted({job.conversation_id for job in jobs})
    assert len(conversations) == CONVERSATIONS
    for conversation_id in conversations:
        transcript = await storage.state.conversation_messages(conversation_id)
        users = [m.content or "" for m in transcript if m.role == "user"]
        assert len(users) == MESSAGES and len(set(users)) == MESSAGES, "a message was lost or duplicated"
        assert users == sorted(users, key=lambda text: int(text.split()[1])), "user messages out of order"
        finals = [m for m in transcript if m.role == "assistant" and m.tool_calls is None]
        # Every reply answers at least one new user message: no message is answered twice.
        pending = 0
        for m in transcript:
            if m.role == "user":
                pending += 1
            elif m.role == "assistant" and m.tool_calls is None:
                assert pending > 0, "a reply answered nothing new (a duplicate turn)"
                pending = 0
        assert pending == 0, "a message was never answered"
        replies = [
            row.text for row in await storage.outbox.for_conversation(conversation_id) if row.kind == "reply"
        ]
        assert replies == [m.content for m in finals], "each reply queued exactly once, in order"
    by_conversation: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for job in sorted(jobs, key=lambda job: (job.conversation_id, job.started_at or 0.0)):
        if job.started_at is not None:
            by_conversation[job.conversation_id].append((job.started_at, job.finished_at or 0.0))
    for spans in by_conversation.values():
        for (_, finished), (started, _) in itertools.pairwise(spans):
            assert started >= finished, "two turns of one conversation overlapped"
    holders = {job.holder for job in jobs if job.holder is not None}
    assert len(holders) == 2, "both worker processes took part"
