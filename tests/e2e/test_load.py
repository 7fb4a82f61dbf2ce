"""One ``serve`` plus two ``worker`` processes; 200 browser conversations x 5 messages at once.

Every message is answered exactly once, replies arrive in order, and no two turns of one conversation
ever overlap (checked from the stored jobs' start and finish times, read through the storage port).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from pathlib import Path

import httpx

from gateway.storage.queue import JobRecord
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.e2e.gateway_process import serving, start_worker, stop, wait_for_line

CONVERSATIONS = 200
MESSAGES = 5


async def _conversation(base_url: str, index: int) -> list[str]:
    """One browser: sends its messages one after another, each after the previous reply arrived."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        for n in range(MESSAGES):
            text = f"conversation {index} message {n}"
            posted = await browser.post(
                "/api/chat/messages", json={"text": text, "client_message_id": f"{index}-{n}"}
            )
            assert posted.status_code == 200, posted.text
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline:
                body = (await browser.get("/api/chat/messages", params={"after": cursor, "wait": 10})).json()
                cursor = body["cursor"]
                if body["messages"]:
                    break
            else:
                raise AssertionError(f"no reply to {text!r}")
        # Everything this browser was ever sent (a cursor from another epoch means "from the start").
        delivered = (await browser.get("/api/chat/messages", params={"after": "start.0"})).json()["messages"]
        return [str(item["html"]) for item in delivered]


async def _all(base_url: str) -> list[list[str]]:
    return await asyncio.gather(*(_conversation(base_url, i) for i in range(CONVERSATIONS)))


async def _stored(home: Path) -> tuple[list[JobRecord], int, dict[str, list[str]]]:
    """Every job (by start), the delivered outbox rows, and each conversation's delivered kinds."""
    async with open_state_store(home) as state:
        storage = SqliteStorage(state)
        jobs = sorted(await storage.queue.jobs(), key=lambda job: job.started_at or 0.0)
        counters = await storage.admin.gateway_counters()
        kinds = {
            cid: [row.kind for row in await storage.outbox.for_conversation(cid) if row.state == "sent"]
            for cid in {job.conversation_id for job in jobs}
        }
    return jobs, dict(counters.outbox_by_state).get("sent", 0), kinds


def test_serve_and_two_workers_answer_every_message_once_in_order(home: Path) -> None:
    (home / "config.yaml").write_text("rate_limit:\n  enabled: false\n")
    workers = [start_worker(home) for _ in range(2)]
    try:
        for worker in workers:
            wait_for_line(worker, "ready")
        with serving(home) as base_url:
            began = time.monotonic()
            replies = asyncio.run(_all(base_url))
            elapsed = time.monotonic() - began
    finally:
        outputs = [stop(worker) for worker in workers]
    for index, texts in enumerate(replies):
        expected = [f"conversation {index} message {n}" for n in range(MESSAGES)]
        assert len(texts) == MESSAGES, (index, texts)
        assert [next(e for e in expected if e in t) for t in texts] == expected, (index, texts)

    jobs, sent, kinds = asyncio.run(_stored(home))
    assert {job.state for job in jobs} == {"done"}
    assert sent == CONVERSATIONS * MESSAGES
    assert all(delivered == ["reply"] * MESSAGES for delivered in kinds.values())  # each answered once
    by_conversation: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for job in jobs:
        assert job.started_at is not None and job.finished_at is not None
        by_conversation[job.conversation_id].append((job.started_at, job.finished_at))
    assert len(by_conversation) == CONVERSATIONS
    for spans in by_conversation.values():
        for (_, first_end), (second_start, _) in itertools.pairwise(spans):
            assert first_end <= second_start, "two turns of one conversation overlapped"
    holders = {job.holder for job in jobs}
    assert len(holders) >= 2, f"only {holders} ran turns; workers said: {outputs}"
    print(f"{CONVERSATIONS * MESSAGES} turns in {elapsed:.1f} s over {len(holders)} worker pools")
