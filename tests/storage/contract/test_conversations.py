"""Conversations and segments on every backend: one live conversation per key, first-writer-wins endings,
a frozen system prompt per segment, accumulated usage, and all of it still there after a restart."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from agent_core.storage import (
    AgentStorage,
    EndReason,
    ModelCall,
    NewSegment,
    Principal,
    TokenUsage,
    UnknownSegmentError,
)

from .backends import BackendUnderTest

if TYPE_CHECKING:
    from gateway.storage import Storage

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_the_same_session_key_reaches_the_same_conversation_until_it_is_replaced(
    storage: Storage,
) -> None:
    store = agent(storage)
    first = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("one"))
    again = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("two"))
    replaced = await store.start_new_conversation(
        "tg:dm:42", ALICE, NewSegment("three"), reason=EndReason.NEW
    )
    old = await store.get_conversation(first.id)
    old_tip = await store.get_segment(first.tip_session_id)
    live = await store.live_conversation("tg:dm:42")
    new_tip = await store.get_segment(replaced.tip_session_id)
    assert again == first
    assert replaced.id != first.id and live is not None and live.id == replaced.id
    assert old is not None and old.end_reason == "new" and old.ended_at is not None
    assert old_tip is not None and old_tip.end_reason == "new"
    assert new_tip is not None and new_tip.system_prompt == "three" and new_tip.principal == ALICE
    assert new_tip.conversation_id == replaced.id and new_tip.session_key == "tg:dm:42"


async def test_a_new_conversation_without_a_live_one_simply_starts(storage: Storage) -> None:
    store = agent(storage)
    started = await store.start_new_conversation("web:dm:1", ALICE)
    assert (await store.live_conversation("web:dm:1")) == started
    assert [s.id for s in await store.segments(started.id)] == [started.tip_session_id]


async def test_ending_a_conversation_is_first_writer_wins(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    assert await store.end_conversation(conversation.id, EndReason.IDLE)
    assert not await store.end_conversation(conversation.id, EndReason.RESET)
    ended = await store.get_conversation(conversation.id)
    tip = await store.get_segment(conversation.tip_session_id)
    assert await store.live_conversation("k") is None
    assert ended is not None and ended.end_reason == "idle"
    assert tip is not None and tip.end_reason == "idle"
    assert (await store.ensure_conversation("k", ALICE)).id != conversation.id


async def test_unknown_ids_read_as_nothing(storage: Storage) -> None:
    store = agent(storage)
    assert await store.get_conversation("cv_missing") is None
    assert await store.get_segment("sg_missing") is None
    assert await store.live_conversation("nobody") is None
    assert await store.segments("cv_missing") == []


async def test_token_usage_accumulates_on_the_segment(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    await store.add_usage(conversation.tip_session_id, ModelCall(100, 20, 80, 10, 0.5))
    await store.add_usage(conversation.tip_session_id, ModelCall(50, 5, 40, 0, 0.25))
    segment = await store.get_segment(conversation.tip_session_id)
    assert segment is not None and segment.usage == TokenUsage(150, 25, 120, 10, 0.75)
    with pytest.raises(UnknownSegmentError):
        await store.add_usage("sg_missing", ModelCall(1))


async def test_the_first_frozen_system_prompt_wins_for_the_whole_segment(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    first = await store.freeze_system_prompt(conversation.tip_session_id, "prompt built by process A")
    second = await store.freeze_system_prompt(conversation.tip_session_id, "prompt built by process B")
    segment = await store.get_segment(conversation.tip_session_id)
    with pytest.raises(UnknownSegmentError):
        await store.freeze_system_prompt("sg_missing", "x")
    assert first == second == "prompt built by process A"
    assert segment is not None and segment.system_prompt == "prompt built by process A"


async def test_racing_ensures_of_one_key_give_one_conversation(storage: Storage) -> None:
    store = agent(storage)
    records = await asyncio.gather(*(store.ensure_conversation("k", ALICE) for _ in range(8)))
    assert len({r.id for r in records}) == 1


async def test_conversations_survive_a_restart(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        conversation = await agent(storage).ensure_conversation("k", ALICE, NewSegment("frozen", "m"))
    async with backend.open() as storage:
        again = await agent(storage).live_conversation("k")
        tip = await agent(storage).resolve_tip(conversation.id)
    assert again == conversation
    assert tip.system_prompt == "frozen" and tip.model == "m" and tip.principal == ALICE
