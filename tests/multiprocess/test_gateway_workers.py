"""Two worker PROCESSES on one home: every message answered exactly once, in order, never two turns of one
conversation at the same time (checked from the stored turn timestamps)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from pathlib import Path

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from agent_core.storage.sqlite import StateStore
from gateway.storage.sqlite import open_state_store

from .gateway_fleet import message, queue_for, rows, start_worker, stop_worker, write_config

CONVERSATIONS = 50
MESSAGES = 3


async def _wait_settled(state: StateStore, timeout: float) -> None:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = await rows(state, "SELECT count(*) FROM turn_jobs WHERE state IN ('queued', 'running')")
        held = await rows(state, "SELECT count(*) FROM pending_messages")
        if busy[0][0] == 0 and held[0][0] == 0:
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
            queue = queue_for(state)
            for n in range(MESSAGES):
                for conversation in range(CONVERSATIONS):
                    result = await queue.enqueue(*message(conversation, n))
                    assert not result.duplicate
            # A platform retry of every first message changes nothing.
            for conversation in range(CONVERSATIONS):
                assert (await queue.enqueue(*message(conversation, 0))).duplicate
            await _wait_settled(state, timeout=90)
            await _check(state)
    finally:
        codes = [stop_worker(worker) for worker in workers]
    assert codes == [0, 0]


async def _check(state: StateStore) -> None:
    messages = await rows(
        state, "SELECT conversation_id, id, role, content, tool_calls FROM messages ORDER BY id"
    )
    by_conversation: dict[str, list[tuple[int, str, str, object]]] = defaultdict(list)
    for conversation_id, message_id, role, content, tool_calls in messages:
        by_conversation[conversation_id].append((message_id, role, content, tool_calls))
    assert len(by_conversation) == CONVERSATIONS
    outbox = await rows(state, "SELECT conversation_id, id, message_id, kind FROM outbox ORDER BY id")
    replies: dict[str, list[int]] = defaultdict(list)
    for conversation_id, _, message_id, kind in outbox:
        if kind == "reply":
            replies[conversation_id].append(message_id)
    for conversation_id, transcript in by_conversation.items():
        users = [content for _, role, content, _ in transcript if role == "user"]
        assert len(users) == MESSAGES and len(set(users)) == MESSAGES, "a message was lost or duplicated"
        assert users == sorted(users, key=lambda text: int(text.split()[1])), "user messages out of order"
        finals = [mid for mid, role, _, calls in transcript if role == "assistant" and calls is None]
        # Every reply answers at least one new user message: no message is answered twice.
        groups, pending = 0, 0
        for _, role, _, calls in transcript:
            if role == "user":
                pending += 1
            elif role == "assistant" and calls is None:
                assert pending > 0, "a reply answered nothing new (a duplicate turn)"
                groups, pending = groups + 1, 0
        assert pending == 0, "a message was never answered"
        assert replies[conversation_id] == finals, "each reply queued exactly once, in order"
    jobs = await rows(
        state,
        "SELECT conversation_id, started_at, finished_at FROM turn_jobs WHERE started_at IS NOT NULL "
        "ORDER BY conversation_id, started_at",
    )
    by_job: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for conversation_id, started, finished in jobs:
        by_job[conversation_id].append((started, finished))
    for spans in by_job.values():
        for (_, finished), (started, _) in itertools.pairwise(spans):
            assert started >= finished, "two turns of one conversation overlapped"
    holders = await rows(
        state, "SELECT count(DISTINCT claimed_by) FROM turn_jobs WHERE claimed_by IS NOT NULL"
    )
    assert holders[0][0] == 2, "both worker processes took part"
