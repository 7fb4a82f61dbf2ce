"""The schedules of one running deployment: its book, its scheduler, and where it can deliver.

Invariant: the book and the scheduler of one process share the storage's clock (``BackendClock``: the
server's on PostgreSQL) and the platforms it can deliver to, so what may be created and what pauses agree.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from gateway.budgets import BudgetPolicy, ScheduledBudget
from gateway.queue import Signals

from .book import ScheduleBook
from .clock import BackendClock, Clock
from .firing import RunBudget, ScheduleRules, Unlimited
from .scheduler import Scheduler

if TYPE_CHECKING:  # the config package imports this package's settings: no import at run time
    from gateway.config import Settings
    from gateway.storage import Storage


def deliverable_platforms(settings: Settings) -> frozenset[str]:
    """Where a message nobody is waiting for can be delivered: the web chat and the enabled platforms (not
    the API, whose callers only wait for their answers, nor the terminal chat)."""
    return frozenset({"web", *(name for name, options in settings.adapters.items() if options.enabled)})


def schedule_book(
    settings: Settings, storage: Storage, signals: Signals, *, clock: Clock | None = None
) -> ScheduleBook:
    """Schedules on ``storage`` (on its clock unless ``clock`` is given), waking this process's scheduler
    when one is added."""
    return ScheduleBook(
        storage.schedules,
        settings.schedules,
        clock=clock or BackendClock(storage.schedules),
        platforms=deliverable_platforms(settings),
        on_change=signals.schedules.set,
    )


def run_budget(settings: Settings, storage: Storage) -> RunBudget:
    """What a scheduled prompt asks before it fires: the deployment's budgets, or none when none is set."""
    if not settings.budgets.enabled:
        return Unlimited()
    return ScheduledBudget(BudgetPolicy(settings.budgets), storage.budgets)


def scheduler(
    settings: Settings, storage: Storage, signals: Signals
) -> contextlib.AbstractAsyncContextManager[object]:
    """This process's scheduler loop, firing due schedules into their conversations (when enabled)."""
    if not settings.schedules.enabled:
        return contextlib.nullcontext()
    rules = ScheduleRules(
        settings.schedules, platforms=deliverable_platforms(settings), budget=run_budget(settings, storage)
    )
    return Scheduler(storage.schedules, rules, clock=BackendClock(storage.schedules), signals=signals)
