"""What ``serve`` and ``check-config`` say about budgets: a USD limit the configured model cannot reach.

Invariant: a warning names the setting to change, never a guess at a price.
"""

from __future__ import annotations

from agent_core.llm.prices import PriceTable

from .settings import BudgetSettings


def _usd_limits(budgets: BudgetSettings) -> bool:
    every = [budgets.person, budgets.overall, *budgets.platform.values(), *budgets.persons.values()]
    return any(limits.day_usd is not None or limits.month_usd is not None for limits in every)


def budget_warnings(budgets: BudgetSettings, provider: str, model: str, prices: PriceTable) -> list[str]:
    """Warnings for ``budgets`` with ``model`` answering: USD limits its unpriced calls never count toward."""
    if not _usd_limits(budgets):
        return []
    if provider != "offline" and prices.price(model) is not None:
        return []
    name = "the offline model" if provider == "offline" else f"model {model!r}"
    return [
        f"budgets: USD limits are set but {name} has no price, so its calls add nothing to them: "
        f"set usage.prices.{model} or use token limits (day_tokens, month_tokens)"
    ]
