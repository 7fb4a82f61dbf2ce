"""What the SQLite backend adds under the compression chain's contract (tests/storage/contract/test_chain.py):
a unique index refuses a second child even to SQL that skips the switch's checks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.storage import Compressed, NewSegment, Principal
from agent_core.storage.sqlite import StateStore

BOB = Principal(person_id="p-bob", platform="slack")


async def test_the_database_itself_refuses_a_second_child_of_one_segment(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", BOB)
        root = conversation.tip_session_id
        result = await store.compress(root, NewSegment(), [])
        assert isinstance(result, Compressed)

        def fork(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO sessions(id, conversation_id, parent_session_id, session_key, started_at) "
                "VALUES ('sg_fork', ?, ?, 'k', 0)",
                (conversation.id, root),
            )

        with pytest.raises(sqlite3.IntegrityError):
            await store.run_write(fork)
        assert [s.id for s in await store.segments(conversation.id)] == [root, result.child.id]
