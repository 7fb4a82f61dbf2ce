"""Cross-host wake-ups on PostgreSQL: a job or an outbox row queued through another connection pool (as by
another host) sets this process's events at once; a listener whose connection the server cut reconnects by
itself and sets both events (what was queued meanwhile is looked at); ``listen: false`` listens to nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage import Storage, open_storage
from gateway.storage.postgres.wakeups import PgWakeups
from tests import postgres_server
from tests.storage.contract.backends import BackendUnderTest, backend_for
from tests.storage.contract.test_queue import request

_WITHIN_S = 10.0


@pytest.fixture
def backend(postgres_database: str, home: Path) -> BackendUnderTest:
    return backend_for("postgres", home)


@pytest.fixture
async def storage(backend: BackendUnderTest) -> AsyncIterator[Storage]:
    async with backend.open() as opened:
        yield opened


def listener(storage: Storage) -> PgWakeups:
    wakeups = storage.wakeups
    assert isinstance(wakeups, PgWakeups)
    return wakeups


async def woken(event: asyncio.Event) -> bool:
    try:
        async with asyncio.timeout(_WITHIN_S):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def test_work_queued_through_another_pool_wakes_this_process_at_once(
    storage: Storage, backend: BackendUnderTest, postgres_database: str
) -> None:
    jobs, outbox = asyncio.Event(), asyncio.Event()
    wakeups = listener(storage)
    async with wakeups.listen(jobs=jobs, outbox=outbox):
        assert await woken(wakeups.connected)
        assert jobs.is_set() and outbox.is_set()  # set once on connecting: look at what waits
        jobs.clear()
        outbox.clear()
        async with backend.open() as other_host:
            queued_at = time.monotonic()
            await other_host.queue.enqueue(request("hello", event="e1"), QUEUE_WHEN_BUSY)
            assert await woken(jobs)
            assert time.monotonic() - queued_at < 2.0
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute("SELECT pg_notify('mnemogate_outbox', '')")
        assert await woken(outbox)


async def test_a_listener_whose_connection_was_cut_reconnects_and_looks_again(
    storage: Storage, postgres_database: str
) -> None:
    jobs, outbox = asyncio.Event(), asyncio.Event()
    wakeups = listener(storage)
    async with wakeups.listen(jobs=jobs, outbox=outbox):
        assert await woken(wakeups.connected)
        first_pid = wakeups.backend_pid
        jobs.clear()
        outbox.clear()
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (first_pid,))
        assert await woken(jobs) and await woken(outbox)
        assert wakeups.connects == 2 and wakeups.backend_pid != first_pid
        jobs.clear()
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute("SELECT pg_notify('mnemogate_jobs', '')")
        assert await woken(jobs)


async def test_with_listen_off_nothing_is_listened_to(home: Path, postgres_database: str) -> None:
    settings = postgres_server.storage_settings(home)
    off = settings.model_copy(update={"postgres": settings.postgres.model_copy(update={"listen": False})})
    async with open_storage(home, off) as storage:
        jobs, outbox = asyncio.Event(), asyncio.Event()
        async with listener(storage).listen(jobs=jobs, outbox=outbox):
            assert listener(storage).connects == 0
        assert not jobs.is_set() and not outbox.is_set()
