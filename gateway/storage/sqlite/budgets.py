"""Budgets on SQLite: the claim's budget reads and refusals, and ``SqliteBudgetLedger``.

Invariants: everything a claim decides is read and written inside the claim's ``BEGIN IMMEDIATE``
transaction — SQLite's single writer serialises every budget decision of every process, so each one sees
the usage rows and running jobs the previous one committed. Spend is summed from ``usage_log`` (USD over
priced calls only; tokens are input + output + cache read + cache write); a scope's largest recent turn is
the usage of one of its last ``RECENT_TURNS`` finished jobs, i.e. the rows of the job's conversation logged
while the job ran (one turn runs per conversation at a time, so those rows are that turn's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from agent_core.actor import Actor
from agent_core.storage.sqlite import StateStore
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
)

from .budget_slots import SPEND, TOKENS, live_spend, scope_args, scope_spend
from .outbox import add_outbox

RECENT_TURNS = 20
_JOB_FILTER = {
    ScopeKind.OVERALL: "",
    ScopeKind.PLATFORM: " AND platform = ?",
    ScopeKind.PERSON: " AND person_id = ?",
}


def in_flight(conn: sqlite3.Connection, scope: BudgetScope) -> int:
    row = conn.execute(
        "SELECT count(*) FROM turn_jobs WHERE state = 'running'" + _JOB_FILTER[scope.kind], scope_args(scope)
    ).fetchone()
    return int(row[0])


def largest_turn(conn: sqlite3.Connection, scope: BudgetScope) -> tuple[float | None, int | None]:
    """The largest cost and token count among the scope's last finished turns that used the model."""
    row = conn.execute(
        f"""SELECT max(usd), max(tokens) FROM (
              SELECT sum(u.cost_usd) AS usd, sum({TOKENS}) AS tokens
              FROM (SELECT id, conversation_id, started_at, finished_at FROM turn_jobs
                    WHERE state IN ('done', 'failed') AND finished_at IS NOT NULL{_JOB_FILTER[scope.kind]}
                    ORDER BY id DESC LIMIT ?) j
              JOIN usage_log u ON u.conversation_id = j.conversation_id
                AND u.at >= j.started_at AND u.at <= j.finished_at
              GROUP BY j.id)""",
        (*scope_args(scope), RECENT_TURNS),
    ).fetchone()
    usd = float(row[0]) if row[0] is not None else None
    tokens = int(row[1]) if row[1] is not None else None
    return usd, tokens


def budget_decision(conn: sqlite3.Connection, gate: BudgetGate, actor: Actor, now: float) -> BudgetDecision:
    """What the gate decides for one job of ``actor``, from what this transaction reads (see module doc)."""
    scopes = gate.scopes(actor)
    if not scopes:
        return ADMIT
    periods = gate.periods(now)
    readings = []
    for scope in scopes:
        running = in_flight(conn, scope)
        # The turn estimate only matters beside turns in flight (alone, a turn may always run).
        usd, tokens = largest_turn(conn, scope) if running else (None, None)
        readings.append(ScopeReading(scope, scope_spend(conn, scope, periods, now), running, usd, tokens))
    return gate.decide(actor, readings, now)


def refuse_job(
    conn: sqlite3.Connection,
    job_id: int,
    holder: str,
    actor: Actor,
    chat: tuple[str | None, str | None],
    refusal: BudgetRefusal,
    now: float,
) -> None:
    """Close the job unanswered (never redelivered), count the refusal, and queue the notice if this is
    the first refusal of the person by that limit in its period (or the caller awaits every answer)."""
    conn.execute(
        "UPDATE turn_jobs SET state = 'done', claimed_by = ?, started_at = ?, finished_at = ?, error = ? "
        "WHERE id = ?",
        (holder, now, now, f"budget:{refusal.scope.kind.value}", job_id),
    )
    conn.execute(
        "INSERT INTO budget_refusals(scope_kind, refused) VALUES (?, 1) "
        "ON CONFLICT(scope_kind) DO UPDATE SET refused = refused + 1",
        (refusal.scope.kind.value,),
    )
    first = conn.execute(
        "INSERT OR IGNORE INTO budget_notices(person_id, scope_key, limit_name, period_start, resets_at, "
        "notified_at, job_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            actor.person_id,
            refusal.scope.key,
            refusal.limit,
            refusal.period_start,
            refusal.resets_at,
            now,
            job_id,
        ),
    ).rowcount
    chat_ref, reply_to = chat
    if (first or refusal.every_time) and chat_ref is not None:
        add_outbox(
            conn,
            conversation_id=actor.conversation_id or "",
            platform=actor.platform,
            chat_ref=chat_ref,
            text=refusal.text,
            idempotency_key=f"turn:{job_id}",
            kind="budget",
            now=now,
            job_id=job_id,
            reply_to=reply_to,
        )


def _spend_rows(conn: sqlite3.Connection, column: str, periods: Periods) -> dict[str, Spend]:
    rows = conn.execute(
        SPEND.replace("SELECT ", f"SELECT u.{column}, ", 1)
        + f" AND u.{column} IS NOT NULL GROUP BY u.{column}",
        (periods.day_start, periods.day_start, periods.month_start),
    ).fetchall()
    return {str(r[0]): Spend(float(r[1]), int(r[2]), float(r[3]), int(r[4])) for r in rows}


def spending(conn: sqlite3.Connection, periods: Periods) -> SpendTable:
    overall = live_spend(conn, BudgetScope(ScopeKind.OVERALL), periods, periods.month_start)
    return SpendTable(
        overall, _spend_rows(conn, "platform", periods), _spend_rows(conn, "person_id", periods)
    )


def holds(conn: sqlite3.Connection, now: float, person_id: str | None) -> list[BudgetHold]:
    where, args = (
        ("resets_at > ?", [now])
        if person_id is None
        else ("resets_at > ? AND person_id = ?", [now, person_id])
    )
    rows = conn.execute(
        "SELECT person_id, scope_key, limit_name, resets_at, notified_at FROM budget_notices "
        f"WHERE {where} ORDER BY resets_at DESC, person_id",
        args,
    ).fetchall()
    return [BudgetHold(str(r[0]), str(r[1]), str(r[2]), float(r[3]), float(r[4])) for r in rows]


def refusals(conn: sqlite3.Connection) -> dict[str, int]:
    return {str(k): int(n) for k, n in conn.execute("SELECT scope_kind, refused FROM budget_refusals")}


class SqliteBudgetLedger:
    """``BudgetLedger`` on an opened ``StateStore`` (each method one read snapshot)."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def spending(self, periods: Periods) -> SpendTable:
        return await self._state.run_read(lambda c: spending(c, periods))

    async def holds(self, now: float, person_id: str | None = None) -> list[BudgetHold]:
        return await self._state.run_read(lambda c: holds(c, now, person_id))

    async def refusals(self) -> dict[str, int]:
        return await self._state.run_read(refusals)


__all__: Sequence[str] = ["SqliteBudgetLedger", "budget_decision", "refuse_job"]
