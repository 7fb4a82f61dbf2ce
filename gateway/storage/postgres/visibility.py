"""The visibility horizon: a server time below which no row can still become visible (cursors over times).

PostgreSQL writers commit concurrently, so a row stamped ``mg_now()`` at 10.000 may become visible after
one stamped 10.001 was read; a cursor that moved past 10.001 would then never return it. Every stamp is
taken inside its writer's transaction, so it is at least that transaction's start; the horizon is the
start of the oldest transaction running in this database when it is read (or the reading statement's own
start when none is). Invariant: a row stamped below the horizon was committed before the horizon was
read, so a read whose snapshot is taken *after* it (a later statement or transaction) sees every such
row, and a row that becomes visible later is stamped at or above it. A cursor that reads only below the
horizon therefore never skips a row, at the price of lagging behind the oldest running transaction.

Caveat: ``pg_stat_activity`` shows another role's transactions only to a member of ``pg_read_all_stats``;
hosts that share a database should connect as one role (or be granted that role).
"""

from __future__ import annotations

from agent_core.storage.postgres.engine import Conn, PgDatabase

# statement_timestamp() is taken before the scan: a transaction not yet listed then stamps after it.
_HORIZON = """SELECT extract(epoch FROM least(statement_timestamp(), min(xact_start)))::double precision
    FROM pg_stat_activity
    WHERE datname = current_database() AND backend_type = 'client backend' AND xact_start IS NOT NULL"""


async def visibility_horizon(db: PgDatabase) -> float:
    """The horizon now (epoch seconds of the server's clock); read it before the snapshot it guards."""

    async def read(conn: Conn) -> float:
        row = await (await conn.execute(_HORIZON)).fetchone()
        assert row is not None and row[0] is not None  # least() of a non-null timestamp is never null
        return float(row[0])

    return await db.run_autocommit_read(read)
