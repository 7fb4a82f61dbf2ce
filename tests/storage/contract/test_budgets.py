"""Budgets as every backend carries them out: a claim admits, holds back or refuses each job that would call
the model, a refused job is closed with ONE notice per limit and period, and processes claiming together
never overspend a budget by more than one turn's cost."""

from __future__ import annotations

import asyncio
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from agent_core.storage.records import ModelCall, NewMessage
from gateway.budgets import BudgetPolicy, BudgetSettings
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.budgets import BudgetGate
from gateway.storage.queue import ClaimedJob, JobReply, TurnQueueRepository

from .backends import BackendUnderTest, open_storage
from .test_queue import LONG, request
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0


def budget(**settings: object) -> BudgetPolicy:
    return BudgetPolicy(BudgetSettings.model_validate(settings))


async def claim(queue: TurnQueueRepository, gate: BudgetGate, holder: str = "w1") -> list[ClaimedJob]:
    return await queue.claim(holder, lease_s=LONG, limit=10, max_attempts=3, budget=gate)


async def spend(storage: Storage, job: ClaimedJob, usd: float, tokens: int = 100) -> None:
    """One model call of the job's turn, recorded as the turn loop records it."""
    conversation = await storage.agent.get_conversation(job.conversation_id)
    assert conversation is not None
    call = ModelCall(input_tokens=tokens, cost_usd=usd, model="scripted")
    await storage.agent.add_usage(conversation.tip_session_id, call)


async def turn(storage: Storage, job: ClaimedJob, usd: float, holder: str = "w1") -> None:
    await spend(storage, job, usd)
    reply = JobReply("ok", append=NewMessage(role="assistant", content="ok", author="mnemogate"))
    assert await storage.queue.finish(job.id, holder, state="done", reply=reply)


async def test_under_the_limit_a_job_is_claimed_as_usual(storage: Storage) -> None:
    queue = storage.queue
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    (job,) = await claim(queue, budget(person={"day_usd": 1.0}))
    assert job.actor.person_id == "p-ada"


async def test_at_the_limit_the_job_is_refused_once_with_a_notice_and_never_redelivered(
    storage: Storage,
) -> None:
    queue, gate = storage.queue, budget(person={"day_usd": 1.0})
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    (first,) = await claim(queue, gate)
    await turn(storage, first, 1.0)
    second = await queue.enqueue(request("more", event="e2"), QUEUE_WHEN_BUSY)
    third = await queue.enqueue(request("and more", event="e3", room="dm-ada-2"), QUEUE_WHEN_BUSY)
    assert await claim(queue, gate) == []
    jobs = {j.id: j for j in await queue.jobs()}
    for job_id in (second.job_id, third.job_id):
        assert job_id is not None
        assert (jobs[job_id].state, jobs[job_id].error) == ("done", "budget:person")
    assert await claim(queue, gate) == []  # closed for good: nothing to redeliver
    notices = [
        (row.kind, row.text)
        for conversation in (second.conversation_id, third.conversation_id)
        for row in await storage.outbox.for_conversation(conversation or "")
        if row.kind == "budget"
    ]
    assert len(notices) == 1, notices  # one notice for the period, not one per message
    assert "daily budget ($1.00)" in notices[0][1]
    (hold,) = await storage.budgets.holds(time.time(), "p-ada")
    assert (hold.scope_key, hold.limit) == ("person:p-ada", "day_usd") and hold.resets_at > time.time()
    assert await storage.budgets.holds(time.time(), "p-bob") == []
    assert await storage.budgets.holds(time.time()) == [hold]
    assert await storage.budgets.holds(hold.resets_at) == []  # over once the period ends
    assert (await storage.budgets.refusals())["person"] == 2


async def test_another_person_and_an_exempt_admin_still_run(storage: Storage) -> None:
    queue, gate = storage.queue, budget(person={"day_usd": 1.0})
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    (first,) = await claim(queue, gate)
    await turn(storage, first, 2.0)
    await queue.enqueue(request("hi", event="e2", person="bob", room="dm-bob"), QUEUE_WHEN_BUSY)
    await queue.enqueue(
        request("hi", event="e3", person="root", room="dm-root", is_admin=True), QUEUE_WHEN_BUSY
    )
    await queue.enqueue(request("hi", event="e4"), QUEUE_WHEN_BUSY)
    claimed = await claim(queue, gate)
    assert sorted(job.actor.person_id for job in claimed) == ["p-bob", "p-root"]


async def test_the_overall_limit_binds_everyone_and_spend_is_read_per_scope(storage: Storage) -> None:
    queue, gate = storage.queue, budget(overall={"day_usd": 1.5})
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    await queue.enqueue(request("hi", event="e2", person="bob", room="dm-bob"), QUEUE_WHEN_BUSY)
    ada, bob = sorted(
        await claim(queue, budget(overall={"day_usd": 1.5}, turn_estimate_usd=0.1)),
        key=lambda j: j.actor.person_id,
    )
    await turn(storage, ada, 1.0)
    await turn(storage, bob, 0.5)
    table = await storage.budgets.spending(gate.periods(time.time()))
    assert round(table.overall.day_usd, 6) == 1.5 and table.overall.day_tokens == 200
    assert (
        round(table.persons["p-ada"].month_usd, 6) == 1.0 and round(table.platforms["test"].day_usd, 6) == 1.5
    )
    await queue.enqueue(request("hi", event="e3", person="cy", room="dm-cy"), QUEUE_WHEN_BUSY)
    assert await claim(queue, gate) == []
    assert (await storage.budgets.refusals()) == {"overall": 1}


async def test_near_the_limit_a_second_turn_waits_for_the_first(storage: Storage) -> None:
    queue, gate = storage.queue, budget(person={"day_usd": 1.0})
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    (first,) = await claim(queue, gate)
    await turn(storage, first, 0.4)  # a measured turn: 0.4
    await queue.enqueue(request("a", event="e2"), QUEUE_WHEN_BUSY)
    await queue.enqueue(request("b", event="e3", room="dm-ada-2"), QUEUE_WHEN_BUSY)
    (running,) = await claim(queue, gate)  # 0.4 + 2 × 0.4 reaches 1.0: one at a time
    assert await claim(queue, gate) == []
    assert [j.state for j in await queue.jobs()].count("queued") == 1
    await turn(storage, running, 0.4)
    (last,) = await claim(queue, gate)  # 0.8 spent, nothing in flight: it may run
    await turn(storage, last, 0.4)
    assert [j.state for j in await queue.jobs()] == ["done", "done", "done"]


async def test_a_scheduled_fixed_message_is_delivered_over_budget(storage: Storage) -> None:
    """A job that answers with a stored assistant message makes no model call, so no budget stops it."""
    queue, gate = storage.queue, budget(person={"day_usd": 1.0})
    await queue.enqueue(request("hi", event="e1"), QUEUE_WHEN_BUSY)
    (first,) = await claim(queue, gate)
    await spend(storage, first, 1.0)
    # The previous run stored its reply and died before queuing it: the tip ends with that answer.
    await storage.agent.append_messages(
        (await storage.agent.get_conversation(first.conversation_id)).tip_session_id,  # type: ignore[union-attr]
        [NewMessage(role="assistant", content="stored", author="mnemogate")],
    )
    assert await queue.release("w1", [first.id]) == 1
    (again,) = await claim(queue, gate)
    assert again.id == first.id and again.tail is not None and again.tail.content == "stored"


# -- processes claiming together ----------------------------------------------------------------------

_LIMIT_USD = 1.0
_TURN_USD = 0.3
_CONVERSATIONS = 16


def run_turns_until_done(spec: str, holder: str, barrier: Barrier, out: Queue[int]) -> None:
    """Multiprocessing target: claim with the budget and run each claimed turn (two model calls) until
    every job is closed; put how many turns it ran."""

    async def run() -> int:
        ran = 0
        gate = budget(person={"day_usd": _LIMIT_USD})
        async with open_storage(spec) as storage:
            queue = storage.queue
            barrier.wait(timeout=_DEADLINE_S)
            deadline = time.monotonic() + _DEADLINE_S
            while time.monotonic() < deadline:
                jobs = await queue.claim(holder, lease_s=LONG, limit=2, max_attempts=3, budget=gate)
                for job in jobs:
                    await spend(storage, job, _TURN_USD / 2)
                    await asyncio.sleep(0.005)  # the model's latency between the turn's two calls
                    await turn(storage, job, _TURN_USD / 2, holder)
                    ran += 1
                if not jobs:
                    states = [j.state for j in await queue.jobs()]
                    if "queued" not in states and "running" not in states:
                        return ran
                    await asyncio.sleep(0.005)  # others' turns in flight: look again shortly
        raise TimeoutError("jobs still open after the deadline")

    out.put(asyncio.run(run()))


async def _seed(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        for n in range(_CONVERSATIONS):
            await storage.queue.enqueue(
                request(f"hi {n}", event=f"e{n}", room=f"dm-ada-{n}"), QUEUE_WHEN_BUSY
            )


async def _outcome(backend: BackendUnderTest) -> tuple[float, list[str | None], int]:
    async with backend.open() as storage:
        gate = budget(person={"day_usd": _LIMIT_USD})
        table = await storage.budgets.spending(gate.periods(time.time()))
        errors = [j.error for j in await storage.queue.jobs()]
        notices = 0
        for conversation in {job.conversation_id for job in await storage.queue.jobs()}:
            rows = await storage.outbox.for_conversation(conversation)
            notices += sum(row.kind == "budget" for row in rows)
        return table.persons["p-ada"].day_usd, errors, notices


def test_processes_claiming_together_overspend_by_at_most_one_turn(backend: BackendUnderTest) -> None:
    asyncio.run(_seed(backend))
    ran = run_together(run_turns_until_done, [(backend.spec, f"w{n}") for n in range(4)])
    spent, errors, notices = asyncio.run(_outcome(backend))
    assert _LIMIT_USD <= spent <= _LIMIT_USD + _TURN_USD + 1e-9, spent
    assert sum(ran) == round(spent / _TURN_USD)
    assert errors.count("budget:person") == _CONVERSATIONS - sum(ran)
    assert notices == 1
