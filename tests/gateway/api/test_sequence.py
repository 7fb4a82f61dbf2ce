"""API requests of one conversation take turns; one that gives up never lets the next overtake."""

from __future__ import annotations

import asyncio

from gateway.api.sequence import ChatSequence


async def _settle() -> None:
    """Let every task that can run, run (a bounded number of event-loop turns, no wall-clock wait)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_slots_of_one_chat_are_held_one_at_a_time_in_arrival_order() -> None:
    sequence = ChatSequence()
    first = await sequence.enter("a", timeout=1)
    other_chat = await sequence.enter("b", timeout=1)  # another chat never waits for this one
    assert first is not None and other_chat is not None
    second = asyncio.create_task(sequence.enter("a", timeout=5))
    await _settle()
    assert not second.done() and sequence.waiting == 1
    first.release()
    slot = await asyncio.wait_for(second, 2)
    assert slot is not None
    slot.release()
    other_chat.release()
    assert len(sequence) == 0  # nothing kept for chats with no request


async def test_a_request_that_gives_up_keeps_the_order_for_the_ones_behind_it() -> None:
    sequence = ChatSequence()
    running = await sequence.enter("a", timeout=1)
    assert running is not None
    assert await sequence.enter("a", timeout=0.01) is None  # gave up waiting
    third = asyncio.create_task(sequence.enter("a", timeout=5))
    await _settle()
    assert not third.done()  # still behind the running request, not let through by the one that left
    assert sequence.waiting == 1
    running.release()
    slot = await asyncio.wait_for(third, 2)
    assert slot is not None
    slot.release()
    assert len(sequence) == 0
