"""The budget port: what a claim asks a ``BudgetGate`` inside its transaction, and ``BudgetLedger`` reads.

Invariants (every backend, checked by tests/storage/contract/test_budgets.py): a job whose actor the gate
limits is admitted, left queued or refused inside the claim transaction, and that decision is serialised
per budget scope (SQLite: the claim's ``BEGIN IMMEDIATE``; PostgreSQL: a transaction-scoped advisory lock
per scope, taken with ``pg_try_advisory_xact_lock`` — a scope another host is deciding right now is left for
the next claim, never waited for), so every decision sees the spend and the in-flight turns the previous one
left. Spend is read from ``usage_log`` (every model call, auxiliary ones included) since the period's start —
per scope, slots that ended ``SETTLE_S`` ago are summed once into ``budget_slots`` (under the same
serialisation) and read from there, so a decision reads at most a month of slot rows plus the last ~25
minutes of usage rows, however busy the month was; in-flight turns are the scope's jobs claimed and not
finished. A refused job is closed (``done``, error ``budget:<scope kind>``) and never redelivered; its
person gets ONE notice per limit and period (recorded in ``budget_notices``, queued through the outbox like
any reply, kind ``budget``), later refusals in that period are silent — except where the caller waits for
each message's answer (``BudgetRefusal.every_time``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from agent_core.actor import Actor


class ScopeKind(StrEnum):
    """Whose spend a limit caps."""

    OVERALL = "overall"
    PLATFORM = "platform"
    PERSON = "person"


@dataclass(frozen=True, slots=True)
class BudgetScope:
    """One budget's subject: the whole deployment, one platform, or one person (``name``)."""

    kind: ScopeKind
    name: str = ""

    @property
    def key(self) -> str:
        """The scope's one string form (``overall``, ``platform:telegram``, ``person:<id>``)."""
        return self.kind.value if self.kind is ScopeKind.OVERALL else f"{self.kind.value}:{self.name}"


@dataclass(frozen=True, slots=True)
class Periods:
    """Where the current day and month began (epoch seconds); ``month_start <= day_start``."""

    day_start: float
    month_start: float


SLOT_S = 900.0
"""Spend is settled in 15-minute slots: every real time zone's midnight (DST included) falls on one."""
SETTLE_S = 600.0
"""A slot is settled (summed once, then read as one row) once it ended this long ago — far longer than any
transaction that writes a usage row stays open, so no row of a settled slot can still arrive."""


def settled_until(now: float) -> float:
    """The end of the newest slot that may be settled at ``now``."""
    return math.floor((now - SETTLE_S) / SLOT_S) * SLOT_S


def on_slots(periods: Periods) -> bool:
    """Whether the periods begin on slot boundaries (so settled slots add up to them exactly)."""
    return periods.day_start % SLOT_S == 0 and periods.month_start % SLOT_S == 0


@dataclass(frozen=True, slots=True)
class Spend:
    """What a scope spent since the day's and the month's start; tokens count input, output and cache."""

    day_usd: float = 0.0
    day_tokens: int = 0
    month_usd: float = 0.0
    month_tokens: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.day_usd + other.day_usd,
            self.day_tokens + other.day_tokens,
            self.month_usd + other.month_usd,
            self.month_tokens + other.month_tokens,
        )


@dataclass(frozen=True, slots=True)
class ScopeReading:
    """One scope as a claim finds it: its spend, its turns in flight (claimed, not finished, not counting
    the job being decided) and its largest recent turn (None: no finished turn measured yet)."""

    scope: BudgetScope
    spend: Spend
    in_flight: int
    turn_usd: float | None = None
    turn_tokens: int | None = None


class Verdict(StrEnum):
    ADMIT = "admit"
    """Run the turn now."""
    WAIT = "wait"
    """Near a limit with turns of the scope in flight: leave the job queued until they finish."""
    REFUSE = "refuse"
    """A limit is reached: close the job without a model call."""


@dataclass(frozen=True, slots=True)
class BudgetRefusal:
    """Which limit refused a turn (``limit``: ``day_usd``, ``month_tokens``, …), when its period began and
    ends, and the notice its person gets once for that period — or with every refusal when ``every_time``
    (a channel whose caller waits for each message's answer: the web chat, the API)."""

    scope: BudgetScope
    limit: str
    period_start: float
    resets_at: float
    text: str
    every_time: bool = False


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    verdict: Verdict
    refusal: BudgetRefusal | None = None


ADMIT = BudgetDecision(Verdict.ADMIT)


class BudgetGate(Protocol):
    """The budget policy as a claim asks it, inside the claim transaction (pure: no I/O)."""

    def scopes(self, actor: Actor) -> Sequence[BudgetScope]:
        """The scopes whose limits apply to ``actor``'s turns; empty: not limited (exempt, or no limits)."""
        ...

    def periods(self, now: float) -> Periods: ...

    def decide(self, actor: Actor, readings: Sequence[ScopeReading], now: float) -> BudgetDecision: ...


@dataclass(frozen=True, slots=True)
class SpendTable:
    """Spend in the current periods of the deployment, each platform and each person who spent."""

    overall: Spend = Spend()
    platforms: Mapping[str, Spend] = field(default_factory=dict)
    persons: Mapping[str, Spend] = field(default_factory=dict)

    def of(self, scope: BudgetScope) -> Spend:
        if scope.kind is ScopeKind.OVERALL:
            return self.overall
        table = self.platforms if scope.kind is ScopeKind.PLATFORM else self.persons
        return table.get(scope.name, Spend())


@dataclass(frozen=True, slots=True)
class BudgetHold:
    """A refusal in force: ``person_id`` was told ``limit`` of ``scope_key`` holds until ``resets_at``."""

    person_id: str
    scope_key: str
    limit: str
    resets_at: float
    notified_at: float


class BudgetLedger(Protocol):
    """What budgets read outside a claim: spend for the console, metrics and scheduled turns; refusals."""

    async def spending(self, periods: Periods) -> SpendTable:
        """Spend since ``periods`` overall, per platform and per person (one read, no locks)."""
        ...

    async def holds(self, now: float, person_id: str | None = None) -> list[BudgetHold]:
        """Refusals still in force at ``now`` (of one person), the latest reset first."""
        ...

    async def refusals(self) -> dict[str, int]:
        """Turns refused so far, by scope kind (``overall``, ``platform``, ``person``)."""
        ...
