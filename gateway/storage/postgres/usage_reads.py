"""``UsageReads`` on PostgreSQL: the usage log summed in SQL, one read-only snapshot per report (days are
the server's ``AT TIME ZONE`` calendar days of the query's zone)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_core.storage.postgres.engine import Conn, PgDatabase

from ..usage_reads import PlatformModelUsage, UsageGroup, UsageLine, UsageQuery, UsageReport, ordered, zone

_SUMS = (
    "count(*), count(*) - count(cost_usd), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), "
    "coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0), coalesce(sum(cost_usd), 0)"
)
_KEYS = {
    UsageGroup.PERSON: "person_id",
    UsageGroup.PLATFORM: "platform",
    UsageGroup.MODEL: "model",
    UsageGroup.KIND: "kind",
    UsageGroup.DAY: "to_char(to_timestamp(at) AT TIME ZONE %s, 'YYYY-MM-DD')",
}


def _line(key: str | None, row: Sequence[Any]) -> UsageLine:
    calls, unpriced, input_tokens, output_tokens, cache_read, cache_write = (int(v) for v in row[:6])
    return UsageLine(
        key, calls, unpriced, input_tokens, output_tokens, cache_read, cache_write, float(row[6])
    )


def _where(query: UsageQuery) -> tuple[str, list[object]]:
    clauses: list[str] = ["at >= %s"]
    params: list[object] = [query.since]
    if query.until is not None:
        clauses.append("at < %s")
        params.append(query.until)
    if query.person_id is not None:
        clauses.append("person_id = %s")
        params.append(query.person_id)
    return " AND ".join(clauses), params


async def usage_report(conn: Conn, query: UsageQuery) -> UsageReport:
    if query.group is UsageGroup.DAY:
        zone(query.timezone)  # refused here, as on SQLite, not by the server
    where, params = _where(query)
    row = await (await conn.execute(f"SELECT {_SUMS} FROM usage_log WHERE {where}", params)).fetchone()
    assert row is not None
    total = _line(None, row)
    group = query.group
    if group is None or total.calls == 0:
        return UsageReport(query, total)
    key = _KEYS[group]
    key_params: list[object] = [query.timezone] if group is UsageGroup.DAY else []
    rows = await (
        await conn.execute(
            f"SELECT {key} AS k, {_SUMS} FROM usage_log WHERE {where} GROUP BY k", [*key_params, *params]
        )
    ).fetchall()
    return UsageReport(query, total, ordered((_line(r[0], r[1:]) for r in rows), group))


async def usage_by_platform_and_model(
    conn: Conn, since: float | None, until: float | None
) -> tuple[PlatformModelUsage, ...]:
    # An open bound is -infinity / +infinity, so the index on ``at`` serves a recent range.
    low = float("-inf") if since is None else since
    high = float("inf") if until is None else until
    rows = await (
        await conn.execute(
            f"SELECT platform, model, {_SUMS} FROM usage_log WHERE at >= %s AND at < %s "
            "GROUP BY platform, model ORDER BY platform NULLS LAST, model NULLS LAST",
            (low, high),
        )
    ).fetchall()
    return tuple(PlatformModelUsage(r[0], r[1], _line(None, r[2:])) for r in rows)


class PgUsageReads:
    """``UsageReads`` over the pool's read-only snapshots."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def usage_report(self, query: UsageQuery) -> UsageReport:
        return await self._db.run_read(lambda conn: usage_report(conn, query))

    async def usage_by_platform_and_model(
        self, since: float | None = None, until: float | None = None
    ) -> tuple[PlatformModelUsage, ...]:
        return await self._db.run_read(lambda conn: usage_by_platform_and_model(conn, since, until))
