"""On PostgreSQL a search ranks its costliest clause group beside the others, on a connection that reads the
search's own snapshot; with no connection to spare it ranks them in turn, with the same results; a read
cancelled, or failing on one side, keeps both connections and raises what it would alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import psycopg
import pytest

from agent_core.search import plan_query
from agent_core.storage.postgres.engine import Conn, PgDatabase, side_by_side
from agent_core.storage.postgres.search_reads import newest_message_id
from agent_core.storage.search_index import SearchRequest, SearchScope
from gateway.config import StorageSettings
from gateway.storage import open_storage
from tests import postgres_server
from tests.multiprocess.serve_process import wait_until
from tests.storage.contract.backends import backend_for
from tests.storage.contract.test_search_index import say
from tests.storage.postgres.test_search_rank_window import analyse


async def test_the_second_reader_sees_the_searchs_snapshot_not_what_committed_since(
    postgres_database: str, home: Path
) -> None:
    async with backend_for("postgres", home).open() as storage:
        _, (first,) = await say(storage.agent, "c", "ana", "hello")
        async with PgDatabase(postgres_server.postgres_settings(home, pool_min=2, pool_max=2)) as db:
            await _pair(db)  # both connections open, so the read below gets its reader at once

            async def read(conn: Conn) -> tuple[int, int, bool]:
                before = await newest_message_id(conn)  # the snapshot is taken here
                await say(storage.agent, "c", "ana", "committed after the snapshot")
                async with db.snapshot_reader(conn) as reader:
                    assert reader is not None
                    apart = reader.info.backend_pid != conn.info.backend_pid
                    return before, await newest_message_id(reader), apart

            before, seen, apart = await db.run_read(read)
            after = await db.run_read(newest_message_id)
    assert before == seen == first and apart
    assert after > first


async def test_with_no_connection_to_spare_there_is_no_second_reader(
    postgres_database: str, home: Path
) -> None:
    lone = postgres_server.postgres_settings(home, pool_min=1, pool_max=1)
    async with backend_for("postgres", home).open(), PgDatabase(lone) as db:  # the schema, migrated

        async def read(conn: Conn) -> bool:
            async with db.snapshot_reader(conn) as reader:
                return reader is None

        assert await db.run_read(read)


async def test_a_search_with_two_costly_groups_finds_the_same_with_or_without_a_second_reader(
    postgres_database: str, home: Path
) -> None:
    # Enough matches for both of 服务器部署's groups (its bigrams, its substrings) to be worth sharing.
    texts = [
        "服务器部署在周五完成",
        "我们讨论了服务器部署的预算",
        "部署脚本需要更新, 服务器部署 deploy checklist",
        "the deploy server 服务器部署 plan",
        "nothing relevant here",
    ]
    async with backend_for("postgres", home).open() as storage:
        for n in range(10):
            numbered = (f"{text} {n}-{k}" for k in range(12) for text in texts)
            await say(storage.agent, f"c{n}", "ana", *numbered)
        assert await storage.search.wait_indexed(10)
    analyse(postgres_database, home)
    lone = StorageSettings(
        backend="postgres", postgres=postgres_server.postgres_settings(home, pool_min=1, pool_max=1)
    )
    found: dict[str, list[tuple[int, float]]] = {}
    for name, settings in (("pooled", postgres_server.storage_settings(home)), ("lone", lone)):
        async with open_storage(home, settings) as storage:
            request = SearchRequest(plan_query("服务器部署"), SearchScope.all_conversations(), 10)
            snapshot = await storage.search.search_messages(request)
            found[name] = [(hit.message.id, hit.score) for hit in snapshot.hits]
    assert found["pooled"] == found["lone"] != []


async def _sleep(conn: Conn) -> None:
    await conn.execute("SELECT pg_sleep(30)")


async def _divide_by_zero(conn: Conn) -> None:
    await conn.execute("SELECT 1 / 0")


def _sleeping(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(30)'"
        ).fetchone()
    return int(row[0]) if row is not None else 0


async def _pair(db: PgDatabase) -> set[int]:
    """The backends of a read and its snapshot reader, once the pool has both connections open."""
    pairs: list[set[int]] = []

    async def read(conn: Conn) -> set[int]:
        async with db.snapshot_reader(conn) as reader:
            return set() if reader is None else {conn.info.backend_pid, reader.info.backend_pid}

    async def formed() -> bool:
        pairs.append(await db.run_read(read))
        return bool(pairs[-1])

    await wait_until(formed, "a read with a snapshot reader beside it", str)
    return pairs[-1]


@contextlib.asynccontextmanager
async def _two_connections(home: Path) -> AsyncIterator[PgDatabase]:
    """A database on ``home``'s migrated schema whose pool holds exactly two connections."""
    settings = postgres_server.postgres_settings(home, pool_min=2, pool_max=2)
    async with backend_for("postgres", home).open(), PgDatabase(settings) as db:
        yield db


def _sleep_beside(
    db: PgDatabase, other: Callable[[Conn], Awaitable[None]]
) -> Callable[[Conn], Awaitable[None]]:
    """A read that sleeps on its connection while ``other`` runs on its snapshot reader."""

    async def read(conn: Conn) -> None:
        async with db.snapshot_reader(conn) as reader:
            assert reader is not None
            await side_by_side(_sleep(conn), other(reader))

    return read


async def test_a_read_cancelled_while_both_connections_work_keeps_both(
    postgres_database: str, home: Path
) -> None:
    async with _two_connections(home) as db:
        before = await _pair(db)
        task = asyncio.create_task(db.run_read(_sleep_beside(db, _sleep)))
        await wait_until(lambda: _sleeping(postgres_database) == 2, "both statements running", str)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _sleeping(postgres_database) == 0, "both statements were cancelled on the server"
        assert await _pair(db) == before, "no connection was closed and replaced"


async def test_a_statement_failing_beside_another_raises_its_own_error_and_stops_the_other(
    postgres_database: str, home: Path
) -> None:
    async with _two_connections(home) as db:
        before = await _pair(db)
        with pytest.raises(psycopg.errors.DivisionByZero):
            read = _sleep_beside(db, _divide_by_zero)
            await asyncio.wait_for(db.run_read(read), timeout=20)  # not the 30 s the sleep would take
        assert _sleeping(postgres_database) == 0
        assert await _pair(db) == before
