"""Compression cooldowns on every backend: one record per conversation, and records that can no longer
matter (ended conversation, compressed segment, expired a day before a newer one) are forgotten, so they
stay few."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.storage import (
    FORGET_AFTER_S,
    AgentStorage,
    CompressionCooldown,
    NewMessage,
    NewSegment,
    Principal,
)

from .backends import BackendUnderTest

if TYPE_CHECKING:
    from gateway.storage import Storage

PERSON = Principal(person_id="p1", platform="web")


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


def cooldown(segment_id: str, until: float, *, notified: bool = False) -> CompressionCooldown:
    return CompressionCooldown(
        segment_id, until, after_message_id=7, turns=2, kind="permanent", reason="auth", notified=notified
    )


async def test_a_cooldown_is_put_read_replaced_and_cleared(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("web:dm:1", PERSON)
    assert await store.compression_cooldown(conversation.id) is None
    first = cooldown(conversation.tip_session_id, 5000.0, notified=True)
    await store.put_compression_cooldown(conversation.id, first)
    assert await store.compression_cooldown(conversation.id) == first
    second = cooldown(conversation.tip_session_id, 6000.0)
    await store.put_compression_cooldown(conversation.id, second)
    assert await store.compression_cooldown(conversation.id) == second
    await store.clear_compression_cooldown(conversation.id)
    assert await store.compression_cooldown(conversation.id) is None
    await store.clear_compression_cooldown(conversation.id)  # clearing nothing is fine


async def test_cooldowns_of_ended_conversations_do_not_pile_up(storage: Storage) -> None:
    store = agent(storage)
    ids = []
    for n in range(150):
        conversation = await store.ensure_conversation(f"web:dm:{n}", PERSON)
        await store.put_compression_cooldown(
            conversation.id, cooldown(conversation.tip_session_id, 1000.0 + n)
        )
        await store.end_conversation(conversation.id, "new")
        ids.append(conversation.id)
    remaining = [i for i in ids if await store.compression_cooldown(i) is not None]
    assert len(remaining) <= 1 and set(remaining) <= {ids[-1]}


async def test_a_live_cooldown_stays_and_outdated_ones_go(storage: Storage) -> None:
    store = agent(storage)
    live = await store.ensure_conversation("web:dm:live", PERSON)
    compressed = await store.ensure_conversation("web:dm:compressed", PERSON)
    quiet = await store.ensure_conversation("web:dm:quiet", PERSON)
    recent = await store.ensure_conversation("web:dm:recent", PERSON)
    await store.put_compression_cooldown(live.id, cooldown(live.tip_session_id, 5000.0, notified=True))
    await store.put_compression_cooldown(compressed.id, cooldown(compressed.tip_session_id, 5000.0))
    await store.put_compression_cooldown(
        quiet.id, cooldown(quiet.tip_session_id, 5000.0 - 2 * FORGET_AFTER_S)
    )
    await store.put_compression_cooldown(
        recent.id, cooldown(recent.tip_session_id, 5000.0 - FORGET_AFTER_S / 2)
    )
    # Someone compressed this conversation: the cooldown was about a segment that is no longer the tip.
    await store.compress(compressed.tip_session_id, NewSegment(), [NewMessage(role="user", content="hi")])
    newcomer = await store.ensure_conversation("web:dm:new", PERSON)
    await store.put_compression_cooldown(newcomer.id, cooldown(newcomer.tip_session_id, 5001.0))
    assert await store.compression_cooldown(compressed.id) is None
    assert await store.compression_cooldown(quiet.id) is None  # it ran out more than a day before the newest
    assert await store.compression_cooldown(recent.id) is not None  # less than a day: it may still matter
    kept = await store.compression_cooldown(live.id)
    assert kept is not None and kept.notified  # the person is still told only once
    assert await store.compression_cooldown(newcomer.id) is not None


async def test_a_cooldown_is_seen_by_another_process(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        conversation = await agent(storage).ensure_conversation("web:dm:1", PERSON)
        record = cooldown(conversation.tip_session_id, 5000.0)
        await agent(storage).put_compression_cooldown(conversation.id, record)
    async with backend.open() as storage:
        assert await agent(storage).compression_cooldown(conversation.id) == record
