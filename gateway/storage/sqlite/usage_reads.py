"""``UsageReads`` over state.db: the usage log summed in SQL, one read per report.

Days: SQLite knows no time zones, so the day boundaries of the query's zone are computed in Python for the
span the selected calls cover and joined as a JSON list (``json_each``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from agent_core.storage.sqlite.store import StateStore

from ..usage_reads import (
    PlatformModelUsage,
    UsageGroup,
    UsageLine,
    UsageQuery,
    UsageReport,
    calendar_days,
    ordered,
    zone,
)

_SUMS = (
    "count(*), count(*) - count(cost_usd), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), "
    "coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0), coalesce(sum(cost_usd), 0)"
)
_COLUMNS = {
    UsageGroup.PERSON: "person_id",
    UsageGroup.PLATFORM: "platform",
    UsageGroup.MODEL: "model",
    UsageGroup.KIND: "kind",
}


def _line(key: str | None, row: Sequence[Any]) -> UsageLine:
    calls, unpriced, input_tokens, output_tokens, cache_read, cache_write = (int(v) for v in row[:6])
    return UsageLine(
        key, calls, unpriced, input_tokens, output_tokens, cache_read, cache_write, float(row[6])
    )


def _where(query: UsageQuery) -> tuple[str, list[object]]:
    clauses: list[str] = ["at >= ?"]
    params: list[object] = [query.since]
    if query.until is not None:
        clauses.append("at < ?")
        params.append(query.until)
    if query.person_id is not None:
        clauses.append("person_id = ?")
        params.append(query.person_id)
    return " AND ".join(clauses), params


def usage_report(conn: sqlite3.Connection, query: UsageQuery) -> UsageReport:
    if query.group is UsageGroup.DAY:
        zone(query.timezone)  # an unknown zone is refused before anything is read
    where, params = _where(query)
    row = conn.execute(f"SELECT {_SUMS}, min(at), max(at) FROM usage_log WHERE {where}", params).fetchone()
    total = _line(None, row)
    group = query.group
    if group is None or total.calls == 0:
        return UsageReport(query, total)
    if group is UsageGroup.DAY:
        days = json.dumps(calendar_days(float(row[7]), float(row[8]), query.timezone))
        rows = conn.execute(
            f"""SELECT d.name, {_SUMS} FROM usage_log
                JOIN (SELECT json_extract(value, '$[0]') AS name, json_extract(value, '$[1]') AS start,
                             json_extract(value, '$[2]') AS stop FROM json_each(?)) d
                  ON at >= d.start AND at < d.stop
                WHERE {where} GROUP BY d.name""",
            [days, *params],
        ).fetchall()
    else:
        column = _COLUMNS[group]
        rows = conn.execute(
            f"SELECT {column}, {_SUMS} FROM usage_log WHERE {where} GROUP BY {column}", params
        ).fetchall()
    return UsageReport(query, total, ordered((_line(r[0], r[1:]) for r in rows), group))


def usage_by_platform_and_model(
    conn: sqlite3.Connection, since: float | None, until: float | None
) -> tuple[PlatformModelUsage, ...]:
    bounds = [
        (clause, value) for clause, value in (("at >= ?", since), ("at < ?", until)) if value is not None
    ]
    where = f"WHERE {' AND '.join(c for c, _ in bounds)} " if bounds else ""
    rows = conn.execute(
        f"SELECT platform, model, {_SUMS} FROM usage_log {where}"
        "GROUP BY platform, model ORDER BY platform IS NULL, platform, model IS NULL, model",
        [v for _, v in bounds],
    ).fetchall()
    return tuple(PlatformModelUsage(r[0], r[1], _line(None, r[2:])) for r in rows)


class SqliteUsageReads:
    """``UsageReads`` on the store's reader connections."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def usage_report(self, query: UsageQuery) -> UsageReport:
        return await self._state.run_read(lambda c: usage_report(c, query))

    async def usage_by_platform_and_model(
        self, since: float | None = None, until: float | None = None
    ) -> tuple[PlatformModelUsage, ...]:
        return await self._state.run_read(lambda c: usage_by_platform_and_model(c, since, until))
