"""The one notice a person gets when a budget refuses their turn: which limit, and when it resets.

Invariant: the text names the limit as its person understands it (theirs, their platform's, the whole
bot's), its size, and the local time it resets; it promises that commands keep working (they run before
turns, so a budget never stops /status or /help).
"""

from __future__ import annotations

from gateway.storage.budgets import BudgetScope, ScopeKind

_PERIOD = {"day": "daily", "month": "monthly"}


def limit_amount(limit: str, cap: float) -> str:
    """``day_usd`` 2.5 → ``$2.50``; ``month_tokens`` 100000 → ``100,000 tokens``."""
    if limit.endswith("_usd"):
        return f"${cap:,.2f}"
    tokens = int(cap)
    return f"{tokens:,} token{'' if tokens == 1 else 's'}"


def whose(scope: BudgetScope) -> str:
    if scope.kind is ScopeKind.PERSON:
        return "your"
    if scope.kind is ScopeKind.PLATFORM:
        return f"this bot's {scope.name}"
    return "this bot's"


def refusal_text(scope: BudgetScope, limit: str, cap: float, resets: str) -> str:
    """The notice: e.g. "You have reached your daily budget ($2.00). I can't answer messages until it
    resets on Sun 6 Dec 2026, 00:00 UTC. Commands such as /status and /help still work." """
    period = _PERIOD[limit.split("_", 1)[0]]
    return (
        f"You have reached {whose(scope)} {period} budget ({limit_amount(limit, cap)}). "
        f"I can't answer messages until it resets on {resets}. "
        "Commands such as /status and /help still work."
    )
