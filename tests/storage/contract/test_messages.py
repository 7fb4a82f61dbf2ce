"""Messages on every backend: a step stored in order with its sidecar and tool calls, secrets redacted at
the boundary, the api_content sidecar recorded later, the tip read with its messages in one call, and an
append to a compressed segment landing in the tip."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agent_core.storage import (
    AgentStorage,
    Compressed,
    NewMessage,
    NewSegment,
    Principal,
    UnknownMessageError,
    UnknownSegmentError,
)

if TYPE_CHECKING:
    from gateway.storage import Storage

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_a_step_is_stored_in_order_with_its_sidecar_and_tool_calls(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("SYSTEM", "model-x"))
    step = [
        NewMessage(
            "user", "what did I say?", api_content="what did I say?\n<memory-context>x</memory-context>"
        ),
        NewMessage("assistant", None, tool_calls=[{"id": "c1", "name": "session_search", "arguments": "{}"}]),
        NewMessage("tool", "found 2 results", tool_call_id="c1", tool_name="session_search"),
    ]
    ids = await store.append_messages(conversation.tip_session_id, step)
    stored = await store.segment_messages(conversation.tip_session_id)
    assert ids == sorted(ids) and [m.id for m in stored] == ids
    assert [m.role for m in stored] == ["user", "assistant", "tool"]
    assert stored[0].content == "what did I say?"
    assert stored[0].api_content == "what did I say?\n<memory-context>x</memory-context>"
    assert stored[1].tool_calls == ({"id": "c1", "name": "session_search", "arguments": "{}"},)
    assert (stored[2].tool_call_id, stored[2].tool_name) == ("c1", "session_search")
    assert all(m.conversation_id == conversation.id for m in stored)
    assert all(m.session_id == conversation.tip_session_id for m in stored)


async def test_secrets_are_redacted_before_they_are_stored(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    await store.append_messages(
        conversation.tip_session_id,
        [
            NewMessage("user", f"my token is {TOKEN}", api_content=f"sent {TOKEN}", reasoning=f"saw {TOKEN}"),
            NewMessage("assistant", None, tool_calls=[{"name": "x", "arguments": f'{{"t": "{TOKEN}"}}'}]),
        ],
    )
    stored = await store.segment_messages(conversation.tip_session_id)
    assert all(TOKEN not in (m.content or "") + (m.api_content or "") + (m.reasoning or "") for m in stored)
    assert "[REDACTED" in (stored[0].content or "") and "[REDACTED" in (stored[0].api_content or "")
    assert TOKEN not in str(stored[1].tool_calls)


async def test_the_api_content_sidecar_can_be_recorded_after_the_message(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    message_id = await store.append_message(conversation.tip_session_id, NewMessage("user", "hi"))
    await store.set_api_content(message_id, f"hi\n<memory-context>{TOKEN}</memory-context>")
    (stored,) = await store.segment_messages(conversation.tip_session_id)
    with pytest.raises(UnknownMessageError):
        await store.set_api_content(message_id + 10_000, "x")
    assert stored.content == "hi"
    assert stored.api_content is not None and stored.api_content.startswith("hi\n<memory-context>")
    assert TOKEN not in stored.api_content


async def test_text_that_is_not_valid_utf8_is_stored_rather_than_failing_the_step(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    await store.append_message(conversation.tip_session_id, NewMessage("user", "bad \ud800 text"))
    (stored,) = await store.segment_messages(conversation.tip_session_id)
    assert (
        stored.content is not None and stored.content.startswith("bad ") and stored.content.endswith(" text")
    )
    stored.content.encode("utf-8")


async def test_appending_to_an_unknown_segment_is_a_clear_error(storage: Storage) -> None:
    with pytest.raises(UnknownSegmentError, match="nope"):
        await agent(storage).append_message("nope", NewMessage("user", "hi"))


async def test_the_tip_is_read_with_its_messages_and_conversation_messages_span_every_segment(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    root = conversation.tip_session_id
    await store.append_messages(root, [NewMessage("user", "a"), NewMessage("assistant", "b")])
    result = await store.compress(root, NewSegment("v2"), [NewMessage("user", "[summary]")])
    assert isinstance(result, Compressed)
    await store.append_message(root, NewMessage("assistant", "c"))  # started on the parent: lands in the tip
    history = await store.tip_history(conversation.id)
    everything = await store.conversation_messages(conversation.id)
    assert history.segment.id == result.child.id
    assert [m.content for m in history.messages] == ["[summary]", "c"]
    assert history.messages == tuple(await store.segment_messages(result.child.id))
    assert [m.content for m in everything] == ["a", "b", "[summary]", "c"]
    assert [m.session_id for m in everything] == [root, root, result.child.id, result.child.id]


async def test_each_conversation_reads_only_its_own_messages(storage: Storage) -> None:
    store = agent(storage)
    one = await store.ensure_conversation("one", ALICE)
    two = await store.ensure_conversation("two", ALICE)
    await store.append_message(one.tip_session_id, NewMessage("user", "for one"))
    await store.append_message(two.tip_session_id, NewMessage("user", "for two"))
    assert [m.content for m in await store.conversation_messages(one.id)] == ["for one"]
    assert [m.content for m in await store.segment_messages(two.tip_session_id)] == ["for two"]
    assert await store.segment_messages("sg_missing") == []
