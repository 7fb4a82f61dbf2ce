"""RateLimiter: one token bucket per key (a person, or a client address), refusing politely once per burst.

Invariants: a person may send ``capacity`` messages at once and one more per ``refill_s`` after that;
the first refusal of a burst carries a notice and the following refusals are silent until a message is
allowed again; time comes from an injected monotonic clock; idle buckets (full again) are forgotten, so
memory is bounded by the people active within the last refill period, not by everyone ever seen.
The buckets live in this process (the process running the inbound pipeline).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.access.settings import TokenBucketSettings

_SWEEP_EVERY = 1024  # checks between sweeps of idle buckets


@dataclass(frozen=True)
class RateDecision:
    """Whether a message may proceed, and the notice to send (only on the first refusal of a burst)."""

    allowed: bool
    notice: str | None = None
    retry_after_s: float = 0.0


@dataclass
class _Bucket:
    tokens: float
    updated: float
    notified: bool = False


class RateLimiter:
    """Token buckets per key (``rate_limit`` per person; ``rate_limit.new_web_persons`` per address)."""

    def __init__(self, settings: TokenBucketSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._checks = 0

    def check(self, person_id: str) -> RateDecision:
        """Take one token for ``person_id`` if there is one."""
        settings = self._settings
        if not settings.enabled:
            return RateDecision(True)
        now = self._clock()
        self._checks += 1
        if self._checks % _SWEEP_EVERY == 0:
            self._sweep(now)
        bucket = self._buckets.get(person_id)
        if bucket is None:
            bucket = self._buckets[person_id] = _Bucket(float(settings.capacity), now)
        else:
            self._refill(bucket, now)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            bucket.notified = False
            return RateDecision(True)
        wait = (1.0 - bucket.tokens) * settings.refill_s
        if bucket.notified:
            return RateDecision(False, None, wait)
        bucket.notified = True
        seconds = max(1, math.ceil(wait))
        return RateDecision(
            False,
            f"You're sending messages faster than I can keep up with. Please wait about {seconds} "
            f"second{'s' if seconds != 1 else ''} before your next message; messages sent before then "
            "are not answered.",
            wait,
        )

    def tracked(self) -> int:
        """How many buckets are held (for tests and metrics)."""
        return len(self._buckets)

    def _refill(self, bucket: _Bucket, now: float) -> None:
        elapsed = max(0.0, now - bucket.updated)
        bucket.tokens = min(float(self._settings.capacity), bucket.tokens + elapsed / self._settings.refill_s)
        bucket.updated = now

    def _sweep(self, now: float) -> None:
        capacity = float(self._settings.capacity)
        idle = []
        for person_id, bucket in self._buckets.items():
            self._refill(bucket, now)
            if bucket.tokens >= capacity:
                idle.append(person_id)
        for person_id in idle:
            del self._buckets[person_id]
