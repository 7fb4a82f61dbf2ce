"""The budgets' Prometheus families, read from the database at scrape time so every host reports the same.

``mnemogate_budget_refusals_total{scope}``: turns a budget refused, by scope kind (overall, platform,
person), counted in the refusing transaction; ``mnemogate_budget_spend_ratio{scope,limit}``: spend in the
current period over the limit (1 or more: reached) for the deployment and each limited platform, and for
``scope="person"`` the highest ratio of any person; ``mnemogate_budget_persons_over``: persons refused now.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from gateway.budgets import BudgetPolicy
from gateway.storage.budgets import BudgetLedger, BudgetScope, ScopeKind, SpendTable


class BudgetMetrics(Collector):
    """Yields the families from the last ``refresh()`` (called before each scrape)."""

    def __init__(self, policy: BudgetPolicy, ledger: BudgetLedger) -> None:
        self._policy = policy
        self._ledger = ledger
        self._spend = SpendTable()
        self._refusals: dict[str, int] = {}
        self._over = 0

    async def refresh(self) -> None:
        now = time.time()
        self._refusals = await self._ledger.refusals()
        self._over = len({hold.person_id for hold in await self._ledger.holds(now)})
        if self._policy.enabled:
            self._spend = await self._ledger.spending(self._policy.periods(now))

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        refusals = CounterMetricFamily(
            "mnemogate_budget_refusals", "Turns refused by a budget, by scope", labels=["scope"]
        )
        for kind in ScopeKind:
            refusals.add_metric([kind.value], self._refusals.get(kind.value, 0))
        yield refusals
        ratio = GaugeMetricFamily(
            "mnemogate_budget_spend_ratio",
            "Spend in the current period over the limit (person: the highest of any person)",
            labels=["scope", "limit"],
        )
        scopes = [BudgetScope(ScopeKind.OVERALL)]
        scopes += [BudgetScope(ScopeKind.PLATFORM, name) for name in sorted(self._policy.settings.platform)]
        for scope in scopes:
            for cap in self._policy.caps(scope):
                ratio.add_metric([scope.key, cap.name], cap.spent(self._spend.of(scope)) / cap.value)
        for name in ("day_usd", "month_usd", "day_tokens", "month_tokens"):
            ratios = [
                cap.spent(spend) / cap.value
                for person, spend in self._spend.persons.items()
                for cap in self._policy.caps(BudgetScope(ScopeKind.PERSON, person))
                if cap.name == name
            ]
            if ratios:
                ratio.add_metric(["person", name], max(ratios))
        yield ratio
        over = GaugeMetricFamily("mnemogate_budget_persons_over", "Persons a budget refuses until it resets")
        over.add_metric([], self._over)
        yield over
