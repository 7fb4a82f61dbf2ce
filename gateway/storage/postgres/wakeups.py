"""Cross-host wake-ups on PostgreSQL: one dedicated connection LISTENs and sets this process's events.

Invariants: the queue and outbox repositories run ``pg_notify('mnemogate_jobs'|'mnemogate_outbox', '')``
inside the transactions that queue work, so a notification arrives only after that work committed; the
listener holds its own connection (never one of the pool's, so a busy pool cannot starve it) and
reconnects with capped, jittered backoff for as long as it runs, setting both events after every
(re)connect because notifications sent while it was away are lost; an idle connection is pinged every
``_PING_EVERY_S`` so a silently dropped one is noticed; with ``storage.postgres.listen: false`` it sets
nothing. Waiters keep their own bounded poll either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Mapping
from typing import Final, LiteralString

import psycopg

from agent_core.storage.postgres.engine import PgDatabase

_LOG = logging.getLogger("mnemogate.storage.postgres")
JOBS_CHANNEL: Final = "mnemogate_jobs"
OUTBOX_CHANNEL: Final = "mnemogate_outbox"
_LISTEN: tuple[LiteralString, ...] = ("LISTEN mnemogate_jobs", "LISTEN mnemogate_outbox")
_PING_EVERY_S = 15.0
_BACKOFF_INITIAL_S = 0.1
_BACKOFF_MAX_S = 5.0


class PgWakeups:
    """The ``Wakeups`` port on PostgreSQL (LISTEN/NOTIFY)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self.connects = 0
        """How many times a listening connection was opened (for tests and logs)."""
        self.connected = asyncio.Event()
        """Set while a listening connection is open (LISTEN done); cleared when it is lost."""
        self.backend_pid: int | None = None
        """The server process of the current listening connection (for operators and tests)."""

    @contextlib.asynccontextmanager
    async def listen(self, *, jobs: asyncio.Event, outbox: asyncio.Event) -> AsyncIterator[None]:
        if not self._db.settings.listen:
            yield
            return
        events = {JOBS_CHANNEL: jobs, OUTBOX_CHANNEL: outbox}
        task = asyncio.create_task(self._run(events), name="postgres-wakeups")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, events: Mapping[str, asyncio.Event]) -> None:
        delay = _BACKOFF_INITIAL_S
        while True:
            try:
                await self._listen_once(events)
            except (psycopg.Error, OSError, TimeoutError) as exc:
                if self.connected.is_set():
                    _LOG.warning("wake-up listener lost its connection (%s); reconnecting", _first_line(exc))
                    delay = _BACKOFF_INITIAL_S
                else:
                    _LOG.debug("wake-up listener could not connect (%s)", _first_line(exc))
                self.connected.clear()
            await asyncio.sleep(delay + random.uniform(0, delay))  # backoff before reconnecting
            delay = min(delay * 2, _BACKOFF_MAX_S)

    async def _listen_once(self, events: Mapping[str, asyncio.Event]) -> None:
        """Connect, LISTEN, and set events until the connection fails (raises) or the task is cancelled."""
        timeout_s = self._db.settings.connect_timeout_s
        async with asyncio.timeout(timeout_s + 1):
            conn = await psycopg.AsyncConnection.connect(self._db.conninfo, **self._db.connection_kwargs)
        async with conn:
            for statement in _LISTEN:
                await conn.execute(statement)
            self.connects += 1
            self.backend_pid = conn.info.backend_pid
            self.connected.set()
            for event in events.values():  # whatever was queued while nobody listened
                event.set()
            while True:
                async for notify in conn.notifies(timeout=_PING_EVERY_S):
                    woken = events.get(notify.channel)
                    if woken is not None:
                        woken.set()
                async with asyncio.timeout(timeout_s):
                    await conn.execute("SELECT 1")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
