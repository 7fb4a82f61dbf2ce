"""The durable turn queue in one process: one turn per event, coalescing, busy policies, /stop, failures."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_core.llm import LLMError, LLMRequest
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from agent_core.storage.errors import StateUnavailableError
from gateway.contracts import ChatKind, InboundMessage
from gateway.inbound.session_rules import session_key_for
from gateway.queue import ERROR_REPLY, INTERRUPT_WHEN_BUSY, QUEUE_WHEN_BUSY, TurnQueue

from ..delivery.recording_adapter import dm
from .clients import PacedClient
from .harness import backbone, echo_step, open_config


async def test_a_message_is_answered_once(home: Path) -> None:
    async with backbone(home) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        assert await b.wait_sent(1) == ["echo: hello"]
        assert b.adapter.sent[0].reply_to_message_id == "e1"


async def test_the_same_event_delivered_twice_gives_one_turn_and_one_reply(home: Path) -> None:
    async with backbone(home) as b:
        message = dm("hello", event="e1")
        await asyncio.gather(b.gateway.pipeline.handle(message), b.gateway.pipeline.handle(message))
        await b.gateway.pipeline.handle(message)
        await b.wait_sent(1)
        await b.gateway.pipeline.handle(message)  # a platform retry after the reply went out
        await b.wait_for(lambda: b.pool is not None and b.pool.in_flight == 0)
        jobs = await b.jobs()
        assert len(jobs) == 1
        live = await b.runtime.storage.agent.live_conversation("test:-:dm:dm%2Dada:-:-")
        assert live is not None
        roles = [m.role for m in await b.runtime.storage.agent.conversation_messages(live.id)]
        assert roles == ["user", "assistant"]
        assert b.adapter.texts() == ["echo: hello"]


async def test_queue_policy_coalesces_messages_sent_during_a_turn_with_one_ack(home: Path) -> None:
    gate = asyncio.Event()
    client = PacedClient(gate=gate)
    async with backbone(home, client=client) as b:
        await b.gateway.pipeline.handle(dm("first", event="e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        for n in (2, 3, 4):
            await b.gateway.pipeline.handle(dm(f"more {n}", event=f"e{n}"))
        assert await b.wait_sent(1) == [QUEUE_WHEN_BUSY.ack_text]
        gate.set()
        sent = await b.wait_sent(3)
        assert sent == [QUEUE_WHEN_BUSY.ack_text, "echo: first", "echo: more 2 | more 3 | more 4"]
        states = [(job.state, job.error) for job in await b.jobs()]
        assert states == [("done", None), ("done", None)]


async def test_interrupt_policy_cancels_the_running_turn_and_answers_everything(home: Path) -> None:
    client = PacedClient(deltas=500)
    config = open_config(queue={"busy_policy": "interrupt"})
    async with backbone(home, client=client, config=config) as b:
        await b.gateway.pipeline.handle(dm("write an essay", event="e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        await b.gateway.pipeline.handle(dm("actually, a haiku", event="e2"))
        sent = await b.wait_sent(2, timeout=8)
        assert sent == [INTERRUPT_WHEN_BUSY.ack_text, "echo: write an essay | actually, a haiku"]
        jobs = await b.jobs()
        assert [job.error for job in jobs] == ["interrupted", None]


async def test_stop_cancels_the_running_turn_and_queued_messages(home: Path) -> None:
    client = PacedClient(deltas=500)
    async with backbone(home, client=client) as b:
        await b.gateway.pipeline.handle(dm("long task", event="e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        await b.gateway.pipeline.handle(dm("and this", event="e2"))
        await b.gateway.pipeline.handle(dm("/stop", event="e3"))
        await b.wait_for(lambda: b.pool is not None and b.pool.in_flight == 0)
        await b.wait_sent(2)
        assert b.adapter.texts() == [QUEUE_WHEN_BUSY.ack_text, "Stopped."]
        assert [(job.state, job.error) for job in await b.jobs()] == [
            ("done", "stopped"),
            ("failed", "stopped"),
        ]
        await b.gateway.pipeline.handle(dm("new question", event="e4"))
        assert (await b.wait_sent(3))[-1] == "echo: new question"


async def test_a_failing_model_gives_a_clear_error_reply_and_a_valid_transcript(home: Path) -> None:
    client = ScriptedClient(default=ScriptStep.fail(LLMError("the provider is down")))
    async with backbone(home, client=client) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        (reply,) = await b.wait_sent(1)
        assert "couldn't get an answer" in reply and "the provider is down" in reply
        (job,) = await b.jobs()
        assert job.state == "failed"
        conversation = job.conversation_id
        messages = await b.runtime.storage.agent.conversation_messages(conversation)
        assert [m.role for m in messages] == ["user", "assistant"]
        assert messages[1].content == reply


async def test_a_crashing_turn_still_answers_with_an_error(home: Path) -> None:
    def explode(request: object) -> ScriptStep:
        raise RuntimeError("bug in a tool")

    async with backbone(home, client=ScriptedClient(default=explode)) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        assert await b.wait_sent(1) == [ERROR_REPLY]
        (job,) = await b.jobs()
        roles = [m.role for m in await b.runtime.storage.agent.conversation_messages(job.conversation_id)]
        assert roles == ["user", "assistant"]


async def test_drain_hands_unfinished_turns_back_and_releases_leases(home: Path) -> None:
    gate = asyncio.Event()
    client = PacedClient(gate=gate)
    async with backbone(home, client=client) as b:
        assert b.pool is not None
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        assert await b.pool.drain(grace_s=0.05) == 1
        (job,) = await b.jobs()
        assert job.state == "queued" and job.holder is None
        assert await b.queue.leases() == []
        gate.set()
        async with backbone(home, client=ScriptedClient(default=ScriptStep.reply("answered"))) as again:
            assert await again.wait_sent(1) == ["answered"]
        assert b.adapter.sent == []


async def test_a_job_whose_worker_died_is_reclaimed_after_its_lease_expires(home: Path) -> None:
    async with backbone(home, workers=False) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        # A worker that claimed the job and died: its lease is already over.
        claimed = await b.queue.claim("dead-worker", lease_s=-1.0, limit=1, max_attempts=3)
        assert len(claimed) == 1
    async with backbone(home) as b:
        assert await b.wait_sent(1) == ["echo: hello"]
        (job,) = await b.jobs()
        assert job.state == "done" and job.attempts == 2


async def test_idle_reset_ends_a_quiet_conversation_before_the_next_message(home: Path) -> None:
    config = open_config(sessions={"platforms": {"test": {"reset": "idle", "idle_minutes": 30}}})
    async with backbone(home, config=config) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        await b.wait_sent(1)
        first = (await b.jobs())[0].conversation_id
        await b.gateway.pipeline.handle(dm("still here", event="e1b"))
        await b.wait_sent(2)
        assert (await b.jobs())[1].conversation_id == first  # within the window: same conversation
        # The idle window passes (a queue whose window is already over), then the user writes again.
        sessions = b.runtime.settings.sessions
        queue = TurnQueue(b.runtime.storage.queue, b.runtime.signals, QUEUE_WHEN_BUSY, lambda _: 0.0)
        again = dm("again", event="e2")
        person = await b.gateway.access.accounts.person_for(again.sender)
        result = await queue.enqueue(again, session_key_for(again, sessions), person)
        assert result.ended_idle_conversation == first
        await b.wait_sent(3)
        second = (await b.jobs())[2].conversation_id
        assert second != first
        ended = await b.runtime.storage.agent.get_conversation(first)
        assert ended is not None and ended.end_reason == "idle"
        assert b.adapter.texts()[2] == "echo: again"


async def test_a_shared_thread_answers_each_sender_in_their_own_turn(home: Path) -> None:
    """Two people in one thread: a turn never answers one person's message with another's rights."""
    gate = asyncio.Event()
    client = PacedClient(gate=gate)
    async with backbone(home, client=client) as b:

        def said(text: str, user: str, event: str) -> InboundMessage:
            return dm(text, user=user, event=event, chat_id="room", kind=ChatKind.THREAD, thread_id="t1")

        await b.gateway.pipeline.handle(said("first", "ada", "e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        await b.gateway.pipeline.handle(said("from bob", "bob", "e2"))
        await b.gateway.pipeline.handle(said("more from ada", "ada", "e3"))
        await b.gateway.pipeline.handle(said("bob again", "bob", "e4"))
        gate.set()
        await b.wait_for(lambda: len(client.calls) == 4 and b.pool is not None and b.pool.in_flight == 0)
        assert client.calls == [["first"], ["from bob"], ["more from ada"], ["bob again"]]
        await b.wait_for(lambda: sum(t.startswith("echo:") for t in b.adapter.texts()) == 4)
        replies = [text for text in b.adapter.texts() if text.startswith("echo:")]
        assert replies == ["echo: first", "echo: from bob", "echo: more from ada", "echo: bob again"]


async def test_a_turn_whose_database_went_away_is_answered_once_it_is_back_not_with_an_error(
    home: Path,
) -> None:
    """A connection dropped in the middle of a turn's write: no error reply; the job's lease runs out and
    the turn runs again, answering once."""
    steps = iter([None])

    def database_away_once(request: LLMRequest) -> ScriptStep:
        if next(steps, "again") is None:
            raise StateUnavailableError(
                home / "state.db", "terminating connection due to administrator command"
            )
        return echo_step(request)

    config = open_config(queue={"lease_s": 0.3})
    async with backbone(home, client=ScriptedClient(default=database_away_once), config=config) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        assert await b.wait_sent(1) == ["echo: hello"]
        (job,) = await b.jobs()
        assert (job.state, job.attempts) == ("done", 2)
        roles = [m.role for m in await b.runtime.storage.agent.conversation_messages(job.conversation_id)]
        assert roles == ["user", "assistant"]
