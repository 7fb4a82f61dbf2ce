"""The gateway's ladder on SQLite: a release-0.1 database keeps its people through the upgrade, and one at
version 7 gains the chat-history index migration 7 never created, which the history read then uses.
(How the ladders split and refuse newer databases: tests/agent_core/storage/sqlite/test_schema.py.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.outbox import add_outbox, chat_notices, prune_delivered
from tests.storage.release_0_1 import create_database


def _plan(conn: sqlite3.Connection, read: Callable[[sqlite3.Connection], object]) -> str:
    """The query plan of the statement ``read`` runs (traced with its parameters bound)."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        read(conn)
    finally:
        conn.set_trace_callback(None)
    (statement,) = (s for s in statements if s.lstrip().upper().startswith("SELECT"))
    return "\n".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + statement))


async def test_a_version_7_database_gets_the_chat_history_index_and_the_history_read_uses_it(
    tmp_path: Path,
) -> None:
    # Migration 7 reused the name of migration 4's (chat_ref, state, id) index, so it never ran.
    create_database(tmp_path / "state.db", 7)
    chat = "web:dm:browser"
    async with open_state_store(tmp_path) as store:

        def queue(conn: sqlite3.Connection) -> None:
            for n in range(50):
                add_outbox(
                    conn,
                    conversation_id="cv",
                    platform="web",
                    chat_ref=chat if n % 2 else "web:dm:other",
                    text=f"row {n}",
                    idempotency_key=f"k{n}",
                    kind="command" if n % 5 == 0 else "reply",
                    now=float(n),
                )

        await store.run_write(queue)
        notices = await store.run_read(lambda c: chat_notices(c, chat, since=0.0))
    assert [n.text for n in notices] == [f"row {n}" for n in range(5, 50, 10)]
    conn = sqlite3.connect(tmp_path / "state.db")
    try:
        columns = [row[2] for row in conn.execute("PRAGMA index_info(outbox_chat_history)")]
        assert columns == ["chat_ref", "id"]
        plan = _plan(conn, lambda c: chat_notices(c, chat, since=0.0))
        prune_plan = _plan(conn, lambda c: prune_delivered(c, sent_before=0.0, limit=10))
    finally:
        conn.close()
    assert "outbox_chat_history" in plan and "TEMP B-TREE" not in plan, plan
    assert "outbox_sent_at" in prune_plan and "TEMP B-TREE" not in prune_plan, prune_plan
