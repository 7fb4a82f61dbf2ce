"""A budget scope's spend on PostgreSQL, settled slot by slot: what a claim's budget decision reads.

Invariants: as on SQLite (gateway/storage/sqlite/budget_slots.py) — a scope's slot is summed from
``usage_log`` once, ``SETTLE_S`` after it ended, into ``budget_slots`` with the scope's watermark moved in the
same transaction, and spend is the settled slots up to the watermark plus the usage rows after it. Settling
runs only under the scope's advisory lock (held by the claim deciding it), so two hosts never settle one
scope at once. A usage row is timed by ``clock_timestamp()`` when it is inserted and committed by its short
transaction, so it is visible long before its slot is settled (a transaction open for ``SETTLE_S`` — ten
minutes — after writing a usage row would be the one way to miss it; none of ours does that). Last month's
slots of a scope are deleted when it is first settled in a new month.
"""

from __future__ import annotations

from typing import Any

from agent_core.storage.postgres.engine import Conn
from gateway.storage.budgets import SLOT_S, BudgetScope, Periods, ScopeKind, Spend, on_slots, settled_until

TOKENS = "(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens)"
SPEND = f"""SELECT coalesce(sum(CASE WHEN u.at >= %(day)s THEN u.cost_usd END), 0),
    coalesce(sum(CASE WHEN u.at >= %(day)s THEN {TOKENS} END), 0),
    coalesce(sum(u.cost_usd), 0), coalesce(sum({TOKENS}), 0) FROM usage_log u
    WHERE u.at >= %(since)s AND u.at < %(until)s"""
# Both bounds, so a prepared statement's generic plan takes the range as narrow and uses the index (with a
# lower bound alone it assumes a third of the table and scans all of it); ``until`` lies past any row.
_BEYOND_S = 40 * 86400.0
USAGE_FILTER = {
    ScopeKind.OVERALL: "",
    ScopeKind.PLATFORM: " AND u.platform = %(name)s",
    ScopeKind.PERSON: " AND u.person_id = %(name)s",
}


async def _one(conn: Conn, query: str, params: dict[str, Any]) -> tuple[Any, ...]:
    row = await (await conn.execute(query, params)).fetchone()
    if row is None:
        raise LookupError("an aggregate returned no row")
    return tuple(row)


async def live_spend(conn: Conn, scope: BudgetScope, periods: Periods, since: float) -> Spend:
    """The scope's usage rows from ``since`` on, split by the day's start."""
    params = {"day": periods.day_start, "since": since, "until": since + _BEYOND_S, "name": scope.name}
    row = await _one(conn, SPEND + USAGE_FILTER[scope.kind], params)
    return Spend(float(row[0]), int(row[1]), float(row[2]), int(row[3]))


async def scope_spend(conn: Conn, scope: BudgetScope, periods: Periods, now: float) -> Spend:
    """What the scope spent since the day's and the month's start (call holding the scope's lock)."""
    if not on_slots(periods):
        return await live_spend(conn, scope, periods, periods.month_start)
    watermark = await _settle(conn, scope, periods.month_start, now)
    row = await _one(
        conn,
        """SELECT coalesce(sum(CASE WHEN slot_start >= %(day)s THEN usd END), 0),
              coalesce(sum(CASE WHEN slot_start >= %(day)s THEN tokens END), 0),
              coalesce(sum(usd), 0), coalesce(sum(tokens), 0) FROM budget_slots
           WHERE scope_key = %(key)s AND slot_start >= %(month)s AND slot_start < %(until)s""",
        {"day": periods.day_start, "key": scope.key, "month": periods.month_start, "until": watermark},
    )
    settled = Spend(float(row[0]), int(row[1]), float(row[2]), int(row[3]))
    return settled + await live_spend(conn, scope, periods, watermark)


async def _settle(conn: Conn, scope: BudgetScope, month_start: float, now: float) -> float:
    """Sum the scope's slots that may be settled and are not yet; returns the watermark after that."""
    cursor = await conn.execute(
        "SELECT settled_until FROM budget_watermarks WHERE scope_key = %s", (scope.key,)
    )
    row = await cursor.fetchone()
    base = max(float(row[0]) if row is not None else month_start, month_start)
    if row is not None and float(row[0]) < month_start:  # the scope's first settling this month
        await conn.execute(
            "DELETE FROM budget_slots WHERE scope_key = %s AND slot_start < %s", (scope.key, month_start)
        )
    target = settled_until(now)
    if target <= base:
        return base
    # Slots below the watermark are never summed again (the watermark only moves on), so no row conflicts;
    # were one there (a watermark moved back by hand), it is kept rather than the claim failing.
    params = {"key": scope.key, "slot": SLOT_S, "base": base, "target": target, "name": scope.name}
    await conn.execute(
        f"""INSERT INTO budget_slots(scope_key, slot_start, usd, tokens)
            SELECT %(key)s, floor(u.at / %(slot)s) * %(slot)s, coalesce(sum(u.cost_usd), 0),
                   coalesce(sum({TOKENS}), 0)
            FROM usage_log u WHERE u.at >= %(base)s AND u.at < %(target)s{USAGE_FILTER[scope.kind]}
            GROUP BY 2 ON CONFLICT DO NOTHING""",
        params,
    )
    await conn.execute(
        "INSERT INTO budget_watermarks(scope_key, settled_until) VALUES (%s, %s) "
        "ON CONFLICT (scope_key) DO UPDATE SET settled_until = EXCLUDED.settled_until",
        (scope.key, target),
    )
    return target
