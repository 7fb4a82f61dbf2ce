"""Messages of one chat pass the pipeline in arrival order; a slow command does not hold the chat up."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gateway.access import RateLimiter
from gateway.contracts import ChatKind, ChatRef
from gateway.inbound import ChatOrder, Command, CommandCall, CommandTable, InboundPipeline

from ..delivery.recording_adapter import dm
from ..queue.harness import backbone

CHAT = ChatRef("test", "c1", ChatKind.GROUP)


async def test_hand_offs_of_one_chat_leave_in_the_order_they_entered() -> None:
    order, left = ChatOrder(), []

    async def hand_off(n: int, chat: ChatRef) -> None:
        async with order.turn(chat):
            await asyncio.sleep(0.001 * (5 - n % 5))  # later ones would finish first without the order
            left.append((chat.chat_id, n))

    other = ChatRef("test", "c2", ChatKind.GROUP)
    await asyncio.gather(*(hand_off(n, CHAT) for n in range(10)), *(hand_off(n, other) for n in range(3)))
    assert [n for chat_id, n in left if chat_id == "c1"] == list(range(10))
    assert [n for chat_id, n in left if chat_id == "c2"] == list(range(3))
    assert len(order) == 0  # an idle chat holds nothing


async def test_a_cancelled_hand_off_releases_its_chat() -> None:
    order, inside = ChatOrder(), asyncio.Event()

    async def stuck() -> None:
        async with order.turn(CHAT):
            inside.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(stuck())
    await inside.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    async with asyncio.timeout(5), order.turn(CHAT):
        assert len(order) == 1
    assert len(order) == 0


async def test_messages_of_one_chat_are_stored_in_the_order_they_arrived(home: Path) -> None:
    async with backbone(home, workers=False) as b:
        burst = [dm(f"part {n}", event=f"e{n}") for n in range(8)]
        await asyncio.gather(*(b.gateway.pipeline.handle(message) for message in burst))
        (job,) = await b.jobs()  # no turn ran yet: the burst waits for one turn, in order
    async with backbone(home) as b:
        await b.wait_sent(1)
        messages = await b.runtime.storage.agent.conversation_messages(job.conversation_id)
        assert [m.content for m in messages if m.role == "user"] == [f"part {n}" for n in range(8)]
        assert b.adapter.texts() == ["echo: " + " | ".join(f"part {n}" for n in range(8))]


async def test_a_slow_command_does_not_hold_up_the_chats_next_messages(home: Path) -> None:
    release = asyncio.Event()

    async def slow(call: CommandCall) -> str:
        await release.wait()
        return "summarised"

    async with backbone(home) as b:
        table = CommandTable([Command("compress", "summarise now", slow, slow=True)])
        pipeline = InboundPipeline(
            queue=b.gateway.queue,
            outbox=b.gateway.outbox,
            access=b.gateway.access,
            limiter=RateLimiter(b.runtime.settings.rate_limit),
            commands=table,
            sessions=b.runtime.settings.sessions,
        )
        compressing = await asyncio.wait_for(pipeline.process(dm("/compress", event="e1")), 5)
        assert compressing.reason == "command"  # recorded: the adapter may acknowledge it now
        after = await asyncio.wait_for(pipeline.process(dm("still there?", event="e2")), 5)
        assert after.reason == "queued"
        assert "still there?" in (await b.wait_sent(1))[0]  # answered while the command still runs
        release.set()
        await pipeline.drain()
        assert "summarised" in await b.wait_sent(2)
