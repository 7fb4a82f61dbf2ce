"""The budget as scheduled turns meet it (``RunBudget`` of gateway.schedules.firing).

Invariant: a scheduled prompt is skipped, with the limit as its reason, when the budget that would refuse
its turn at claim time is already reached — read once per firing pass — so a reached budget does not queue
jobs only to refuse them. The claim stays the guard: a run fired before the limit was reached is still
refused (with the notice) when its job is claimed.
"""

from __future__ import annotations

from agent_core.actor import Actor
from gateway.storage.budgets import BudgetLedger, SpendTable
from gateway.storage.schedules import ScheduleRecord

from .policy import BudgetPolicy


class ScheduledBudget:
    """``RunBudget`` over the budget policy and the spend it reads before each firing pass."""

    def __init__(self, policy: BudgetPolicy, ledger: BudgetLedger) -> None:
        self._policy = policy
        self._ledger = ledger
        self._spend = SpendTable()

    async def prepare(self, now: float) -> None:
        if self._policy.enabled:
            self._spend = await self._ledger.spending(self._policy.periods(now))

    def refusal(self, schedule: ScheduleRecord, now: float) -> str | None:
        actor = Actor(schedule.person_id, schedule.conversation_id, schedule.is_admin, schedule.platform)
        for scope in self._policy.scopes(actor):
            refused = self._policy.reached(scope, self._spend.of(scope), now)
            if refused is not None:
                resets = self._policy.clock.local(refused.resets_at)
                return f"the {scope.key} budget ({refused.limit}) is reached until {resets}"
        return None
