"""Budgets on PostgreSQL: the claim's budget reads and refusals, and ``PgBudgetLedger``.

Invariants: a claim decides a job's budget only while it holds a transaction-scoped advisory lock on every
scope of the job (``pg_try_advisory_xact_lock`` on the scope key's hash, taken in a fixed order); a scope
another transaction is deciding right now is not waited for — the job stays queued for the next claim, so
claims never deadlock on budgets. The lock is released at commit, after the decision's rows (the running
job, the refusal) became visible, and every statement here reads committed rows afresh (read committed),
so the next holder of the lock sees everything the previous one decided: per scope, decisions are one at
a time across every host. Spend and turn sizes are read as in the SQLite backend (gateway/storage/
sqlite/budgets.py): ``usage_log`` since the period's start; a turn's usage is its conversation's rows logged
while its job ran, all on the server's clock (``mg_now()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_core.actor import Actor
from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.budgets import (
    ADMIT,
    BudgetDecision,
    BudgetGate,
    BudgetHold,
    BudgetRefusal,
    BudgetScope,
    Periods,
    ScopeKind,
    ScopeReading,
    Spend,
    SpendTable,
    Verdict,
)

from .budget_slots import SPEND, TOKENS, live_spend, scope_spend
from .outbox import add_outbox

RECENT_TURNS = 20
_LOCK_NAMESPACE = "mnemogate-budget:"
_JOB_FILTER = {
    ScopeKind.OVERALL: "",
    ScopeKind.PLATFORM: " AND platform = %(name)s",
    ScopeKind.PERSON: " AND person_id = %(name)s",
}
WAITING = BudgetDecision(Verdict.WAIT)


async def _one(conn: Conn, query: str, params: dict[str, object] | Sequence[object]) -> tuple[Any, ...]:
    row = await (await conn.execute(query, params)).fetchone()
    if row is None:
        raise LookupError("an aggregate returned no row")
    return tuple(row)


async def in_flight(conn: Conn, scope: BudgetScope) -> int:
    query = "SELECT count(*) FROM turn_jobs WHERE state = 'running'" + _JOB_FILTER[scope.kind]
    return int((await _one(conn, query, {"name": scope.name}))[0])


async def largest_turn(conn: Conn, scope: BudgetScope) -> tuple[float | None, int | None]:
    """The largest cost and token count among the scope's last finished turns that used the model."""
    query = f"""SELECT max(usd), max(tokens) FROM (
          SELECT sum(u.cost_usd) AS usd, sum({TOKENS}) AS tokens
          FROM (SELECT id, conversation_id, started_at, finished_at FROM turn_jobs
                WHERE state IN ('done', 'failed') AND finished_at IS NOT NULL{_JOB_FILTER[scope.kind]}
                ORDER BY id DESC LIMIT %(recent)s) j
          JOIN usage_log u ON u.conversation_id = j.conversation_id
            AND u.at >= j.started_at AND u.at <= j.finished_at
          GROUP BY j.id) turns"""
    row = await _one(conn, query, {"name": scope.name, "recent": RECENT_TURNS})
    return (float(row[0]) if row[0] is not None else None, int(row[1]) if row[1] is not None else None)


async def _lock_scopes(conn: Conn, scopes: Sequence[BudgetScope]) -> bool:
    """Take every scope's advisory lock (this transaction may already hold some); False if one is busy."""
    for scope in sorted(scopes, key=lambda s: s.key):
        row = await _one(
            conn, "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (_LOCK_NAMESPACE + scope.key,)
        )
        if not row[0]:
            return False
    return True


async def budget_decision(conn: Conn, gate: BudgetGate, actor: Actor, now: float) -> BudgetDecision:
    """What the gate decides for one job of ``actor`` under its scopes' locks (WAIT when one is busy)."""
    scopes = gate.scopes(actor)
    if not scopes:
        return ADMIT
    if not await _lock_scopes(conn, scopes):
        return WAITING
    periods = gate.periods(now)
    readings = []
    for scope in scopes:
        running = await in_flight(conn, scope)
        # The turn estimate only matters beside turns in flight (alone, a turn may always run).
        usd, tokens = await largest_turn(conn, scope) if running else (None, None)
        spend = await scope_spend(conn, scope, periods, now)
        readings.append(ScopeReading(scope, spend, running, usd, tokens))
    return gate.decide(actor, readings, now)


async def refuse_job(
    conn: Conn,
    job_id: int,
    holder: str,
    actor: Actor,
    chat: tuple[str | None, str | None],
    refusal: BudgetRefusal,
) -> None:
    """Close the job unanswered (never redelivered), count the refusal, and queue the notice if this is
    the first refusal of the person by that limit in its period (or the caller awaits every answer)."""
    await conn.execute(
        "UPDATE turn_jobs SET state = 'done', claimed_by = %s, started_at = mg_now(), "
        "finished_at = mg_now(), error = %s WHERE id = %s",
        (holder, f"budget:{refusal.scope.kind.value}", job_id),
    )
    await conn.execute(
        "INSERT INTO budget_refusals(scope_kind, refused) VALUES (%s, 1) "
        "ON CONFLICT (scope_kind) DO UPDATE SET refused = budget_refusals.refused + 1",
        (refusal.scope.kind.value,),
    )
    cursor = await conn.execute(
        "INSERT INTO budget_notices(person_id, scope_key, limit_name, period_start, resets_at, notified_at, "
        "job_id) VALUES (%s, %s, %s, %s, %s, mg_now(), %s) ON CONFLICT DO NOTHING",
        (actor.person_id, refusal.scope.key, refusal.limit, refusal.period_start, refusal.resets_at, job_id),
    )
    chat_ref, reply_to = chat
    if (cursor.rowcount or refusal.every_time) and chat_ref is not None:
        await add_outbox(
            conn,
            conversation_id=actor.conversation_id or "",
            platform=actor.platform,
            chat_ref=chat_ref,
            text=refusal.text,
            idempotency_key=f"turn:{job_id}",
            kind="budget",
            job_id=job_id,
            reply_to=reply_to,
        )


async def _spend_rows(conn: Conn, column: str, periods: Periods) -> dict[str, Spend]:
    query = (
        SPEND.replace("SELECT ", f"SELECT u.{column}, ", 1)
        + f" AND u.{column} IS NOT NULL GROUP BY u.{column}"
    )
    since = periods.month_start
    cursor = await conn.execute(
        query, {"day": periods.day_start, "since": since, "until": since + 40 * 86400.0}
    )
    rows = await cursor.fetchall()
    return {str(r[0]): Spend(float(r[1]), int(r[2]), float(r[3]), int(r[4])) for r in rows}


async def spending(conn: Conn, periods: Periods) -> SpendTable:
    overall = await live_spend(conn, BudgetScope(ScopeKind.OVERALL), periods, periods.month_start)
    platforms = await _spend_rows(conn, "platform", periods)
    return SpendTable(overall, platforms, await _spend_rows(conn, "person_id", periods))


async def holds(conn: Conn, now: float, person_id: str | None) -> list[BudgetHold]:
    cursor = await conn.execute(
        "SELECT person_id, scope_key, limit_name, resets_at, notified_at FROM budget_notices "
        "WHERE resets_at > %(now)s AND (%(person)s::text IS NULL OR person_id = %(person)s) "
        "ORDER BY resets_at DESC, person_id",
        {"now": now, "person": person_id},
    )
    rows = await cursor.fetchall()
    return [BudgetHold(str(r[0]), str(r[1]), str(r[2]), float(r[3]), float(r[4])) for r in rows]


async def refusals(conn: Conn) -> dict[str, int]:
    rows = await (await conn.execute("SELECT scope_kind, refused FROM budget_refusals")).fetchall()
    return {str(k): int(n) for k, n in rows}


class PgBudgetLedger:
    """``BudgetLedger`` on an opened ``PgDatabase`` (each method one read-only snapshot)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def spending(self, periods: Periods) -> SpendTable:
        return await self._db.run_read(lambda c: spending(c, periods))

    async def holds(self, now: float, person_id: str | None = None) -> list[BudgetHold]:
        return await self._db.run_read(lambda c: holds(c, now, person_id))

    async def refusals(self) -> dict[str, int]:
        return await self._db.run_read(refusals)
