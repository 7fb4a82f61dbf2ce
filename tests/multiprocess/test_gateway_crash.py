"""``kill -9`` of a worker mid-turn, and SIGTERM drain, with a slow model served by a fake OpenAI server."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from gateway.storage.queue import JobRecord
from gateway.storage.sqlite import SqliteStorage, open_state_store

from .gateway_fleet import message, queue_for, start_worker, stop_worker, write_config

SLOW = FakeReply(text="the answer", chunks=10, chunk_delay_s=0.25)


def _config(fake: FakeOpenAIServer, **queue: object) -> dict[str, object]:
    return {
        "model": {"provider": "openai", "model": "fake", "base_url": fake.base_url, "max_attempts": 1},
        "queue": {"lease_s": 1.5, **queue},
    }


async def _job(storage: SqliteStorage) -> JobRecord:
    (job,) = await storage.queue.jobs()
    return job


async def _wait_job(storage: SqliteStorage, wanted: str, timeout: float) -> JobRecord:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = await _job(storage)
        if job.state == wanted:
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job never reached {wanted!r}: {await _job(storage)}")


async def _outbox(storage: SqliteStorage, job: JobRecord) -> list[tuple[str, str]]:
    return [(row.text, row.kind) for row in await storage.outbox.for_conversation(job.conversation_id)]


async def test_kill_9_mid_turn_the_turn_completes_on_another_worker_with_one_reply(home: Path) -> None:
    async with FakeOpenAIServer(default=SLOW) as fake, open_state_store(home) as state:
        storage = SqliteStorage(state)
        write_config(home, _config(fake))
        doomed = start_worker(home)
        survivor = None
        try:
            await queue_for(storage).enqueue(*message(1, 0))
            await fake.wait_for_requests(1, timeout_s=20)
            assert (await _job(storage)).state == "running"
            os.kill(doomed.pid, signal.SIGKILL)
            doomed.process.wait(10)
            survivor = start_worker(home)
            job = await _wait_job(storage, "done", timeout=30)
            assert job.attempts == 2, "the job ran twice: once killed, once to completion"
            assert await _outbox(storage, job) == [("the answer", "reply")]
            messages = await state.conversation_messages(job.conversation_id)
            roles = [(m.role, m.content) for m in messages]
            assert roles == [("user", "message 0 of conversation 1"), ("assistant", "the answer")]
            assert await storage.queue.leases() == []
        finally:
            if survivor is not None:
                assert stop_worker(survivor) == 0
            if doomed.process.poll() is None:
                doomed.process.kill()


async def test_sigterm_drains_and_releases_the_lease_then_another_worker_answers(home: Path) -> None:
    async with FakeOpenAIServer(default=SLOW) as fake, open_state_store(home) as state:
        storage = SqliteStorage(state)
        write_config(home, _config(fake, drain_grace_s=0.2))
        first = start_worker(home)
        await queue_for(storage).enqueue(*message(1, 0))
        await fake.wait_for_requests(1, timeout_s=20)
        started = time.monotonic()
        assert stop_worker(first) == 0
        assert time.monotonic() - started < 10
        job = await _job(storage)
        assert job.state == "queued" and job.holder is None
        assert await storage.queue.leases() == []
        second = start_worker(home)
        try:
            done = await _wait_job(storage, "done", timeout=30)
            assert await _outbox(storage, done) == [("the answer", "reply")]
        finally:
            assert stop_worker(second) == 0
