"""The usage log's attribution step (SQLite agent step 10, PostgreSQL agent step 4) on a database that already
logged calls: the old rows keep their tokens and take their conversation's person and platform and their
segment's model; their cost, never priced before, becomes unknown (NULL), and new calls are priced."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.storage import ModelCall, Principal
from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.schema import AGENT_LADDER as PG_AGENT_LADDER
from agent_core.storage.postgres.schema import PgLadder, migrate
from agent_core.storage.postgres.store import PgAgentStore
from agent_core.storage.records import NewSegment
from agent_core.storage.sqlite.schema import AGENT_LADDER
from gateway.config import StorageSettings
from gateway.storage import open_storage
from gateway.storage.postgres.schema import GATEWAY_LADDER as PG_GATEWAY_LADDER
from gateway.storage.usage_reads import UsageGroup, UsageLine, UsageQuery
from tests import postgres_server
from tests.storage.release_0_1 import create_database

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")
OLD = UsageLine("p-alice", 1, 1, 100, 20, 0, 0, 0.0)
NEW = ModelCall(10, 2, cost_usd=0.5, model="gpt-4o", kind="flush")


def _sqlite_at_agent_step_9(db: Path) -> None:
    """A state.db whose agent ladder stops at step 9, with one conversation and one call logged then."""
    create_database(db, 8)
    (step_9,) = (m for m in AGENT_LADDER.migrations if m.version == 9)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statement in step_9.statements:
            conn.execute(statement)
        conn.execute("UPDATE schema_version SET version = 9")
        conn.execute(
            "INSERT INTO conversations(id, session_key, person_id, platform, created_at, tip_session_id) "
            "VALUES ('cv_old', 'k', 'p-alice', 'telegram', 1, 'sg_old')"
        )
        conn.execute(
            "INSERT INTO sessions(id, conversation_id, session_key, model, started_at) "
            "VALUES ('sg_old', 'cv_old', 'k', 'claude-old', 1)"
        )
        conn.execute(
            "INSERT INTO usage_log(at, session_id, conversation_id, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_usd) "
            "VALUES (5, 'sg_old', 'cv_old', 100, 20, 0, 0, 0)"
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


async def test_sqlite_step_10_attributes_the_calls_logged_before_it(home: Path) -> None:
    _sqlite_at_agent_step_9(home / "state.db")
    async with open_storage(home, StorageSettings(backend="sqlite")) as storage:
        by_model = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.MODEL))
        assert [line.key for line in by_model.lines] == ["claude-old"]
        before = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
        assert before.lines == (OLD,)
        await storage.agent.add_usage("sg_old", NEW)
        after = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
        assert after.lines == (UsageLine("p-alice", 2, 1, 110, 22, 0, 0, 0.5),)
    conn = sqlite3.connect(home / "state.db")
    try:
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    finally:
        conn.close()
    assert {"usage_log_at", "usage_log_person_at"} <= indexes


@pytest.mark.usefixtures("postgres_database")
async def test_postgres_step_4_attributes_the_calls_logged_before_it(home: Path) -> None:
    settings = postgres_server.storage_settings(home)
    assert settings.postgres is not None
    before_step_4 = PgLadder("agent", PG_AGENT_LADDER.version_table, PG_AGENT_LADDER.migrations[:3])
    async with PgDatabase(settings.postgres) as db:
        await migrate(db, (before_step_4, PG_GATEWAY_LADDER))
        old = await PgAgentStore(db).ensure_conversation("k", ALICE, NewSegment(model="claude-old"))

        async def log_the_old_way(conn: Conn) -> None:
            # Step 2's mg_lock_tip: the segment's counters and a usage_log row with cost 0.
            await conn.execute("SELECT * FROM mg_lock_tip(%s, 100, 20, 0, 0, 0)", (old.tip_session_id,))

        await db.run_write(log_the_old_way)
    async with open_storage(home, settings) as storage:
        by_model = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.MODEL))
        assert [line.key for line in by_model.lines] == ["claude-old"]
        before = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
        assert before.lines == (OLD,)
        await storage.agent.add_usage(old.tip_session_id, NEW)
        after = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
        assert after.lines == (UsageLine("p-alice", 2, 1, 110, 22, 0, 0, 0.5),)
    # A host of the previous release, still running during the upgrade, appends with step 2's function.
    async with PgDatabase(settings.postgres) as db:
        await db.run_write(log_the_old_way)
    async with open_storage(home, settings) as storage:
        by_kind = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.KIND))
        assert {line.key: line.calls for line in by_kind.lines} == {"turn": 2, "flush": 1}
