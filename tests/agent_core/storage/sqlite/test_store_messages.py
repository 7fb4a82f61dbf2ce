"""Conversations and messages through the public StateStore API: what is stored is what was said."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.storage.sqlite import (
    EndReason,
    NewMessage,
    NewSegment,
    Principal,
    StateStore,
    StoreClosedError,
    TokenUsage,
    UnknownMessageError,
    UnknownSegmentError,
)

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")


async def test_a_step_is_stored_in_order_with_its_sidecar_and_tool_calls(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("SYSTEM", "model-x"))
        step = [
            NewMessage(
                "user", "what did I say?", api_content="what did I say?\n<memory-context>x</memory-context>"
            ),
            NewMessage(
                "assistant", None, tool_calls=[{"id": "c1", "name": "session_search", "arguments": "{}"}]
            ),
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


async def test_secrets_are_redacted_before_they_are_stored(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        await store.append_messages(
            conversation.tip_session_id,
            [
                NewMessage("user", f"my token is {token}", api_content=f"sent {token}"),
                NewMessage("assistant", None, tool_calls=[{"name": "x", "arguments": f'{{"t": "{token}"}}'}]),
            ],
        )
        stored = await store.segment_messages(conversation.tip_session_id)
        assert await store.wait_indexed(5)
        found = await store.fts_match(None, f'"{token[4:20]}"', limit=5)
    assert all(token not in (m.content or "") + (m.api_content or "") for m in stored)
    assert "[REDACTED" in (stored[0].content or "") and "[REDACTED" in (stored[0].api_content or "")
    assert token not in str(stored[1].tool_calls)
    assert found == []


async def test_the_same_session_key_reaches_the_same_conversation_until_it_is_replaced(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path) as store:
        first = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("one"))
        again = await store.ensure_conversation("tg:dm:42", ALICE, NewSegment("two"))
        replaced = await store.start_new_conversation(
            "tg:dm:42", ALICE, NewSegment("three"), reason=EndReason.NEW
        )
        old = await store.get_conversation(first.id)
        old_tip = await store.get_segment(first.tip_session_id)
        live = await store.live_conversation("tg:dm:42")
        new_tip = await store.get_segment(replaced.tip_session_id)
    assert again.id == first.id
    assert replaced.id != first.id and live is not None and live.id == replaced.id
    assert old is not None and old.end_reason == "new" and old.ended_at is not None
    assert old_tip is not None and old_tip.end_reason == "new"
    assert new_tip is not None and new_tip.system_prompt == "three" and new_tip.principal == ALICE


async def test_ending_a_conversation_is_first_writer_wins(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        assert await store.end_conversation(conversation.id, EndReason.IDLE)
        assert not await store.end_conversation(conversation.id, EndReason.RESET)
        ended = await store.get_conversation(conversation.id)
        assert await store.live_conversation("k") is None
    assert ended is not None and ended.end_reason == "idle"


async def test_token_usage_accumulates_on_the_segment(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        await store.add_usage(conversation.tip_session_id, TokenUsage(100, 20, 80, 10, 0.5))
        await store.add_usage(conversation.tip_session_id, TokenUsage(50, 5, 40, 0, 0.25))
        segment = await store.get_segment(conversation.tip_session_id)
    assert segment is not None and segment.usage == TokenUsage(150, 25, 120, 10, 0.75)


async def test_memory_audit_rows_are_recorded(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        await store.record_memory_audit(
            person_id="p",
            conversation_id="c",
            actor="agent",
            store="memory",
            action="add",
            old_text=None,
            new_text="x",
        )
    conn_rows = _rows(
        tmp_path, "SELECT person_id, actor, store, action, old_text, new_text FROM memory_audit"
    )
    assert conn_rows == [("p", "agent", "memory", "add", None, "x")]


async def test_appending_to_an_unknown_segment_or_after_close_is_a_clear_error(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    await store.open()
    with pytest.raises(UnknownSegmentError, match="nope"):
        await store.append_message("nope", NewMessage("user", "hi"))
    await store.close()
    with pytest.raises(StoreClosedError):
        await store.append_message("nope", NewMessage("user", "hi"))


async def test_lone_surrogates_are_stored_as_replacement_characters(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        await store.append_message(conversation.tip_session_id, NewMessage("user", "bad \ud800 text"))
        (stored,) = await store.segment_messages(conversation.tip_session_id)
    assert stored.content == "bad ? text"


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(home / "state.db")
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


async def test_the_first_frozen_system_prompt_wins_for_the_whole_segment(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        first = await store.freeze_system_prompt(conversation.tip_session_id, "prompt built by process A")
        second = await store.freeze_system_prompt(conversation.tip_session_id, "prompt built by process B")
        segment = await store.get_segment(conversation.tip_session_id)
        with pytest.raises(UnknownSegmentError):
            await store.freeze_system_prompt("sg_missing", "x")
    assert first == second == "prompt built by process A"
    assert segment is not None and segment.system_prompt == "prompt built by process A"


async def test_the_api_content_sidecar_can_be_recorded_after_the_message(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        message_id = await store.append_message(conversation.tip_session_id, NewMessage("user", "hi"))
        await store.set_api_content(message_id, f"hi\n<memory-context>{token}</memory-context>")
        (stored,) = await store.segment_messages(conversation.tip_session_id)
        with pytest.raises(UnknownMessageError):
            await store.set_api_content(10_000, "x")
    assert stored.content == "hi"
    assert stored.api_content is not None and stored.api_content.startswith("hi\n<memory-context>")
    assert token not in stored.api_content
