"""A step's rows and its model call's usage on every backend: one append stores both, all or nothing, and
the usage stays on the segment the call ran on even when the rows land in a newer tip."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agent_core.storage import AgentStorage, NewMessage, Principal, TokenUsage, UnknownSegmentError

if TYPE_CHECKING:
    from gateway.storage import Storage

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_one_append_stores_the_step_and_adds_its_usage(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    tip = conversation.tip_session_id
    await store.add_usage(tip, TokenUsage(10, 1))
    usage = TokenUsage(100, 20, 80, 5, 0.5)
    (reply,) = await store.append_messages(tip, [NewMessage("assistant", "ok")], usage)
    await store.append_messages(tip, [NewMessage("user", "thanks")])  # no usage: counters unchanged
    segment = await store.get_segment(tip)
    assert segment is not None and segment.usage == TokenUsage(110, 21, 80, 5, 0.5)
    ids = [m.id for m in await store.segment_messages(tip)]
    assert len(ids) == 2 and ids[0] == reply


async def test_an_append_to_an_unknown_segment_adds_no_usage_and_no_rows(storage: Storage) -> None:
    store = agent(storage)
    with pytest.raises(UnknownSegmentError):
        await store.append_messages("sg_missing", [NewMessage("assistant", "ok")], TokenUsage(1))
