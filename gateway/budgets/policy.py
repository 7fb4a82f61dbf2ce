"""The budget policy: which limits bind a turn, and whether it runs now, waits, or is refused.

Invariants: a turn is refused when any limit that applies to it is reached (spent ≥ cap) — the refusal
names the limit that resets last, since that is when the person can talk again; otherwise, while a scope
has turns in flight and ``spent + (in_flight + 1) × estimate`` would reach one of its caps, the turn waits
until they finish, so near a limit a scope's turns run one at a time and the overspend past a cap is at
most one turn's cost (as long as no turn costs more than the estimate: the largest of the scope's recent
turns, or ``turn_estimate_*`` if higher; with neither known the scope's turns run one at a time). Exempt
actors have no scopes at all. The decision is pure: the storage backend reads the numbers and carries it out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from agent_core.actor import Actor
from gateway.storage.budgets import (
    ADMIT,
    BudgetDecision,
    BudgetRefusal,
    BudgetScope,
    Periods,
    ScopeKind,
    ScopeReading,
    Spend,
    Verdict,
)

from .notice import refusal_text
from .periods import PeriodClock
from .settings import BudgetSettings, Limits

LIMIT_NAMES = ("day_usd", "month_usd", "day_tokens", "month_tokens")
AWAITING_PLATFORMS = frozenset({"web", "api"})
"""Channels whose caller waits for each message's own answer (a page's spinner, an HTTP request): every
refused message there is answered with the notice; chat platforms get it once per limit and period."""


@dataclass(frozen=True, slots=True)
class Cap:
    """One limit of one scope: ``name`` (``day_usd`` …) and its size."""

    name: str
    value: float

    @property
    def in_usd(self) -> bool:
        return self.name.endswith("_usd")

    def spent(self, spend: Spend) -> float:
        return float(getattr(spend, self.name))


class BudgetPolicy:
    """``BudgetGate`` from settings: the claim's budget decision, and the reads built on the same rules."""

    def __init__(self, settings: BudgetSettings, *, awaiting: frozenset[str] = AWAITING_PLATFORMS) -> None:
        self.settings = settings
        self.clock = PeriodClock(settings.timezone)
        self._awaiting = awaiting

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    # -- who is limited ------------------------------------------------------------------------------

    def exempt(self, person_id: str, is_admin: bool) -> bool:
        entry = self.settings.persons.get(person_id)
        if entry is not None and entry.exempt is not None:
            return entry.exempt
        return is_admin and self.settings.exempt_admins

    def limits(self, scope: BudgetScope) -> Limits:
        if scope.kind is ScopeKind.OVERALL:
            return self.settings.overall
        if scope.kind is ScopeKind.PLATFORM:
            return self.settings.platform.get(scope.name, Limits())
        entry = self.settings.persons.get(scope.name)
        return self.settings.person if entry is None else self.settings.person.merged(entry)

    def scopes(self, actor: Actor) -> Sequence[BudgetScope]:
        if not self.enabled or self.exempt(actor.person_id, actor.is_admin):
            return ()
        candidates = [BudgetScope(ScopeKind.OVERALL), BudgetScope(ScopeKind.PLATFORM, actor.platform)]
        if actor.person_id:
            candidates.append(BudgetScope(ScopeKind.PERSON, actor.person_id))
        return tuple(scope for scope in candidates if not self.limits(scope).empty)

    def caps(self, scope: BudgetScope) -> Iterator[Cap]:
        limits = self.limits(scope)
        for name in LIMIT_NAMES:
            value = getattr(limits, name)
            if value is not None:
                yield Cap(name, float(value))

    def periods(self, now: float) -> Periods:
        return self.clock.periods(now)

    # -- the decision --------------------------------------------------------------------------------

    def decide(self, actor: Actor, readings: Sequence[ScopeReading], now: float) -> BudgetDecision:
        refusals = [r for reading in readings if (r := self.reached(reading.scope, reading.spend, now))]
        if refusals:
            refusal = max(refusals, key=lambda r: r.resets_at)
            every_time = actor.platform in self._awaiting
            return BudgetDecision(Verdict.REFUSE, replace(refusal, every_time=every_time))
        if any(self._near(reading) for reading in readings):
            return BudgetDecision(Verdict.WAIT)
        return ADMIT

    def reached(self, scope: BudgetScope, spend: Spend, now: float) -> BudgetRefusal | None:
        """The limit of ``scope`` that ``spend`` has reached and that resets last (None: none reached)."""
        reached = [cap for cap in self.caps(scope) if cap.spent(spend) >= cap.value]
        if not reached:
            return None
        refusals = [self._refusal(scope, cap, now) for cap in reached]
        return max(refusals, key=lambda r: r.resets_at)

    def _near(self, reading: ScopeReading) -> bool:
        """Turns of the scope are in flight and one more (by the estimate) could cross one of its caps."""
        if reading.in_flight == 0:
            return False
        for cap in self.caps(reading.scope):
            estimate = self._estimate(cap, reading)
            if estimate is None:
                return True
            if cap.spent(reading.spend) + (reading.in_flight + 1) * estimate >= cap.value:
                return True
        return False

    def _estimate(self, cap: Cap, reading: ScopeReading) -> float | None:
        if cap.in_usd:
            known = [v for v in (reading.turn_usd, self.settings.turn_estimate_usd) if v is not None]
        else:
            known = [
                float(v) for v in (reading.turn_tokens, self.settings.turn_estimate_tokens) if v is not None
            ]
        return max(known) if known else None

    def _refusal(self, scope: BudgetScope, cap: Cap, now: float) -> BudgetRefusal:
        monthly = cap.name.startswith("month")
        start = self.clock.month_start(now) if monthly else self.clock.day_start(now)
        end = self.clock.month_end(now) if monthly else self.clock.day_end(now)
        text = refusal_text(scope, cap.name, cap.value, self.clock.local(end))
        return BudgetRefusal(scope, cap.name, start, end, text)
