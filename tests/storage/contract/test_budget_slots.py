"""Settled spend on every backend: a scope's spend read through its settled slots plus the newest usage rows
equals the plain sum over ``usage_log`` — before anything is settled, after slots are settled, and when asked
again — for the deployment, a platform and a person. (The backends' own ``scope_spend``, called at chosen
instants, since the claim uses the backend's clock.)"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent_core.storage.records import ModelCall
from gateway.budgets import BudgetPolicy, BudgetSettings
from gateway.storage.budgets import SETTLE_S, SLOT_S, BudgetScope, Periods, ScopeKind, Spend, settled_until
from gateway.storage.postgres import budget_slots as pg_slots
from gateway.storage.postgres.backend import PostgresStorage
from gateway.storage.sqlite import budget_slots as sqlite_slots
from gateway.storage.sqlite.backend import SqliteStorage

from .test_queue import request

if TYPE_CHECKING:
    from gateway.storage import Storage

SCOPES = (
    BudgetScope(ScopeKind.OVERALL),
    BudgetScope(ScopeKind.PLATFORM, "test"),
    BudgetScope(ScopeKind.PERSON, "p-ada"),
)


async def settled(storage: Storage, scope: BudgetScope, periods: Periods, now: float) -> Spend:
    if isinstance(storage, SqliteStorage):
        return await storage.state.run_write(lambda c: sqlite_slots.scope_spend(c, scope, periods, now))
    assert isinstance(storage, PostgresStorage)
    return await storage.db.run_write(lambda c: pg_slots.scope_spend(c, scope, periods, now))


async def plain(storage: Storage, scope: BudgetScope, periods: Periods) -> Spend:
    if isinstance(storage, SqliteStorage):
        return await storage.state.run_read(
            lambda c: sqlite_slots.live_spend(c, scope, periods, periods.month_start)
        )
    assert isinstance(storage, PostgresStorage)
    return await storage.db.run_read(lambda c: pg_slots.live_spend(c, scope, periods, periods.month_start))


def rounded(spend: Spend) -> tuple[float, int, float, int]:
    return (round(spend.day_usd, 9), spend.day_tokens, round(spend.month_usd, 9), spend.month_tokens)


async def test_settled_slots_plus_the_newest_rows_equal_the_plain_sum(storage: Storage) -> None:
    ada = await storage.agent.ensure_conversation("test:dm-ada", request("x", event="e").principal)
    bob = await storage.agent.ensure_conversation(
        "test:dm-bob", request("x", event="e", person="bob").principal
    )
    for conversation, usd in ((ada, 0.1), (ada, 0.2), (bob, 0.4), (ada, None)):
        await storage.agent.add_usage(conversation.tip_session_id, ModelCall(input_tokens=100, cost_usd=usd))
    now = time.time()
    periods = BudgetPolicy(BudgetSettings()).periods(now)
    later = max(now + SETTLE_S + 2 * SLOT_S, periods.day_start + SETTLE_S + 2 * SLOT_S)
    assert settled_until(later) > now  # the rows above fall in slots settled at ``later``
    for scope in SCOPES:
        expected = rounded(await plain(storage, scope, periods))
        assert rounded(await settled(storage, scope, periods, now)) == expected  # nothing settled yet
        assert rounded(await settled(storage, scope, periods, later)) == expected  # slots settled
        assert rounded(await settled(storage, scope, periods, later)) == expected  # read again, not re-added
        assert rounded(await settled(storage, scope, periods, later + 3 * SLOT_S)) == expected
    person = rounded(await settled(storage, SCOPES[2], periods, later))
    assert person == (0.3, 300, 0.3, 300)  # ada's priced calls in USD, all three in tokens


async def slot_rows(storage: Storage) -> int:
    query = "SELECT count(*) FROM budget_slots"
    if isinstance(storage, SqliteStorage):
        return int(await storage.state.run_read(lambda c: c.execute(query).fetchone()[0]))
    assert isinstance(storage, PostgresStorage)

    async def count(conn: Any) -> int:
        row = await (await conn.execute(query)).fetchone()
        return int(row[0])

    return await storage.db.run_read(count)


async def test_a_new_month_starts_from_nothing_and_drops_last_months_slots(storage: Storage) -> None:
    ada = await storage.agent.ensure_conversation("test:dm-ada", request("x", event="e").principal)
    await storage.agent.add_usage(ada.tip_session_id, ModelCall(input_tokens=100, cost_usd=0.5))
    now = time.time()
    periods = BudgetPolicy(BudgetSettings()).periods(now)
    later = max(now, periods.day_start) + SETTLE_S + 2 * SLOT_S
    for scope in SCOPES:
        await settled(storage, scope, periods, later)
    assert await slot_rows(storage) == len(SCOPES)
    following = settled_until(later) + 10 * SLOT_S  # a month (as far as settling knows) after those slots
    next_month = Periods(day_start=following, month_start=following)
    for scope in SCOPES:
        assert await settled(storage, scope, next_month, following + SETTLE_S + SLOT_S) == Spend()
    assert await slot_rows(storage) == 0
