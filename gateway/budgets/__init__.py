"""Spend budgets: limits per person, platform and deployment, per day and month, enforced before a turn.

Public: ``BudgetSettings`` (the ``budgets`` config section), ``BudgetPolicy`` (the ``BudgetGate`` a claim
asks), ``PeriodClock`` (day and month boundaries in the budgets' time zone) and ``ScheduledBudget`` (the
``RunBudget`` scheduled prompts ask). The storage backends carry the decision out (gateway.storage.budgets).
"""

from .periods import PeriodClock
from .policy import BudgetPolicy
from .scheduled import ScheduledBudget
from .settings import BudgetSettings, Limits, PersonBudget

__all__ = ["BudgetPolicy", "BudgetSettings", "Limits", "PeriodClock", "PersonBudget", "ScheduledBudget"]
