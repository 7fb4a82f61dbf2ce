"""A PostgreSQL storage whose pool holds one connection closes even while its background window worker waits
for that connection: a cancel that the pool's wait lost (Python 3.11's ``asyncio.wait_for`` returns the
connection handed over as the cancel arrives) is raised as soon as the connection is in hand."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_core.search import plan_query
from agent_core.storage.search_index import SearchRequest, SearchScope
from gateway.config import StorageSettings
from gateway.storage import open_storage
from tests import postgres_server
from tests.storage.contract.backends import backend_for
from tests.storage.contract.test_search_index import say


async def test_a_storage_with_one_connection_closes_while_its_window_worker_waits_for_it(
    postgres_database: str, home: Path
) -> None:
    async with backend_for("postgres", home).open() as storage:
        for n in range(10):
            await say(storage.agent, f"c{n}", "ana", *(f"服务器部署 note {n}-{k}" for k in range(60)))
    lone = StorageSettings(
        backend="postgres", postgres=postgres_server.postgres_settings(home, pool_min=1, pool_max=1)
    )

    async def search_then_close() -> int:
        # The search holds the one connection while the worker, started with the storage, waits for it;
        # closing hands it over just as the worker is cancelled.
        async with open_storage(home, lone) as storage:
            request = SearchRequest(plan_query("服务器部署"), SearchScope.all_conversations(), 10)
            return len((await storage.search.search_messages(request)).hits)

    for _ in range(3):
        closing = asyncio.create_task(search_then_close())
        done, _ = await asyncio.wait({closing}, timeout=15)  # it takes well under a second
        if not done:
            closing.cancel()
        assert closing in done, "closing the storage hung: its worker missed the cancel"
        assert closing.result() > 0
