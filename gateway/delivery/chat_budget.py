"""Per-chat token buckets shared by sends, edits and typing, so a burst never trips a platform's flood limit.

Invariant: ``acquire`` reserves a token at once (the balance may go negative) and sleeps off the deficit,
so concurrent callers on one chat queue up fairly without a lock. Idle, full buckets are forgotten.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from .settings import ChatRate

_MAX_TRACKED = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class ChatBudgets:
    def __init__(
        self, rate_for: Callable[[str], ChatRate], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate_for = rate_for
        self._clock = clock
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def reserve(self, platform: str, chat_key: str) -> float:
        """Take one token; returns how long the caller must wait before acting (0 when within budget)."""
        rate = self._rate_for(platform)
        now = self._clock()
        key = (platform, chat_key)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _MAX_TRACKED:
                self._forget_full(now)
            bucket = self._buckets[key] = _Bucket(float(rate.burst), now)
        bucket.tokens = min(float(rate.burst), bucket.tokens + (now - bucket.at) * rate.per_s)
        bucket.at = now
        bucket.tokens -= 1.0
        return 0.0 if bucket.tokens >= 0 else -bucket.tokens / rate.per_s

    def try_take(self, platform: str, chat_key: str, *, keep: int = 0) -> bool:
        """Take one token only if ``keep`` more remain after it; never borrows, so optional work (stream
        edits, with ``keep=1``) always leaves the reply's own delivery a token."""
        self.reserve(platform, chat_key)
        bucket = self._buckets[(platform, chat_key)]
        if bucket.tokens >= keep:
            return True
        bucket.tokens += 1.0  # give the token back
        return False

    async def acquire(self, platform: str, chat_key: str) -> None:
        wait = self.reserve(platform, chat_key)
        if wait > 0:
            await asyncio.sleep(wait)

    def _forget_full(self, now: float) -> None:
        for key, bucket in list(self._buckets.items()):
            rate = self._rate_for(key[0])
            if bucket.tokens + (now - bucket.at) * rate.per_s >= rate.burst:
                del self._buckets[key]
