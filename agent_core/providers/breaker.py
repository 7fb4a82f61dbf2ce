"""The circuit breaker guarding one provider, and the health record it exposes.

Invariants: the breaker opens after ``failure_threshold`` consecutive failures; while open it refuses
calls until ``reset_after_s`` has passed on the injected clock, then lets exactly one trial call through
(half-open); a success closes it, a failed trial re-opens it for another full delay. Time comes only from
the injected clock, so tests drive it without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

Clock = Callable[[], float]


class HealthState(StrEnum):
    OK = "ok"
    """The last call succeeded (or none failed yet)."""
    DEGRADED = "degraded"
    """Recent calls failed but the circuit is still closed, or it is half-open and being probed."""
    OPEN = "open"
    """Repeated failures: calls are refused without being attempted until the retry delay passes."""
    DISABLED = "disabled"
    """No external provider is configured."""


@dataclass(frozen=True)
class ProviderHealth:
    """What /readyz, /metrics and /status show about the external memory provider."""

    provider: str
    state: HealthState
    consecutive_failures: int = 0
    total_failures: int = 0
    total_calls: int = 0
    last_error: str | None = None
    retry_in_s: float | None = None

    @property
    def degraded(self) -> bool:
        """True when memory recall is impaired (what a "memory degraded" indicator shows)."""
        return self.state in (HealthState.DEGRADED, HealthState.OPEN)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape for ``/readyz`` details and ``/status``."""
        return {
            "provider": self.provider,
            "state": self.state.value,
            "degraded": self.degraded,
            "consecutive_failures": self.consecutive_failures,
            "total_failures": self.total_failures,
            "total_calls": self.total_calls,
            "last_error": self.last_error,
            "retry_in_s": self.retry_in_s,
        }


class CircuitBreaker:
    """Consecutive-failure breaker with a timed half-open probe."""

    def __init__(
        self, *, failure_threshold: int, reset_after_s: float, clock: Clock = time.monotonic
    ) -> None:
        self._threshold = max(failure_threshold, 1)
        self._reset_after_s = reset_after_s
        self._clock = clock
        self._consecutive = 0
        self._total_failures = 0
        self._total_calls = 0
        self._opened_at: float | None = None
        self._probing = False
        self._last_error: str | None = None

    def allow(self) -> bool:
        """Whether a call may go ahead now; while half-open, only one probe at a time."""
        if self._opened_at is None:
            return True
        if self._clock() - self._opened_at < self._reset_after_s or self._probing:
            return False
        self._probing = True
        return True

    def record_success(self) -> None:
        self._total_calls += 1
        self._consecutive = 0
        self._opened_at = None
        self._probing = False

    def record_failure(self, error: str) -> None:
        self._total_calls += 1
        self._total_failures += 1
        self._consecutive += 1
        self._last_error = error
        if self._probing or self._consecutive >= self._threshold:
            self._opened_at = self._clock()
        self._probing = False

    def health(self, provider: str) -> ProviderHealth:
        if self._opened_at is not None and not self._probing:
            state = HealthState.OPEN
            retry_in: float | None = max(self._reset_after_s - (self._clock() - self._opened_at), 0.0)
        else:
            state = HealthState.DEGRADED if self._consecutive or self._probing else HealthState.OK
            retry_in = None
        return ProviderHealth(
            provider=provider,
            state=state,
            consecutive_failures=self._consecutive,
            total_failures=self._total_failures,
            total_calls=self._total_calls,
            last_error=self._last_error,
            retry_in_s=retry_in,
        )
