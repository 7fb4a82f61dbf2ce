"""The web chat's history reads find a browser's conversation by session-key prefix EXACTLY: another key
that differs only in letter case (or has ``_``/``%`` where the prefix has other characters) is not it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.storage.sqlite import Principal, StateStore
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.admin_reads import last_ended_with_prefix, live_conversation_with_prefix


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[StateStore]:
    async with open_state_store(tmp_path) as store:
        yield store


async def _conversation(state: StateStore, chat: str) -> str:
    key = f"web:-:dm:{chat}:-:-"
    principal = Principal(person_id="p_x", platform="web", user_id=chat, chat_id=chat, chat_type="dm")
    return (await state.ensure_conversation(key, principal)).id


async def test_a_prefix_differing_only_in_case_finds_nothing(state: StateStore) -> None:
    mine = await _conversation(state, "AbCdEf_1")
    assert await state.run_read(lambda c: live_conversation_with_prefix(c, "web:-:dm:AbCdEf_1:")) == mine
    assert await state.run_read(lambda c: live_conversation_with_prefix(c, "web:-:dm:abcdef_1:")) is None
    assert await state.run_read(lambda c: live_conversation_with_prefix(c, "web:-:dm:AbCdEfx1:")) is None
    assert await state.run_read(lambda c: live_conversation_with_prefix(c, "web:-:dm:AbCdE%:")) is None


async def test_ended_conversations_are_matched_exactly_too(state: StateStore) -> None:
    conversation = await _conversation(state, "QrStUv")
    await state.end_conversation(conversation, "reset")
    assert await state.run_read(lambda c: last_ended_with_prefix(c, "web:-:dm:QrStUv:")) is not None
    assert await state.run_read(lambda c: last_ended_with_prefix(c, "web:-:dm:qrstuv:")) is None
