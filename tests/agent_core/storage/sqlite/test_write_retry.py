"""Write retries: a long foreign write lock surfaces WriteContentionError; a short one is ridden out."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agent_core.storage import NewMessage, Principal, WriteContentionError
from agent_core.storage.sqlite import StateSettings, StateStore

QUICK = StateSettings(write_attempts=4, retry_min_s=0.02, retry_max_s=0.03, busy_timeout_ms=20)


def _hold_write_lock(home: Path) -> sqlite3.Connection:
    """A connection that is not ours (no flock), holding SQLite's write lock."""
    blocker = sqlite3.connect(home / "state.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


async def test_a_hold_longer_than_the_retry_budget_surfaces_the_specific_error(tmp_path: Path) -> None:
    async with StateStore(tmp_path, QUICK) as store:
        conversation = await store.ensure_conversation("k", Principal())
        blocker = _hold_write_lock(tmp_path)
        try:
            with pytest.raises(WriteContentionError, match=r"state\.db stayed locked after 4 write attempts"):
                await store.append_message(conversation.tip_session_id, NewMessage("user", "blocked"))
            assert store.write_retries == 4
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await store.append_message(conversation.tip_session_id, NewMessage("user", "after"))
        stored = await store.segment_messages(conversation.tip_session_id)
    assert [m.content for m in stored] == ["after"]


async def test_a_hold_shorter_than_the_retry_budget_is_ridden_out(tmp_path: Path) -> None:
    async with StateStore(tmp_path, QUICK.model_copy(update={"write_attempts": 15})) as store:
        conversation = await store.ensure_conversation("k", Principal())
        blocker = _hold_write_lock(tmp_path)
        append = asyncio.create_task(
            store.append_message(conversation.tip_session_id, NewMessage("user", "late"))
        )
        for _ in range(1000):  # until the append has met the lock at least once (bounded: 5 s)
            if store.write_retries:
                break
            await asyncio.sleep(0.005)
        blocker.execute("COMMIT")
        blocker.close()
        message_id = await append
        stored = await store.segment_messages(conversation.tip_session_id)
        retries = store.write_retries
    assert retries >= 1
    assert [(m.id, m.content) for m in stored] == [(message_id, "late")]


async def test_an_open_read_transaction_does_not_delay_appends(tmp_path: Path) -> None:
    async with StateStore(tmp_path, QUICK) as store:
        conversation = await store.ensure_conversation("k", Principal())
        reader = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchone()
        try:
            for i in range(20):
                await store.append_message(conversation.tip_session_id, NewMessage("user", f"m{i}"))
        finally:
            reader.execute("ROLLBACK")
            reader.close()
        assert store.write_retries == 0


async def test_readiness_probe_reports_a_database_that_cannot_be_written(tmp_path: Path) -> None:
    async with StateStore(tmp_path, QUICK) as store:
        await store.check_writable()
        blocker = _hold_write_lock(tmp_path)
        try:
            with pytest.raises(WriteContentionError):
                await store.check_writable()
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await store.check_writable()
