"""The inbound ledger on every backend: an event is recorded once per platform, whether as a command, a
refusal or a turn, and two processes recording the same event together see exactly one success."""

from __future__ import annotations

import asyncio
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.queue import InboundLedger, TurnRequest

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0


def ledger(storage: Storage) -> InboundLedger:
    return storage.queue


def turn(event: str) -> TurnRequest:
    return TurnRequest(
        actor=Actor(person_id="p-ada", platform="test"),
        event_id=event,
        session_key="test:dm-ada",
        principal=Principal(person_id="p-ada", platform="test"),
        chat_ref="chat",
        reply_to=None,
        message=NewMessage(role="user", content="hello"),
    )


async def test_an_event_is_recorded_once(storage: Storage) -> None:
    events = ledger(storage)
    assert not await events.seen("test", "e1")
    assert await events.record_event("test", "e1", kind="command")
    assert await events.seen("test", "e1")
    assert not await events.record_event("test", "e1", kind="command")
    assert not await events.record_event("test", "e1", kind="denied")


async def test_event_ids_are_per_platform(storage: Storage) -> None:
    events = ledger(storage)
    assert await events.record_event("telegram", "42", kind="command")
    assert not await events.seen("discord", "42")
    assert await events.record_event("discord", "42", kind="command")


async def test_a_turn_and_a_command_share_one_ledger(storage: Storage) -> None:
    queue = storage.queue
    assert not (await queue.enqueue(turn("e1"), QUEUE_WHEN_BUSY)).duplicate
    assert await queue.seen("test", "e1")
    assert not await queue.record_event("test", "e1", kind="command")
    assert await queue.record_event("test", "e2", kind="command")
    refused = await queue.enqueue(turn("e2"), QUEUE_WHEN_BUSY)
    assert refused.duplicate and refused.conversation_id is None
    assert len(await queue.jobs()) == 1


async def test_a_recorded_event_survives_reopening(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        assert await ledger(storage).record_event("test", "e1", kind="command")
    async with backend.open() as storage:
        assert await ledger(storage).seen("test", "e1")
        assert not await ledger(storage).record_event("test", "e1", kind="command")


def record_together(spec: str, barrier: Barrier, out: Queue[list[bool]]) -> None:
    """Multiprocessing target: record the same 30 events as the other process; put which were new here."""

    async def run() -> list[bool]:
        async with open_storage(spec) as storage:
            events = ledger(storage)
            barrier.wait(timeout=_DEADLINE_S)
            return [await events.record_event("test", f"e{n}", kind="command") for n in range(30)]

    out.put(asyncio.run(run()))


def test_two_processes_recording_the_same_events_each_event_is_new_exactly_once(
    backend: BackendUnderTest,
) -> None:
    asyncio.run(_create(backend))
    first, second = run_together(record_together, [(backend.spec,)] * 2)
    assert [a != b for a, b in zip(first, second, strict=True)] == [True] * 30


async def _create(backend: BackendUnderTest) -> None:
    """Open once first so the two processes find a migrated database."""
    async with backend.open():
        return
