"""What the SQLite StateStore adds under the message contract (tests/storage/contract/test_messages.py and
test_conversations.py): redacted text never reaches the FTS index, lone surrogates become ``?``, the memory
audit lands in ``memory_audit`` as given, and a closed store says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.actor import Actor
from agent_core.storage import NewMessage, Principal, StoreClosedError, UnknownSegmentError
from agent_core.storage.sqlite import StateStore

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")


async def test_a_redacted_secret_cannot_be_found_in_the_search_index(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", ALICE)
        await store.append_message(conversation.tip_session_id, NewMessage("user", f"my token is {token}"))
        assert await store.wait_indexed(5)
        found = await store.fts_match(None, f'"{token[4:20]}"', limit=5)
    assert found == []


async def test_memory_audit_rows_are_stored_as_given(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        await store.record_memory_audit(
            actor=Actor("p", conversation_id="c"),
            store="memory",
            action="add",
            old_text=None,
            new_text="x",
        )
    conn = sqlite3.connect(tmp_path / "state.db")
    try:
        rows = [
            tuple(r)
            for r in conn.execute(
                "SELECT person_id, conversation_id, actor, store, action, old_text, new_text "
                "FROM memory_audit"
            )
        ]
    finally:
        conn.close()
    assert rows == [("p", "c", "agent", "memory", "add", None, "x")]


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
