"""The schedules port on every backend: a due schedule fires each occurrence once, into its conversation's
queue as a job that carries its message and is never joined by later messages; a run's task and delivery
are reported apart (a delivery retry or re-send never touches the task); a target that is gone pauses the
schedule; missed runs are caught up once or skipped; limits hold; two processes firing together never fire
one occurrence twice."""

from __future__ import annotations

import asyncio
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.schedules import ScheduleRules, ScheduleSettings
from gateway.storage.outbox import ChunkReceipt
from gateway.storage.queue import JobReply, TurnRequest
from gateway.storage.schedules import NewSchedule, ScheduleAction, ScheduleKind, ScheduleTarget

from .backends import BackendUnderTest, open_storage
from .test_queue import LONG, chat, claim_one, transcript
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

T0 = 2_000_000_000.0  # the instants these schedules are due at (2033), passed to fire_due as "now"
RULES = ScheduleRules(ScheduleSettings())
_DEADLINE_S = 60.0


async def live_conversation(storage: Storage, name: str = "ada") -> ScheduleTarget:
    """A conversation with one answered (and delivered) message from ``name`` (a known person), idle."""
    person = await storage.identity.ensure_account("test", name, name.title())
    actor = Actor(person, platform="test", account_id=name)
    request = TurnRequest(
        actor=actor,
        event_id=f"hello-{name}",
        session_key=f"test:dm-{name}",
        principal=Principal.of(actor, chat_id=f"dm-{name}"),
        chat_ref=chat(f"dm-{name}"),
        reply_to=f"hello-{name}",
        message=NewMessage(role="user", content="hello", author=person),
    )
    queued = await storage.queue.enqueue(request, QUEUE_WHEN_BUSY)
    job = await claim_one(storage.queue, "w0")
    reply = NewMessage(role="assistant", content="hi!", author="mnemogate")
    assert await storage.queue.finish(job.id, "w0", state="done", reply=JobReply("hi!", append=reply))
    for item in await storage.outbox.claim(["test"], "d0", claim_s=LONG, limit=100):
        await storage.outbox.mark_sent(item.id, ChunkReceipt(0, f"greeting-{name}"))
    target = await storage.schedules.target(queued.conversation_id or "")
    assert target is not None
    return target


def schedule(
    target: ScheduleTarget,
    *,
    at: float = T0,
    kind: ScheduleKind = "once",
    spec: str | None = None,
    action: ScheduleAction = "message",
    text: str = "⏰ stretch",
) -> NewSchedule:
    return NewSchedule(target, kind, spec or repr(at), "UTC", action, text, at, created_by="test")


async def test_a_schedule_is_kept_listed_counted_and_limited_per_person(storage: Storage) -> None:
    ada, bob = await live_conversation(storage, "ada"), await live_conversation(storage, "bob")
    schedules = storage.schedules
    first = await schedules.create(schedule(ada, at=T0 + 60), max_per_person=2)
    second = await schedules.create(schedule(ada, at=T0), max_per_person=2)
    assert first is not None and second is not None
    assert await schedules.create(schedule(ada), max_per_person=2) is None  # the limit holds
    assert await schedules.create(schedule(bob), max_per_person=2) is not None  # per person
    assert (first.state, first.next_run_at, first.runs, first.person_id) == (
        "active",
        T0 + 60,
        0,
        ada.person_id,
    )
    assert await schedules.get(first.id) == first
    listed = await schedules.find(person_id=ada.person_id)
    assert [s.id for s in listed] == [second.id, first.id]  # soonest first
    assert await schedules.count(person_id=ada.person_id) == 2
    cancelled = await schedules.cancel(first.id, by="its person", person_id=bob.person_id)
    assert cancelled is None  # not bob's
    cancelled = await schedules.cancel(first.id, by="its person", person_id=ada.person_id)
    assert cancelled is not None and (cancelled.state, cancelled.reason) == (
        "cancelled",
        "cancelled by its person",
    )
    assert await schedules.cancel(first.id, by="again") is None
    assert await schedules.create(schedule(ada), max_per_person=2) is not None  # room again


async def test_the_target_is_where_the_conversation_was_last_answered(storage: Storage) -> None:
    ada = await live_conversation(storage)
    assert (ada.platform, ada.chat_ref, ada.ended) == ("test", chat("dm-ada"), False)
    assert await storage.schedules.target("no-such-conversation") is None
    await storage.agent.end_conversation(ada.conversation_id, "new")
    ended = await storage.schedules.target(ada.conversation_id)
    assert ended is not None and ended.ended


async def test_a_due_message_fires_once_and_its_job_answers_with_it(storage: Storage) -> None:
    ada = await live_conversation(storage)
    created = await storage.schedules.create(schedule(ada), max_per_person=10)
    assert created is not None
    assert await storage.schedules.next_due_at() == T0
    assert await storage.schedules.fire_due(T0 - 1, RULES, limit=10) == []
    (fired,) = await storage.schedules.fire_due(T0, RULES, limit=10)
    assert (fired.schedule_id, fired.outcome, fired.occurrence_at) == (created.id, "fired", T0)
    assert await storage.schedules.fire_due(T0 + 5, RULES, limit=10) == []  # once
    done = await storage.schedules.get(created.id)
    assert done is not None and (done.state, done.runs, done.next_run_at) == ("done", 1, None)
    assert await storage.schedules.next_due_at() is None
    assert await transcript(storage, ada.conversation_id) == [("user", "hello"), ("assistant", "hi!")]
    job = await claim_one(storage.queue, "w1")
    assert job.id == fired.job_id and job.actor.person_id == ada.person_id and job.chat_ref == ada.chat_ref
    assert job.tail is not None and (job.tail.role, job.tail.content, job.tail.queued) == (
        "assistant",
        "⏰ stretch",
        False,
    )
    (run,) = await storage.schedules.runs(schedule_id=created.id)
    assert (run.job_id, run.task, run.delivery, run.catch_up) == (job.id, "running", "none", False)


async def test_a_run_reports_its_task_and_its_delivery_apart(storage: Storage) -> None:
    ada = await live_conversation(storage)
    await storage.schedules.create(schedule(ada), max_per_person=10)
    await storage.schedules.fire_due(T0, RULES, limit=10)
    job = await claim_one(storage.queue, "w1")
    reply = JobReply("⏰ stretch", message_id=job.tail.message_id if job.tail else None)
    assert await storage.queue.finish(job.id, "w1", state="done", reply=reply)

    async def status() -> tuple[str, str, int, str | None]:
        (run,) = await storage.schedules.runs()
        return run.task, run.delivery, run.delivery_attempts, run.output

    assert await status() == ("ran", "pending", 0, "⏰ stretch")
    outbox = storage.outbox
    (item,) = await outbox.claim(["test"], "d1", claim_s=LONG, limit=5)
    assert (await status())[:2] == ("ran", "sending")
    await outbox.note_attempt(item.id, "502 Bad Gateway", claim_s=0.0)
    assert await status() == ("ran", "retrying", 1, "⏰ stretch")
    await outbox.mark_failed(item.id, "gave up after 5 attempts")
    assert await status() == ("ran", "gave_up", 1, "⏰ stretch")  # the output is kept for a re-send
    (run,) = await storage.schedules.runs()
    assert await storage.schedules.resend(run.id)
    assert not await storage.schedules.resend(run.id)  # nothing gave up any more
    assert await status() == ("ran", "pending", 0, "⏰ stretch")
    (again,) = await outbox.claim(["test"], "d2", claim_s=LONG, limit=5)
    assert again.id == item.id and again.text == "⏰ stretch"
    await outbox.mark_sent(again.id, ChunkReceipt(0, "m-1"))
    assert (await status())[:2] == ("ran", "sent")
    assert [j.state for j in await storage.queue.jobs(ada.conversation_id)] == ["done", "done"]  # ran once
    assert await outbox.prune_delivered(older_than_s=-1.0, limit=10) == 2  # with the greeting
    assert (await status())[:2] == ("ran", "sent")  # a pruned row was delivered


async def test_a_message_after_a_scheduled_run_waits_for_a_turn_of_its_own(storage: Storage) -> None:
    ada = await live_conversation(storage)
    await storage.schedules.create(schedule(ada), max_per_person=10)
    (fired,) = await storage.schedules.fire_due(T0, RULES, limit=10)
    actor = Actor(ada.person_id, platform="test", account_id="ada")
    later = TurnRequest(
        actor=actor,
        event_id="after",
        session_key="test:dm-ada",
        principal=Principal.of(actor, chat_id="dm-ada"),
        chat_ref=ada.chat_ref,
        reply_to="after",
        message=NewMessage(role="user", content="thanks, done", author=ada.person_id),
    )
    queued = await storage.queue.enqueue(later, QUEUE_WHEN_BUSY)
    assert not queued.coalesced and queued.job_id != fired.job_id
    scheduled = await claim_one(storage.queue, "w1")
    assert scheduled.id == fired.job_id and scheduled.tail is not None and scheduled.tail.role == "assistant"
    reply = JobReply("⏰ stretch", message_id=scheduled.tail.message_id)
    await storage.queue.finish(scheduled.id, "w1", state="done", reply=reply)
    answer = await claim_one(storage.queue, "w1")
    assert answer.id == queued.job_id and answer.tail is not None and answer.tail.content == "thanks, done"
    assert (await transcript(storage, ada.conversation_id))[-2:] == [
        ("assistant", "⏰ stretch"),
        ("user", "thanks, done"),
    ]


async def test_a_prompt_runs_as_a_user_message_with_its_request_bytes(storage: Storage) -> None:
    ada = await live_conversation(storage)
    created = await storage.schedules.create(
        schedule(ada, action="prompt", text="summarise our week"), max_per_person=10
    )
    assert created is not None
    await storage.schedules.fire_due(T0, RULES, limit=10)
    job = await claim_one(storage.queue, "w1")
    assert job.tail is not None and (job.tail.role, job.tail.content) == ("user", "⏰ summarise our week")
    said = (await storage.agent.conversation_messages(ada.conversation_id))[-1]
    assert said.author == f"schedule:{created.id}"
    assert said.api_content is not None and said.api_content.startswith(f"[Scheduled task #{created.id} ")
    assert said.api_content.endswith("\nsummarise our week")


async def test_a_schedule_whose_target_is_gone_is_paused_with_the_reason(storage: Storage) -> None:
    ada, bob = await live_conversation(storage, "ada"), await live_conversation(storage, "bob")
    ghost = ScheduleTarget(bob.conversation_id, "p-erased", bob.platform, bob.chat_ref)
    ended = await storage.schedules.create(schedule(ada), max_per_person=10)
    erased = await storage.schedules.create(schedule(ghost), max_per_person=10)
    assert ended is not None and erased is not None
    await storage.agent.end_conversation(ada.conversation_id, "new")
    fired = await storage.schedules.fire_due(T0, RULES, limit=10)
    assert sorted(run.outcome for run in fired) == ["paused", "paused"]
    assert all(run.job_id is None for run in fired)
    for record_id, reason in ((ended.id, "has ended"), (erased.id, "was erased")):
        paused = await storage.schedules.get(record_id)
        assert paused is not None and paused.state == "paused" and reason in (paused.reason or "")
    assert await storage.schedules.fire_due(T0 + 60, RULES, limit=10) == []
    assert len(await storage.queue.jobs()) == 2  # the two greetings, nothing scheduled


async def test_missed_runs_are_caught_up_once_or_skipped(storage: Storage) -> None:
    ada = await live_conversation(storage)
    every_minute = schedule(ada, kind="interval", spec="60.0")
    caught = await storage.schedules.create(every_minute, max_per_person=10)
    one_shot = await storage.schedules.create(schedule(ada), max_per_person=10)
    assert caught is not None and one_shot is not None
    late = T0 + 630.0  # 11 runs were due (T0 … T0+600); the latest is 30 s late, within the grace
    fired = {run.schedule_id: run for run in await storage.schedules.fire_due(late, RULES, limit=10)}
    assert fired[caught.id].occurrence_at == T0 + 600 and fired[one_shot.id].occurrence_at == T0
    runs = {run.schedule_id: run for run in await storage.schedules.runs()}
    assert (runs[caught.id].catch_up, runs[caught.id].missed) == (False, 10)
    assert (runs[one_shot.id].catch_up, runs[one_shot.id].missed) == (True, 0)
    moved = await storage.schedules.get(caught.id)
    assert moved is not None and (moved.next_run_at, moved.runs, moved.missed) == (T0 + 660, 1, 10)
    skipping = ScheduleRules(ScheduleSettings(missed="skip"))
    await storage.schedules.cancel(caught.id, by="test")
    skipped = await storage.schedules.create(schedule(ada, at=T0 + 1000), max_per_person=10)
    assert skipped is not None
    (outcome,) = await storage.schedules.fire_due(T0 + 5000, skipping, limit=1)
    assert (outcome.schedule_id, outcome.outcome, outcome.job_id) == (skipped.id, "done", None)
    gone = await storage.schedules.get(skipped.id)
    assert gone is not None and gone.state == "done" and gone.runs == 0 and gone.missed == 1
    assert gone.reason == "missed while the gateway was not running"


async def test_cancelling_drops_runs_that_have_not_started(storage: Storage) -> None:
    ada = await live_conversation(storage)
    created = await storage.schedules.create(schedule(ada, kind="interval", spec="3600.0"), max_per_person=10)
    assert created is not None
    (fired,) = await storage.schedules.fire_due(T0, RULES, limit=10)
    assert await storage.schedules.cancel(created.id, by="admin:test") is not None
    job = next(j for j in await storage.queue.jobs() if j.id == fired.job_id)
    assert (job.state, job.error) == ("failed", "cancelled")
    assert await storage.queue.claim("w1", lease_s=LONG, limit=5, max_attempts=3) == []
    (run,) = await storage.schedules.runs(schedule_id=created.id)
    assert (run.task, run.delivery) == ("stopped", "none")
    assert await storage.schedules.fire_due(T0 + 3600, RULES, limit=10) == []


async def test_a_person_time_zone_is_kept_until_forgotten(storage: Storage) -> None:
    schedules = storage.schedules
    assert await schedules.timezone_of("p-ada") is None
    await schedules.set_timezone("p-ada", "Europe/Berlin")
    await schedules.set_timezone("p-ada", "America/New_York")
    assert await schedules.timezone_of("p-ada") == "America/New_York"
    await schedules.set_timezone("p-ada", None)
    assert await schedules.timezone_of("p-ada") is None


def fire_until_empty(spec: str, now: float, barrier: Barrier, out: Queue[list[int]]) -> None:
    """Multiprocessing target: fire (a few schedules per call) until nothing is due; put the run ids."""

    async def run() -> list[int]:
        fired: list[int] = []
        async with open_storage(spec) as storage:
            barrier.wait(timeout=_DEADLINE_S)
            while runs := await storage.schedules.fire_due(now, RULES, limit=3):
                fired.extend(r.run_id for r in runs if r.run_id is not None)
        return fired

    out.put(asyncio.run(run()))


async def _seed(backend: BackendUnderTest, count: int) -> list[int]:
    async with backend.open() as storage:
        targets = [await live_conversation(storage, f"u{n}") for n in range(4)]
        for n in range(count):
            await storage.schedules.create(schedule(targets[n % 4], at=T0 + n), max_per_person=count)
        return [s.id for s in await storage.schedules.find()]


def test_two_processes_firing_together_fire_each_occurrence_once(backend: BackendUnderTest) -> None:
    ids = asyncio.run(_seed(backend, 40))
    first, second = run_together(fire_until_empty, [(backend.spec, T0 + 100)] * 2)
    assert not set(first) & set(second)

    async def outcome() -> tuple[list[int], int]:
        async with backend.open() as storage:
            runs = await storage.schedules.runs(limit=100)
            return sorted(r.schedule_id for r in runs), len(await storage.queue.jobs())

    scheduled, jobs = asyncio.run(outcome())
    assert scheduled == sorted(ids) and len(first) + len(second) == 40
    assert jobs == 4 + 40  # the greetings and one job per run
