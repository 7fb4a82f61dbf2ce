"""A budget scope's spend on SQLite, settled slot by slot: what a claim's budget decision reads.

Invariants: a slot (``SLOT_S``) of a scope is summed from ``usage_log`` once, after it ended ``SETTLE_S``
ago, into ``budget_slots``, and the scope's ``budget_watermarks`` row moves past it in the same (claim)
transaction; spend since a period's start is the settled slots from there up to the watermark plus the usage
rows from the watermark on, so it equals the plain sum over ``usage_log`` while reading at most a month of
slot rows and the newest ~25 minutes of usage rows. Only a claim transaction (``BEGIN IMMEDIATE``) settles,
so settling is serialised with the decisions; SQLite commits one writer at a time, so no row of a settled
slot arrives later. Last month's slots of a scope are deleted when it is first settled in a new month.
"""

from __future__ import annotations

import sqlite3

from gateway.storage.budgets import SLOT_S, BudgetScope, Periods, ScopeKind, Spend, on_slots, settled_until

SLOT_SECONDS = int(SLOT_S)

TOKENS = "(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens)"
SPEND = f"""SELECT coalesce(sum(CASE WHEN u.at >= ? THEN u.cost_usd END), 0),
    coalesce(sum(CASE WHEN u.at >= ? THEN {TOKENS} END), 0),
    coalesce(sum(u.cost_usd), 0), coalesce(sum({TOKENS}), 0) FROM usage_log u WHERE u.at >= ?"""
USAGE_FILTER = {
    ScopeKind.OVERALL: "",
    ScopeKind.PLATFORM: " AND u.platform = ?",
    ScopeKind.PERSON: " AND u.person_id = ?",
}


def scope_args(scope: BudgetScope) -> tuple[str, ...]:
    return () if scope.kind is ScopeKind.OVERALL else (scope.name,)


def live_spend(conn: sqlite3.Connection, scope: BudgetScope, periods: Periods, since: float) -> Spend:
    """The scope's usage rows from ``since`` on, split by the day's start."""
    row = conn.execute(
        SPEND + USAGE_FILTER[scope.kind], (periods.day_start, periods.day_start, since, *scope_args(scope))
    ).fetchone()
    return Spend(float(row[0]), int(row[1]), float(row[2]), int(row[3]))


def scope_spend(conn: sqlite3.Connection, scope: BudgetScope, periods: Periods, now: float) -> Spend:
    """What the scope spent since the day's and the month's start (call inside the claim transaction)."""
    if not on_slots(periods):
        return live_spend(conn, scope, periods, periods.month_start)
    watermark = _settle(conn, scope, periods.month_start, now)
    row = conn.execute(
        "SELECT coalesce(sum(CASE WHEN slot_start >= ? THEN usd END), 0), "
        "coalesce(sum(CASE WHEN slot_start >= ? THEN tokens END), 0), coalesce(sum(usd), 0), "
        "coalesce(sum(tokens), 0) FROM budget_slots "
        "WHERE scope_key = ? AND slot_start >= ? AND slot_start < ?",
        (periods.day_start, periods.day_start, scope.key, periods.month_start, watermark),
    ).fetchone()
    settled = Spend(float(row[0]), int(row[1]), float(row[2]), int(row[3]))
    return settled + live_spend(conn, scope, periods, watermark)


def _settle(conn: sqlite3.Connection, scope: BudgetScope, month_start: float, now: float) -> float:
    """Sum the scope's slots that may be settled and are not yet; returns the watermark after that."""
    row = conn.execute(
        "SELECT settled_until FROM budget_watermarks WHERE scope_key = ?", (scope.key,)
    ).fetchone()
    base = max(float(row[0]) if row is not None else month_start, month_start)
    if row is not None and float(row[0]) < month_start:  # the scope's first settling this month
        conn.execute(
            "DELETE FROM budget_slots WHERE scope_key = ? AND slot_start < ?", (scope.key, month_start)
        )
    target = settled_until(now)
    if target <= base:
        return base
    # Slots below the watermark are never summed again (the watermark only moves on), so no row conflicts;
    # were one there (a watermark moved back by hand), it is kept rather than the claim failing.
    conn.execute(
        f"""INSERT OR IGNORE INTO budget_slots(scope_key, slot_start, usd, tokens)
            SELECT ?, CAST(u.at / ? AS INTEGER) * ?, coalesce(sum(u.cost_usd), 0), coalesce(sum({TOKENS}), 0)
            FROM usage_log u WHERE u.at >= ? AND u.at < ?{USAGE_FILTER[scope.kind]} GROUP BY 2""",
        (scope.key, SLOT_SECONDS, SLOT_SECONDS, base, target, *scope_args(scope)),
    )
    conn.execute(
        "INSERT INTO budget_watermarks(scope_key, settled_until) VALUES (?, ?) "
        "ON CONFLICT(scope_key) DO UPDATE SET settled_until = excluded.settled_until",
        (scope.key, target),
    )
    return target
