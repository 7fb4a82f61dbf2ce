"""The turn queue port on every backend: one event gives one job and one message, whatever the busy policy
decides is carried out exactly, claims take one job per conversation under a lease that expires, a lost
lease cannot finish, /stop drops what waits, and two processes claiming together never share a job."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage.agent_storage import AgentStorage
from agent_core.storage.records import NewMessage, Principal
from gateway.contracts import ChatKind, ChatRef
from gateway.queue import INTERRUPT_WHEN_BUSY, QUEUE_WHEN_BUSY
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.queue import (
    Admission,
    ClaimedJob,
    ConversationQueue,
    Interrupt,
    JobReply,
    Placement,
    QueueState,
    ReplyTarget,
    TurnQueueRepository,
    TurnRequest,
)

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0
LONG = 600.0


def chat(name: str) -> str:
    return chat_to_text(ChatRef("test", name, ChatKind.DM))


def request(
    text: str,
    *,
    event: str,
    person: str = "ada",
    room: str = "dm-ada",
    is_admin: bool = False,
    idle_after_s: float | None = None,
) -> TurnRequest:
    return TurnRequest(
        actor=Actor(person_id=f"p-{person}", is_admin=is_admin, platform="test", account_id=person),
        event_id=event,
        session_key=f"test:{room}",
        principal=Principal(person_id=f"p-{person}", platform="test", user_id=person, chat_id=room),
        chat_ref=chat(room),
        reply_to=event,
        message=NewMessage(role="user", content=text, author=f"p-{person}"),
        idle_after_s=idle_after_s,
    )


def repo(storage: Storage) -> TurnQueueRepository:
    return storage.queue


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def transcript(storage: Storage, conversation_id: str) -> list[tuple[str, str | None]]:
    return [(m.role, m.content) for m in await agent(storage).conversation_messages(conversation_id)]


async def claim_one(queue: TurnQueueRepository, holder: str, *, lease_s: float = LONG) -> ClaimedJob:
    (job,) = await queue.claim(holder, lease_s=lease_s, limit=10, max_attempts=3)
    return job


async def eventually(check: Callable[[], Awaitable[bool]], within_s: float = 10.0) -> None:
    """Poll ``check`` until it holds, failing after ``within_s`` (leases expire on the backend's clock)."""
    deadline = time.monotonic() + within_s
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not true within {within_s} s")
        await asyncio.sleep(0.02)


def reply(text: str) -> JobReply:
    return JobReply(text, append=NewMessage(role="assistant", content=text, author="mnemogate"))


async def test_an_event_gives_one_job_and_one_message_however_often_it_arrives(
    storage: Storage,
) -> None:
    queue = repo(storage)
    first = await queue.enqueue(request("hello", event="e1"), QUEUE_WHEN_BUSY)
    again = await queue.enqueue(request("hello", event="e1"), QUEUE_WHEN_BUSY)
    assert not first.duplicate and first.job_id is not None and first.conversation_id is not None
    assert again.duplicate and again.job_id is None
    assert [(j.id, j.state, j.attempts) for j in await queue.jobs()] == [(first.job_id, "queued", 0)]
    assert await transcript(storage, first.conversation_id) == [("user", "hello")]
    assert await queue.seen("test", "e1")


async def test_a_claim_runs_the_job_for_its_sender_and_replies_where_it_came_from(
    storage: Storage,
) -> None:
    queue = repo(storage)
    queued = await queue.enqueue(request("hi", event="e1", is_admin=True), QUEUE_WHEN_BUSY)
    assert await queue.running_target(queued.conversation_id or "") is None
    job = await claim_one(queue, "w1")
    assert job.id == queued.job_id and job.attempts == 1 and job.conversation_id == queued.conversation_id
    assert job.actor == Actor(
        person_id="p-ada", conversation_id=job.conversation_id, is_admin=True, platform="test"
    )
    assert (job.chat_ref, job.reply_to) == (chat("dm-ada"), "e1")
    assert job.tail is not None and (job.tail.role, job.tail.content) == ("user", "hi")
    assert await queue.running_target(job.conversation_id) == ReplyTarget(chat("dm-ada"), "e1")
    assert await queue.queue_state(job.conversation_id) == QueueState(running=1, queued=0)
    assert [(lease.conversation_id, lease.holder) for lease in await queue.leases()] == [
        (job.conversation_id, "w1")
    ]


async def test_finishing_queues_the_reply_and_closes_the_job_once(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "w1")
    assert await queue.finish(job.id, "w1", state="done", reply=reply("hello ada"))
    assert not await queue.finish(job.id, "w1", state="done", reply=reply("again"))
    (record,) = await queue.jobs(job.conversation_id)
    assert (record.state, record.error, record.finished_at is not None) == ("done", None, True)
    assert await queue.leases() == []
    assert await queue.running_target(job.conversation_id) is None
    rows = await storage.outbox.for_conversation(job.conversation_id)
    assert [(row.kind, row.text) for row in rows] == [("reply", "hello ada")]
    assert await transcript(storage, job.conversation_id) == [("user", "hi"), ("assistant", "hello ada")]
    assert await queue.claim("w2", lease_s=LONG, limit=10, max_attempts=3) == []


async def test_messages_sent_during_a_turn_wait_and_join_the_next_turn_in_order(
    storage: Storage,
) -> None:
    queue = repo(storage)
    await queue.enqueue(request("m1", event="e1"), QUEUE_WHEN_BUSY)
    running = await claim_one(queue, "w1")
    second = await queue.enqueue(request("m2", event="e2"), QUEUE_WHEN_BUSY)
    third = await queue.enqueue(request("m3", event="e3"), QUEUE_WHEN_BUSY)
    assert second.behind_running and not second.coalesced
    assert third.coalesced and third.job_id == second.job_id
    assert await transcript(storage, running.conversation_id) == [("user", "m1")]  # held, not in the tip
    assert await queue.queue_state(running.conversation_id) == QueueState(running=1, queued=1)
    assert await queue.claim("w2", lease_s=LONG, limit=10, max_attempts=3) == []  # the conversation is leased
    assert await queue.finish(running.id, "w1", state="done", reply=reply("r1"))
    following = await claim_one(queue, "w2")
    assert following.id == second.job_id
    assert following.tail is not None and following.tail.content == "m3"
    assert await transcript(storage, running.conversation_id) == [
        ("user", "m1"),
        ("assistant", "r1"),
        ("user", "m2"),
        ("user", "m3"),
    ]
    rows = await storage.outbox.for_conversation(running.conversation_id)
    assert [(row.kind, row.text) for row in rows] == [("ack", QUEUE_WHEN_BUSY.ack_text), ("reply", "r1")]


async def test_a_held_message_keeps_the_text_its_model_gets(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("m1", event="e1"), QUEUE_WHEN_BUSY)
    running = await claim_one(queue, "w1")
    held = request("m2", event="e2")
    with_context = replace(held, message=replace(held.message, api_content="m2 <client-context>…"))
    await queue.enqueue(with_context, QUEUE_WHEN_BUSY)
    assert await queue.finish(running.id, "w1", state="done", reply=reply("r1"))
    await claim_one(queue, "w2")
    said = (await agent(storage).conversation_messages(running.conversation_id))[-1]
    assert (said.content, said.api_content) == ("m2", "m2 <client-context>…")


async def test_another_sender_in_a_shared_conversation_waits_for_a_turn_of_their_own(
    storage: Storage,
) -> None:
    queue = repo(storage)
    await queue.enqueue(request("from ada", event="e1", room="thread"), QUEUE_WHEN_BUSY)
    first = await claim_one(queue, "w1")
    bob = await queue.enqueue(request("from bob", event="e2", person="bob", room="thread"), QUEUE_WHEN_BUSY)
    ada = await queue.enqueue(request("ada again", event="e3", room="thread"), QUEUE_WHEN_BUSY)
    assert bob.conversation_id == ada.conversation_id == first.conversation_id
    assert not ada.coalesced and ada.job_id != bob.job_id
    await queue.finish(first.id, "w1", state="done")
    for sender, job_id in (("p-bob", bob.job_id), ("p-ada", ada.job_id)):
        job = await claim_one(queue, "w1")
        assert (job.id, job.actor.person_id) == (job_id, sender)
        await queue.finish(job.id, "w1", state="done")


async def test_an_admission_is_carried_out_as_decided(storage: Storage) -> None:
    """The repository places the message where the rule says, even where the queue policy would not."""
    seen: list[ConversationQueue] = []

    class Always:
        def __init__(self, admission: Admission) -> None:
            self.admission = admission

        def admit(self, queue: ConversationQueue, actor: Actor) -> Admission:
            seen.append(queue)
            return self.admission

    queue = repo(storage)
    first = await queue.enqueue(request("m1", event="e1"), Always(Admission(Placement.WAIT)))
    assert first.conversation_id is not None
    assert await transcript(storage, first.conversation_id) == []  # held although nothing ran
    joined = await queue.enqueue(
        request("m2", event="e2"), Always(Admission(Placement.JOIN, join_job=first.job_id))
    )
    assert joined.coalesced and joined.job_id == first.job_id
    assert seen[0] == ConversationQueue(running=0, queued=0)
    assert seen[1].queued == 1 and seen[1].newest_queued is not None
    assert seen[1].newest_queued.id == first.job_id and seen[1].newest_queued.actor.person_id == "p-ada"
    job = await claim_one(queue, "w1")
    assert job.id == first.job_id
    assert await transcript(storage, first.conversation_id) == [("user", "m1"), ("user", "m2")]


async def test_the_interrupt_policy_flags_the_running_job_and_the_queue_policy_does_not(
    storage: Storage,
) -> None:
    queue = repo(storage)
    await queue.enqueue(request("essay", event="e1"), INTERRUPT_WHEN_BUSY)
    await queue.enqueue(request("other", event="f1", room="dm-bob", person="bob"), QUEUE_WHEN_BUSY)
    jobs = {
        job.actor.person_id: job for job in await queue.claim("w1", lease_s=LONG, limit=10, max_attempts=3)
    }
    assert await queue.interrupt(jobs["p-ada"].id) is Interrupt.NONE
    await queue.enqueue(request("haiku", event="e2"), INTERRUPT_WHEN_BUSY)
    await queue.enqueue(request("more", event="f2", room="dm-bob", person="bob"), QUEUE_WHEN_BUSY)
    assert await queue.interrupt(jobs["p-ada"].id) is Interrupt.NEWER
    assert await queue.interrupt(jobs["p-bob"].id) is Interrupt.NONE
    rows = await storage.outbox.for_conversation(jobs["p-ada"].conversation_id)
    assert [(row.kind, row.text) for row in rows] == [("ack", INTERRUPT_WHEN_BUSY.ack_text)]


async def test_stop_cancels_what_waits_flags_the_running_turn_and_drops_held_messages(
    storage: Storage,
) -> None:
    queue = repo(storage)
    await queue.enqueue(request("long task", event="e1"), QUEUE_WHEN_BUSY)
    running = await claim_one(queue, "w1")
    waiting = await queue.enqueue(request("and this", event="e2"), QUEUE_WHEN_BUSY)
    assert await queue.stop_live("test:nobody") is None
    assert await queue.stop_live("test:dm-ada") == QueueState(running=1, queued=1)
    assert await queue.interrupt(running.id) is Interrupt.STOP
    by_id = {job.id: job for job in await queue.jobs(running.conversation_id)}
    assert (by_id[waiting.job_id or 0].state, by_id[waiting.job_id or 0].error) == ("failed", "stopped")
    note = NewMessage(role="assistant", content="(stopped)", author="mnemogate")
    assert await queue.finish(running.id, "w1", state="done", error="stopped", note=note)
    assert await queue.stop(running.conversation_id) == QueueState(running=0, queued=0)
    assert await queue.claim("w1", lease_s=LONG, limit=10, max_attempts=3) == []
    fresh = await queue.enqueue(request("new question", event="e3"), QUEUE_WHEN_BUSY)
    assert not fresh.behind_running and fresh.conversation_id == running.conversation_id
    assert await transcript(storage, running.conversation_id) == [
        ("user", "long task"),
        ("assistant", "(stopped)"),
        ("user", "new question"),
    ]
    rows = await storage.outbox.for_conversation(running.conversation_id)
    assert [row.kind for row in rows] == ["ack"]  # the stopped turn sent nothing


async def test_a_claim_takes_the_oldest_job_of_each_conversation_up_to_the_limit(
    storage: Storage,
) -> None:
    queue = repo(storage)
    for n in range(3):
        await queue.enqueue(
            request(f"hi {n}", event=f"e{n}", room=f"dm-{n}", person=f"u{n}"), QUEUE_WHEN_BUSY
        )
    first = await queue.claim("w1", lease_s=LONG, limit=2, max_attempts=3)
    rest = await queue.claim("w2", lease_s=LONG, limit=5, max_attempts=3)
    assert [job.actor.person_id for job in first] == ["p-u0", "p-u1"]
    assert [job.actor.person_id for job in rest] == ["p-u2"]
    assert await queue.claim("w3", lease_s=LONG, limit=5, max_attempts=3) == []
    assert await queue.claim("w3", lease_s=LONG, limit=0, max_attempts=3) == []
    holders = {lease.conversation_id: lease.holder for lease in await queue.leases()}
    assert holders == {job.conversation_id: ("w1" if job in first else "w2") for job in first + rest}


async def test_an_expired_lease_returns_the_job_and_the_old_holder_can_no_longer_finish(
    storage: Storage,
) -> None:
    queue = repo(storage)
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    lost = await claim_one(queue, "dead", lease_s=0.2)
    taken: list[ClaimedJob] = []

    async def reclaimed() -> bool:
        taken.extend(await queue.claim("alive", lease_s=LONG, limit=1, max_attempts=3))
        return bool(taken)

    await eventually(reclaimed)
    (job,) = taken
    assert (job.id, job.attempts) == (lost.id, 2)
    assert await queue.renew("dead", [lost.conversation_id], lease_s=LONG) == [lost.conversation_id]
    assert not await queue.finish(lost.id, "dead", state="done", reply=reply("stale"))
    assert await queue.finish(job.id, "alive", state="done", reply=reply("fresh"))
    rows = await storage.outbox.for_conversation(job.conversation_id)
    assert [row.text for row in rows] == ["fresh"]


async def test_a_job_that_keeps_losing_its_worker_fails_with_one_notice(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("poison", event="e1"), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "dead", lease_s=0.2)

    async def failed() -> bool:
        assert await queue.claim("alive", lease_s=LONG, limit=1, max_attempts=1) == []
        (record,) = await queue.jobs()
        return record.state == "failed"

    await eventually(failed)
    (record,) = await queue.jobs()
    assert record.error == "worker lost" and await queue.leases() == []
    rows = await storage.outbox.for_conversation(job.conversation_id)
    assert [row.kind for row in rows] == ["error"]


async def test_renewing_extends_only_the_holders_own_leases(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "w1", lease_s=30.0)
    (before,) = await queue.leases()
    assert await queue.renew("w1", [job.conversation_id, "cv-unknown"], lease_s=300.0) == ["cv-unknown"]
    assert await queue.renew("w2", [job.conversation_id], lease_s=LONG) == [job.conversation_id]
    (after,) = await queue.leases()
    assert after.holder == "w1" and after.expires_at >= before.expires_at + 200


async def test_released_jobs_go_back_to_anyone_at_once(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "w1")
    assert await queue.release("w2", [job.id]) == 0  # not w2's to give back
    assert await queue.release("w1", [job.id]) == 1
    (record,) = await queue.jobs()
    assert (record.state, record.holder) == ("queued", None) and await queue.leases() == []
    again = await claim_one(queue, "w2")
    assert again.id == job.id and again.tail is not None and again.tail.content == "hi"


async def test_a_reclaimed_job_sees_the_reply_its_previous_run_stored(storage: Storage) -> None:
    queue = repo(storage)
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "w1")
    tip = await agent(storage).resolve_tip(job.conversation_id)
    stored = await agent(storage).append_message(tip.id, NewMessage(role="assistant", content="the answer"))
    await queue.release("w1", [job.id])  # the run died after storing its reply, before queuing it
    again = await claim_one(queue, "w2")
    assert again.tail is not None
    assert (again.tail.role, again.tail.message_id, again.tail.queued) == ("assistant", stored, False)
    assert not again.tail.has_tool_calls and again.tail.content == "the answer"


async def test_a_quiet_conversation_ends_before_the_next_message_unless_busy(storage: Storage) -> None:
    queue = repo(storage)
    first = await queue.enqueue(request("hello", event="e1", idle_after_s=0.0), QUEUE_WHEN_BUSY)
    job = await claim_one(queue, "w1")
    busy = await queue.enqueue(request("still here", event="e2", idle_after_s=0.0), QUEUE_WHEN_BUSY)
    assert busy.ended_idle is None and busy.conversation_id == first.conversation_id
    await queue.finish(job.id, "w1", state="done")
    await queue.finish((await claim_one(queue, "w1")).id, "w1", state="done")
    later = await queue.enqueue(request("again", event="e3", idle_after_s=0.0), QUEUE_WHEN_BUSY)
    assert later.ended_idle == first.conversation_id and later.conversation_id != first.conversation_id
    ended = await agent(storage).get_conversation(first.conversation_id or "")
    assert ended is not None and ended.end_reason == "idle"


def claim_until_empty(spec: str, holder: str, barrier: Barrier, out: Queue[list[int]]) -> None:
    """Multiprocessing target: claim (one job per call) until nothing is left; put the ids it got."""

    async def run() -> list[int]:
        claimed: list[int] = []
        async with open_storage(spec) as storage:
            queue = repo(storage)
            barrier.wait(timeout=_DEADLINE_S)
            while jobs := await queue.claim(holder, lease_s=LONG, limit=1, max_attempts=3):
                claimed.extend(job.id for job in jobs)
        return claimed

    out.put(asyncio.run(run()))


async def _seed(backend: BackendUnderTest, conversations: int) -> list[int]:
    async with backend.open() as storage:
        queue = repo(storage)
        for n in range(conversations):
            room = f"dm-{n}"
            await queue.enqueue(request(f"hi {n}", event=f"e{n}", room=room, person=f"u{n}"), QUEUE_WHEN_BUSY)
        return [job.id for job in await queue.jobs()]


def _race(backend: BackendUnderTest) -> tuple[list[int], list[int]]:
    first, second = run_together(claim_until_empty, [(backend.spec, f"p{n}") for n in range(2)])
    return first, second


def test_two_processes_claiming_one_job_together_exactly_one_wins(backend: BackendUnderTest) -> None:
    (job_id,) = asyncio.run(_seed(backend, 1))
    first, second = _race(backend)
    assert sorted(first + second) == [job_id]


def test_two_processes_claiming_together_never_share_a_job(backend: BackendUnderTest) -> None:
    ids = asyncio.run(_seed(backend, 40))
    first, second = _race(backend)
    assert not set(first) & set(second)
    assert sorted(first + second) == ids
