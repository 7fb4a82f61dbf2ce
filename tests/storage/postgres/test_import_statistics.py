"""A bulk transcript import on PostgreSQL leaves the planner's statistics describing what it brought (search
picks its plans by them), while a small import leaves analysing to autovacuum."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from tests import postgres_server
from tests.storage.contract.backends import backend_for


def transcript(conversation_id: str, count: int) -> str:
    messages = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"line {n}"} for n in range(count)]
    return json.dumps({"id": conversation_id, "person": "ada", "platform": "web", "messages": messages})


def analysed(postgres_database: str, home: Path) -> dict[str, bool]:
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE schemaname = %s "
            "AND relname IN ('messages', 'segments', 'conversations')",
            (postgres_server.schema_for(home),),
        ).fetchall()
    return {str(name): bool(done) for name, done in rows}


async def test_a_bulk_import_analyses_the_tables_it_grew(postgres_database: str, home: Path) -> None:
    async with backend_for("postgres", home).open() as storage:
        small = await storage.imports.import_lines([transcript("small", 10)])
        assert small.messages == 10
        assert not any(analysed(postgres_database, home).values())
        bulk = await storage.imports.import_lines([transcript(f"bulk-{n}", 100) for n in range(12)])
        assert bulk.messages == 1_200
    assert analysed(postgres_database, home) == {"messages": True, "segments": True, "conversations": True}
