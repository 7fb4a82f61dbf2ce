"""The PostgreSQL engine: one async connection pool, units of work as transactions, this process's counters.

Invariants: every connection of the pool uses the configured schema (``search_path``), autocommit outside an
explicit unit of work, the server's statement timeout and this program's application name; ``run_write``
runs its work in one transaction and re-runs it only after a serialization failure or a deadlock (the
server rolled it back, so nothing was half-done), never after a connection lost mid-transaction (the commit
may or may not have happened: the caller gets ``PostgresUnavailableError`` and its own recovery runs);
a server that cannot be reached within ``connect_timeout_s`` is ``PostgresUnavailableError``, so
readiness says not-ready instead of hanging. Times stored by this backend are the server's
(``mg_now()``, epoch seconds), never a host's, so hosts with different clocks agree on every lease.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ..errors import StateUnavailableError
from .settings import PostgresSettings, redacted_dsn

T = TypeVar("T")
Conn = AsyncConnection[TupleRow]
"""A pooled connection as a unit of work sees it (tuple rows; ``%s`` placeholders)."""

_RETRYABLE = (errors.SerializationFailure, errors.DeadlockDetected)
WRITE_ATTEMPTS = 8


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
            check=AsyncConnectionPool.check_connection,
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
                yield conn
        except (psycopg.OperationalError, PoolTimeout, OSError) as exc:
            raise PostgresUnavailableError(self.where, _reason(exc)) from exc

    async def run_write(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` in one read-committed transaction; re-run after a serialization failure or deadlock."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return await self._transaction(work)
            except _RETRYABLE:
                if attempt == WRITE_ATTEMPTS:
                    raise
                self.counters.retries += 1
                await asyncio.sleep(0.005 * attempt)
        raise AssertionError("unreachable")

    async def run_read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` on one snapshot (a read-only repeatable-read transaction: its statements agree)."""
        return await self._transaction(work, read_only=True)

    async def _transaction(self, work: Callable[[Conn], Awaitable[T]], *, read_only: bool = False) -> T:
        async with self.connection() as conn:
            self.counters.transactions += 1
            if read_only:
                async with conn.transaction():
                    await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    return await work(conn)
            async with conn.transaction():
                result = await work(conn)
            self.counters.commits += 1
            return result

    async def execute(self, query: LiteralString, params: tuple[object, ...] = ()) -> None:
        """One statement on its own (autocommit)."""
        async with self.connection() as conn:
            self.counters.transactions += 1
            await conn.execute(query, params)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
