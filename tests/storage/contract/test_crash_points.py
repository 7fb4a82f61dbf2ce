"""Crash points on every backend: a process killed with SIGKILL right after a commit loses nothing and
duplicates nothing — a job enqueued but never claimed is claimed by the next processes exactly once, a job
whose reply rows were stored before its finish is recovered without a second reply, and a reply whose
first chunk reached the platform resumes at the next chunk.

Each test spawns a child that commits up to the crash point through the port, says so, and then hangs
until it is killed; every child is killed and joined by the test that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage
from gateway.contracts import ChatKind, ChatRef
from gateway.delivery import DeliveryLoop, DeliverySettings
from gateway.queue import QUEUE_WHEN_BUSY, Signals, TurnLane
from gateway.storage import ChunkReceipt, ClaimedJob, OutboxEntry, Storage
from gateway.storage.chat_refs import chat_to_text
from tests.adapters.fakes.recording_sink import wait_until
from tests.gateway.delivery.recording_adapter import RecordingAdapter

from .backends import BackendUnderTest, open_storage
from .test_queue import LONG, claim_until_empty, eventually, request

SPAWN = multiprocessing.get_context("spawn")
_DEADLINE_S = 60.0
SHORT_S = 0.3  # the dying process's lease or claim: long enough to crash inside, short enough to wait out
ANSWER = "the stored answer"


# --- children: commit up to the crash point, report, then hang until SIGKILL ------------------------------


def _hang_after(step: Callable[[Storage], Awaitable[int]], spec: str, ready: Queue[int], hang: Event) -> None:
    async def run() -> None:
        async with open_storage(spec) as storage:
            ready.put(await step(storage))
            # Frozen at the crash point: the event loop and every store thread stop with the process.
            hang.wait(_DEADLINE_S)

    asyncio.run(run())


async def _enqueue(storage: Storage) -> int:
    outcome = await storage.queue.enqueue(request("hello", event="e1"), QUEUE_WHEN_BUSY)
    return outcome.job_id or 0


async def _store_reply_rows(storage: Storage) -> int:
    await storage.queue.enqueue(request("hello", event="e1"), QUEUE_WHEN_BUSY)
    (job,) = await storage.queue.claim("dying", lease_s=SHORT_S, limit=1, max_attempts=3)
    tip = await storage.agent.resolve_tip(job.conversation_id)
    (stored,) = await storage.agent.append_messages(
        tip.id, [NewMessage(role="assistant", content=ANSWER, author="mnemogate")]
    )
    return stored


def _chat() -> str:
    return chat_to_text(ChatRef("test", "dm-ada", ChatKind.DM))


async def _send_first_chunk(storage: Storage) -> int:
    await storage.outbox.add(OutboxEntry("cv", "test", _chat(), "one§two§three", "turn:1", kind="reply"))
    (item,) = await storage.outbox.claim(["test"], "dying", claim_s=SHORT_S, limit=1)
    await storage.outbox.record_chunk(item.id, ChunkReceipt(0, "m-first"))
    return item.id


def enqueue_then_die(spec: str, ready: Queue[int], hang: Event) -> None:
    _hang_after(_enqueue, spec, ready, hang)


def store_reply_then_die(spec: str, ready: Queue[int], hang: Event) -> None:
    _hang_after(_store_reply_rows, spec, ready, hang)


def send_first_chunk_then_die(spec: str, ready: Queue[int], hang: Event) -> None:
    _hang_after(_send_first_chunk, spec, ready, hang)


@contextlib.contextmanager
def _killed(target: Callable[[str, Queue[int], Event], None], backend: BackendUnderTest) -> Iterator[int]:
    """Run ``target`` in a child, wait for its report, SIGKILL it; yields the report."""
    ready: Queue[int] = SPAWN.Queue()
    hang = SPAWN.Event()
    child: BaseProcess = SPAWN.Process(target=target, args=(backend.spec, ready, hang))
    child.start()
    try:
        reported = ready.get(timeout=_DEADLINE_S)
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=_DEADLINE_S)
        assert child.exitcode == -signal.SIGKILL, child.exitcode
        yield reported
    finally:
        if child.is_alive():
            child.kill()
        child.join(timeout=_DEADLINE_S)
        ready.close()


# --- (a) after enqueue, before claim ---------------------------------------------------------------------


def test_a_job_enqueued_by_a_killed_process_is_claimed_by_the_next_ones_exactly_once(
    backend: BackendUnderTest,
) -> None:
    with _killed(enqueue_then_die, backend) as job_id:
        barrier = SPAWN.Barrier(2)
        out: Queue[list[int]] = SPAWN.Queue()
        claimers = [
            SPAWN.Process(target=claim_until_empty, args=(backend.spec, f"next{n}", barrier, out))
            for n in range(2)
        ]
        for claimer in claimers:
            claimer.start()
        try:
            claimed = [job for _ in claimers for job in out.get(timeout=_DEADLINE_S)]
        finally:
            for claimer in claimers:
                claimer.join(timeout=_DEADLINE_S)
                if claimer.is_alive():
                    claimer.kill()
                    claimer.join(timeout=_DEADLINE_S)
    assert job_id and claimed == [job_id]
    assert all(claimer.exitcode == 0 for claimer in claimers)
    asyncio.run(_one_job_one_message(backend, job_id))


async def _one_job_one_message(backend: BackendUnderTest, job_id: int) -> None:
    async with backend.open() as storage:
        (job,) = await storage.queue.jobs()
        assert (job.id, job.state, job.attempts) == (job_id, "running", 1)
        messages = await storage.agent.conversation_messages(job.conversation_id)
        assert [(m.role, m.content) for m in messages] == [("user", "hello")]


# --- (b) after the reply rows, before finish ---------------------------------------------------------------


class _NoModel:
    """A turn loop that must not run: the re-claimed job already has its reply."""

    def __init__(self) -> None:
        self.runs: list[Actor] = []

    def run(self, actor: Actor) -> AsyncIterator[object]:
        self.runs.append(actor)
        raise AssertionError("the model was asked again for a reply that was already stored")


async def _reclaim(storage: Storage) -> ClaimedJob:
    """The job once the killed holder's lease ran out (on the backend's clock)."""
    claimed: list[ClaimedJob] = []

    async def taken() -> bool:
        claimed.extend(await storage.queue.claim("next", lease_s=LONG, limit=1, max_attempts=3))
        return bool(claimed)

    await eventually(taken, within_s=_DEADLINE_S)
    return claimed[0]


async def _recover(backend: BackendUnderTest, stored: int) -> None:
    async with backend.open() as storage:
        job = await _reclaim(storage)
        model = _NoModel()
        lane = TurnLane(
            queue=storage.queue,
            agent=model,
            holder="next",
            job=job,
            check_every_s=LONG,
            busy_policy=QUEUE_WHEN_BUSY,
        )
        outcome = await lane.run()
        assert (outcome.job_id, outcome.result, model.runs) == (job.id, "recovered", [])
        replies = await storage.outbox.for_conversation(job.conversation_id)
        assert [(r.kind, r.text) for r in replies] == [("reply", ANSWER)]
        assert await storage.outbox.is_message_queued(stored)
        messages = await storage.agent.conversation_messages(job.conversation_id)
        assert [(m.role, m.content) for m in messages] == [("user", "hello"), ("assistant", ANSWER)]
        (record,) = await storage.queue.jobs()
        assert (record.state, record.attempts) == ("done", 2)
        assert await storage.queue.claim("later", lease_s=LONG, limit=1, max_attempts=3) == []


def test_a_reply_stored_before_a_crash_is_recovered_without_a_second_reply(backend: BackendUnderTest) -> None:
    with _killed(store_reply_then_die, backend) as stored:
        asyncio.run(_recover(backend, stored))


# --- (c) after a chunk receipt, before mark_sent -----------------------------------------------------------


async def _deliver_the_rest(backend: BackendUnderTest, outbox_id: int) -> None:
    adapter = RecordingAdapter(split="§")
    async with backend.open() as storage:
        loop = DeliveryLoop(
            outbox=storage.outbox,
            adapters={"test": adapter},
            signals=Signals(),
            settings=DeliverySettings(),
        )
        async with loop:
            await wait_until(lambda: loop.sent == 1, within_s=_DEADLINE_S, what="the reply to be delivered")
        (row,) = await storage.outbox.for_conversation("cv")
    assert adapter.texts() == ["two", "three"], "chunk 0 reached the platform before the crash"
    assert (row.id, row.state, row.chunks_sent) == (outbox_id, "sent", 3)


def test_a_reply_cut_off_after_a_chunk_resumes_at_the_next_chunk(backend: BackendUnderTest) -> None:
    with _killed(send_first_chunk_then_die, backend) as outbox_id:
        asyncio.run(_deliver_the_rest(backend, outbox_id))
