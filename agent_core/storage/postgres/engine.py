"""The PostgreSQL engine: one async connection pool, units of work as transactions, this process's counters.

Invariants: every connection of the pool uses the configured schema (``search_path``), autocommit outside an
explicit unit of work, the server's statement timeout and this program's application name; ``run_write``
runs its work in one transaction and re-runs it only after a serialization failure or a deadlock (the
server rolled it back, so nothing was half-done), or on another connection when the one it got from the
pool was found dead before COMMIT was sent (a server restart leaves the pool full of them; nothing is
checked on checkout, which would cost a round trip per transaction) — never after a connection lost
during COMMIT (it may or may not have happened: the caller gets ``PostgresUnavailableError`` and its own
recovery runs); ``snapshot_reader`` lends a read a second connection in the same snapshot only when the pool
has one to spare and no task is waiting for one;
a server that cannot be reached within ``connect_timeout_s`` is ``PostgresUnavailableError``, so
readiness says not-ready instead of hanging. Times stored by this backend are the server's
(``mg_now()``, epoch seconds), never a host's, so hosts with different clocks agree on every lease.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg import AsyncConnection, IsolationLevel, errors, sql
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ..errors import StateUnavailableError
from .settings import PostgresSettings, redacted_dsn

T = TypeVar("T")
Conn = AsyncConnection[TupleRow]
"""A pooled connection as a unit of work sees it (tuple rows; ``%s`` placeholders)."""

_RETRYABLE = (errors.SerializationFailure, errors.DeadlockDetected)
WRITE_ATTEMPTS = 8
# How long a snapshot reader waits for a spare connection the pool said it had (one being opened).
_SPARE_WAIT_S = 0.05


class _StaleConnectionError(Exception):
    """A pooled connection was found dead before anything it carried could commit: use another."""


class PostgresUnavailableError(StateUnavailableError):
    """The database cannot be reached or refused the work (server down, connection lost, wrong DSN)."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        super().__init__(where, reason)  # type: ignore[arg-type]  # ``path`` names the DSN here

    def _describe(self) -> str:
        return f"PostgreSQL database {self.where} is unusable: {self.reason}"


@dataclass(slots=True)
class EngineCounters:
    """What this process did through the engine (for ``StoreStats`` and the benches)."""

    transactions: int = 0
    commits: int = 0
    retries: int = 0
    statements: int = 0


class PgDatabase:
    """An opened pool on one database and schema; ``async with PgDatabase(settings) as db``."""

    def __init__(self, settings: PostgresSettings, *, application_name: str = "mnemogate") -> None:
        self.conninfo = settings.conninfo  # ValueError naming where to set it when there is none
        self.settings = settings
        self.schema = settings.schema_name
        self.where = f"{redacted_dsn(self.conninfo)} (schema {self.schema})"
        self.counters = EngineCounters()
        self._application_name = application_name
        self._pool: AsyncConnectionPool[Conn] | None = None

    @property
    def connection_kwargs(self) -> dict[str, Any]:
        """What every connection of this database is opened with (a listener opens its own with these)."""
        timeout_ms = int(self.settings.statement_timeout_s * 1000)
        options = f"-c search_path={self.schema},public -c statement_timeout={timeout_ms}"
        return {
            "autocommit": True,
            "connect_timeout": max(1, round(self.settings.connect_timeout_s)),
            "application_name": self._application_name,
            "options": options,
        }

    async def __aenter__(self) -> PgDatabase:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Open the pool and prove one connection works (``PostgresUnavailableError`` if not)."""
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            self.conninfo,
            min_size=self.settings.pool_min,
            max_size=self.settings.pool_max,
            kwargs=self.connection_kwargs,
            timeout=self.settings.connect_timeout_s,
            reconnect_timeout=0,  # keep trying forever: readiness reports the outage meanwhile
            # No check on every checkout (a round trip per transaction): a connection found dead when it
            # is used is discarded and the work re-run on another, as long as nothing could have committed.
            open=False,
            name=f"mnemogate-{self.schema}",
        )
        try:
            await pool.open(wait=False)
            async with pool.connection(timeout=self.settings.connect_timeout_s) as conn:
                await conn.execute("SELECT 1")
        except (psycopg.Error, PoolTimeout, OSError) as exc:
            await pool.close()
            raise PostgresUnavailableError(self.where, _reason(exc)) from exc
        self._pool = pool

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        """A pooled connection in autocommit (each statement its own transaction)."""
        if self._pool is None:
            raise PostgresUnavailableError(self.where, "the connection pool is closed")
        try:
            async with self._pool.connection() as conn:
                if _cancel_lost():
                    raise asyncio.CancelledError
                yield conn
        except (psycopg.OperationalError, PoolTimeout, OSError) as exc:
            raise PostgresUnavailableError(self.where, _reason(exc)) from exc

    async def run_write(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` in one read-committed transaction; re-run after a serialization failure or deadlock."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return await self._on_live_connection(lambda conn: self._transaction(conn, work))
            except _RETRYABLE:
                if attempt == WRITE_ATTEMPTS:
                    raise
                self.counters.retries += 1
                await asyncio.sleep(0.005 * attempt)
        raise AssertionError("unreachable")

    async def run_read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` on one snapshot (a read-only repeatable-read transaction: its statements agree)."""
        return await self._on_live_connection(lambda conn: self._transaction(conn, work, read_only=True))

    async def run_autocommit_read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` that only reads, outside a transaction (each statement its own snapshot): one round trip
        for a one-statement read."""

        async def read(conn: Conn) -> T:
            self.counters.transactions += 1
            try:
                return await work(conn)
            except psycopg.OperationalError:
                if not conn.broken:
                    raise
                raise _StaleConnectionError from None

        return await self._on_live_connection(read)

    @contextlib.asynccontextmanager
    async def snapshot_reader(self, conn: Conn) -> AsyncIterator[Conn | None]:
        """A second connection reading the snapshot of ``conn``'s transaction (a unit of work of
        ``run_read``: read-only, repeatable read), so two reads of one snapshot run side by side; None when
        the pool has no connection to spare now (a task waits for one, or all are in use) or the spare one
        was found dead: the caller then reads on ``conn`` alone.

        ``conn`` exports its snapshot (``pg_export_snapshot``); the reader's transaction adopts it first
        thing, and ends (with the block) before the pool takes the reader back, while ``conn``'s still runs.
        """
        pool = self._pool
        reader = await _spare_connection(pool) if pool is not None else None
        if pool is None or reader is None:
            yield None
            return
        try:
            if not await _share_snapshot(conn, reader):
                yield None
                return
            self.counters.transactions += 1
            yield reader
        finally:
            try:
                await _end_transaction(reader)
            finally:
                await pool.putconn(reader)  # also when cancelled meanwhile: a connection kept is lost

    async def execute(self, query: LiteralString, params: tuple[object, ...] = ()) -> None:
        """One statement on its own (autocommit). Not re-run on a lost connection: it may have committed."""
        async with self.connection() as conn:
            self.counters.transactions += 1
            await conn.execute(query, params)

    async def _on_live_connection(self, body: Callable[[Conn], Awaitable[T]]) -> T:
        """``body`` on a pooled connection, again on another while the one it got was found dead (the
        server restarted or dropped it while it sat in the pool); at most once per pooled connection."""
        for _ in range(self.settings.pool_max + 1):
            async with self.connection() as conn:
                try:
                    return await body(conn)
                except _StaleConnectionError:
                    continue  # the pool discards the broken connection as it takes it back
        raise PostgresUnavailableError(self.where, "every connection was lost as soon as it was used")

    async def _transaction(
        self, conn: Conn, work: Callable[[Conn], Awaitable[T]], *, read_only: bool = False
    ) -> T:
        """``work`` in one transaction on ``conn``; ``_StaleConnectionError`` when the connection was lost
        before COMMIT was sent (the server rolled everything back, so running it again is safe)."""
        self.counters.transactions += 1
        committing = False
        if read_only:
            # One "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" (not BEGIN, then SET TRANSACTION).
            await conn.set_isolation_level(IsolationLevel.REPEATABLE_READ)
            await conn.set_read_only(True)
        try:
            async with conn.transaction():
                result = await work(conn)
                committing = True
        except psycopg.OperationalError:
            if committing or not conn.broken:
                raise  # a commit whose outcome is unknown, or the server refused the work
            raise _StaleConnectionError from None
        finally:
            if read_only and not conn.broken:
                await conn.set_isolation_level(None)
                await conn.set_read_only(None)
        if not read_only:
            self.counters.commits += 1
        return result


async def side_by_side(*steps: Coroutine[object, object, None]) -> None:
    """Run ``steps`` concurrently (each on its own connection); when one fails, cancel each unfinished one
    once and await them all, then raise that failure as it is.

    Cancelled once, psycopg cancels the running statement on the server and keeps the connection; a second
    cancel while it does makes it close the connection. So no child is cancelled twice (``asyncio.gather``,
    which returns as soon as one child ends cancelled, would lead a ``finally`` to cancel the others again).
    """
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and (failure := task.exception()) is not None:
            raise failure


async def _spare_connection(pool: AsyncConnectionPool[Conn]) -> Conn | None:
    """A pooled connection if one is idle, or the pool may open one, with no other task waiting for one."""
    stats = pool.get_stats()
    idle = stats.get("pool_available", 0) > 0 or stats.get("pool_size", 0) < stats.get("pool_max", 0)
    if not idle or stats.get("requests_waiting", 0) > 0:
        return None
    try:
        reader = await pool.getconn(timeout=_SPARE_WAIT_S)
    except (PoolTimeout, psycopg.Error, OSError):
        return None
    if _cancel_lost():
        await pool.putconn(reader)
        raise asyncio.CancelledError
    return reader


def _cancel_lost() -> bool:
    """Whether this task is being cancelled although no cancel reached it: on Python 3.11,
    ``asyncio.wait_for`` (inside psycopg_pool's wait for a connection) returns the connection handed over as
    the cancel arrives, and the task runs on; a loop stopped by cancelling it (a background worker) would
    never stop. Whoever got a connection raises the cancel then."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _share_snapshot(conn: Conn, reader: Conn) -> bool:
    """Begin a read-only repeatable-read transaction on ``reader`` in ``conn``'s snapshot; False when
    ``reader`` turned out dead (a lost ``conn`` raises: its unit of work reports it)."""
    row = await (await conn.execute("SELECT pg_export_snapshot()")).fetchone()
    assert row is not None
    begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT {}"
    try:
        await reader.execute(sql.SQL(begin).format(str(row[0])))  # one round trip: no parameters
    except psycopg.OperationalError:
        if not reader.broken:
            raise
        return False
    return True


async def _end_transaction(reader: Conn) -> None:
    """Roll back what ``reader`` left open (it only read); a connection still busy with a cancelled
    statement, or dead, is left as it is: the pool discards it when it takes it back."""
    if reader.broken or reader.info.transaction_status not in _ENDABLE:
        return
    with contextlib.suppress(psycopg.Error):
        await reader.execute("ROLLBACK")


_ENDABLE = (TransactionStatus.INTRANS, TransactionStatus.INERROR)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
