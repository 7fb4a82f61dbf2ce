"""Stubbing tool outputs on SQLite keeps state.db and the contentless search sidecar in step: the index
forgets the old words (FTS5 integrity holds), an interrupted stubbing is finished by the next run, and
forgetting a conversation in between deletes the terms the index really holds (the recorded stub)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.sidecar import open_sidecar, read_progress
from agent_core.storage.sqlite.tool_output_stubs import SqliteToolOutputStubs, _Output, _swap_terms
from agent_core.storage.tool_output_stubs import tool_output_stub

BIG = "the ocelotcanary dossier " + "filler words here " * 400


def integrity_holds(home: Path) -> None:
    sidecar = sqlite3.connect(home / "search.db")
    try:
        for table in ("fts_porter", "fts_trigram"):
            sidecar.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    finally:
        sidecar.close()


async def tool_output(store: StateStore, key: str) -> tuple[str, int]:
    conversation = await store.ensure_conversation(key, Principal(person_id="ana"))
    _, tool_id = await store.append_messages(
        conversation.tip_session_id,
        [
            NewMessage("user", "look it up", author="ana"),
            NewMessage("tool", BIG, tool_call_id="c1", tool_name="lookup"),
        ],
    )
    assert await store.wait_indexed(10)
    deadline = time.monotonic() + 5
    while time.time() <= (await store.segment_messages(conversation.tip_session_id))[-1].created_at:
        assert time.monotonic() < deadline
        await store.wait_indexed(0.01)
    return conversation.id, tool_id


async def hits(store: StateStore, word: str) -> list[int]:
    return [h.message_id for h in await store.fts_match(f'"{word}"', None, limit=10)]


async def test_a_stubbed_output_leaves_the_index_consistent_and_forgettable(home: Path) -> None:
    async with StateStore(home) as store:
        conversation, tool_id = await tool_output(store, "k")
        stubs = SqliteToolOutputStubs(store)
        assert await stubs.stub(older_than_s=0.0, min_chars=2_000, limit=10, day="2026-12-05") == 1
        assert await hits(store, "ocelotcanary") == []
        assert await hits(store, "retention") == [tool_id]
        integrity_holds(home)
        await store.forget_conversations([conversation])
        assert await hits(store, "retention") == []
    integrity_holds(home)


async def test_an_interrupted_stubbing_is_finished_by_the_next_run(home: Path) -> None:
    async with StateStore(home) as store:
        conversation, tool_id = await tool_output(store, "k")
        interrupted(home, tool_id, "2026-12-01")  # the sidecar step committed, state.db's did not
        assert await content_of(store, conversation, tool_id) == BIG
        stubs = SqliteToolOutputStubs(store)
        assert await stubs.stub(older_than_s=0.0, min_chars=2_000, limit=10, day="2026-12-05") == 1
        stub = tool_output_stub(len(BIG), "2026-12-01")  # the stub the index holds
        assert await content_of(store, conversation, tool_id) == stub
        assert await hits(store, "ocelotcanary") == []
    integrity_holds(home)


async def content_of(store: StateStore, conversation_id: str, message_id: int) -> str | None:
    (message,) = [m for m in await store.conversation_messages(conversation_id) if m.id == message_id]
    return message.content


async def test_forgetting_between_the_two_steps_deletes_the_recorded_stub(home: Path) -> None:
    async with StateStore(home) as store:
        conversation, tool_id = await tool_output(store, "k")
        interrupted(home, tool_id, "2026-12-01")
        await store.forget_conversations([conversation])
        assert await hits(store, "retention") == [] and await hits(store, "ocelotcanary") == []
        stubs = SqliteToolOutputStubs(store)
        assert await stubs.stub(older_than_s=0.0, min_chars=2_000, limit=10, day="2026-12-05") == 0
    integrity_holds(home)


def interrupted(home: Path, message_id: int, day: str) -> None:
    """Do the sidecar step of stubbing ``message_id`` alone, as a run that died before state.db's."""
    sidecar = open_sidecar(home / "search.db", busy_timeout_ms=5_000)
    try:
        sidecar.execute("BEGIN IMMEDIATE")
        sidecar.execute(
            "CREATE TABLE IF NOT EXISTS retention_stubs (message_id INTEGER PRIMARY KEY, stub TEXT NOT NULL)"
        )
        _swap_terms(sidecar, [_Output(message_id, BIG, "lookup")], day, read_progress(sidecar).trigram_scope)
        sidecar.execute("COMMIT")
    finally:
        sidecar.close()
