"""Migrations: ordered, applied once each, keeping data; a database newer than the code is refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_core.storage.sqlite import StateSettings, StateStore, StateUnavailableError
from agent_core.storage.sqlite.connection import connect
from agent_core.storage.sqlite.engine import StorePaths
from agent_core.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS, migrate, read_version
from agent_core.storage.sqlite.writer import WriteGate
from gateway.storage.sqlite.outbox import add_outbox, chat_notices, prune_delivered


def _old_database(home: Path, version: int) -> None:
    paths = StorePaths.for_home(home, StateSettings())
    conn = connect(paths.db, busy_timeout_ms=100)
    gate = WriteGate(conn, paths.db, paths.write_lock, StateSettings())
    try:
        assert migrate(gate, paths.db, target=version) == version
        conn.execute(
            "INSERT INTO conversations(id, session_key, created_at, tip_session_id) "
            "VALUES ('cv_old', 'k', 1, 's')"
        )
    finally:
        gate.close()
        conn.close()


def test_versions_are_strictly_ordered() -> None:
    versions = [m.version for m in MIGRATIONS]
    assert versions == sorted(set(versions)) and versions[0] == 1 and versions[-1] == LATEST_VERSION


async def test_an_old_database_is_upgraded_in_place_keeping_its_rows(tmp_path: Path) -> None:
    _old_database(tmp_path, 1)
    async with StateStore(tmp_path) as store:
        kept = await store.get_conversation("cv_old")
    conn = sqlite3.connect(tmp_path / "state.db")
    try:
        assert read_version(conn) == LATEST_VERSION
        assert conn.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0
    finally:
        conn.close()
    assert kept is not None and kept.session_key == "k"


async def test_a_database_from_a_newer_program_is_refused_with_one_clear_error(tmp_path: Path) -> None:
    _old_database(tmp_path, LATEST_VERSION)
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.execute("UPDATE schema_version SET version = ?", (LATEST_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StateUnavailableError, match=r"state\.db is unusable: schema version \d+ is newer"):
        async with StateStore(tmp_path):
            pass


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
    _old_database(tmp_path, 7)
    async with StateStore(tmp_path) as store:
        chat = "web:dm:browser"

        def queue(conn: sqlite3.Connection) -> None:
            for n in range(50):
                kind = "command" if n % 5 == 0 else "reply"
                add_outbox(
                    conn,
                    conversation_id="cv",
                    platform="web",
                    chat_ref=chat if n % 2 else "web:dm:other",
                    text=f"row {n}",
                    idempotency_key=f"k{n}",
                    kind=kind,
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
