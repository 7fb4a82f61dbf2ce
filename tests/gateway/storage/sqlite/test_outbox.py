"""SQLite specifics of the outbox: an idle claim takes no write lock, a reply's last chunk and its completion
are one write, pruning ages rows by the backend's clock and deletes a pass's ids in bounded statements with
their chunk progress. (The outbox's behaviour on every backend: tests/storage/contract/test_outbox.py.)"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.storage.sqlite import StateStore
from gateway.contracts import ChatKind, ChatRef
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChunkReceipt, OutboxEntry
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.outbox import SqliteOutbox


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[StateStore]:
    async with open_state_store(tmp_path) as store:
        yield store


def _entry(n: int) -> OutboxEntry:
    chat = chat_to_text(ChatRef("test", f"c{n}", ChatKind.DM))
    return OutboxEntry("cv", "test", chat, f"row {n}", f"k{n}", kind="reply")


async def _count(state: StateStore, sql: str) -> int:
    return int(await state.run_read(lambda c: c.execute(sql).fetchone()[0]))


async def test_a_claim_on_an_idle_outbox_only_reads(state: StateStore) -> None:
    outbox = SqliteOutbox(state)
    commits = state.stats().write_commits
    assert await outbox.claim(["test"], "h", claim_s=60.0, limit=10) == []
    assert state.stats().write_commits == commits
    await outbox.add(_entry(1))
    commits, trips = state.stats().write_commits, state.stats().round_trips
    assert len(await outbox.claim(["test"], "h", claim_s=60.0, limit=10)) == 1
    assert (state.stats().write_commits - commits, state.stats().round_trips - trips) == (1, 2)


async def test_the_last_chunk_and_the_rows_completion_are_one_write(state: StateStore) -> None:
    outbox = SqliteOutbox(state)
    await outbox.add(_entry(1))
    (item,) = await outbox.claim(["test"], "h", claim_s=60.0, limit=1)
    await outbox.record_chunk(item.id, ChunkReceipt(0, "m-first"))
    trips = state.stats().round_trips
    await outbox.mark_sent(item.id, ChunkReceipt(1, "m-last"))
    assert state.stats().round_trips - trips == 1
    row = await state.run_read(
        lambda c: c.execute("SELECT state, platform_message_id, claimed_by FROM outbox").fetchone()
    )
    assert tuple(row) == ("sent", "m-first", None)  # the reply is known by its first message
    assert await _count(state, "SELECT count(*) FROM outbox_chunks") == 2


async def test_pruning_ages_rows_by_the_backends_clock(state: StateStore) -> None:
    clock = [1_000.0]
    outbox = SqliteOutbox(state, clock=lambda: clock[0])
    for n in range(2):
        await outbox.add(_entry(n))
    first, second = await outbox.claim(["test"], "h", claim_s=60.0, limit=2)
    await outbox.mark_sent(first.id, ChunkReceipt(0, "m-0"))
    clock[0] = 5_000.0
    await outbox.mark_sent(second.id, ChunkReceipt(0, "m-1"))
    clock[0] = 6_000.0
    assert await outbox.prune_delivered(older_than_s=4_000.0, limit=10) == 1  # sent_at 1000 < 6000 - 4000
    assert await outbox.prune_delivered(older_than_s=1_000.0, limit=10) == 0  # 5000 is not before 5000
    assert [row.text for row in await outbox.for_conversation("cv")] == ["row 1"]
    assert await _count(state, "SELECT count(*) FROM outbox_chunks") == 1  # the pruned row's went too


async def test_a_pass_larger_than_one_statement_deletes_every_row(state: StateStore) -> None:
    def seed(conn: sqlite3.Connection) -> None:
        conn.executemany(
            "INSERT INTO outbox(conversation_id, chat_ref, idempotency_key, text, created_at, platform, "
            "state, sent_at) VALUES ('cv', ?, ?, 'x', 1.0, 'test', 'sent', 1.0)",
            [(f"chat{n}", f"k{n}") for n in range(1_200)],
        )
        conn.executemany(
            "INSERT INTO outbox_chunks(outbox_id, chunk_index, platform_message_id, sent_at) "
            "SELECT id, 0, 'm', 1.0 FROM outbox WHERE idempotency_key = ?",
            [(f"k{n}",) for n in range(1_200)],
        )

    await state.run_write(seed)
    outbox = SqliteOutbox(state)
    assert await outbox.prune_delivered(older_than_s=60.0, limit=1_100) == 1_100
    assert await outbox.prune_delivered(older_than_s=60.0, limit=1_100) == 100
    assert await _count(state, "SELECT count(*) FROM outbox") == 0
    assert await _count(state, "SELECT count(*) FROM outbox_chunks") == 0
