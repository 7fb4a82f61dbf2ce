"""Per-chat token buckets shared by sends, edits and typing, so a burst never trips a platform's flood limit.

Invariants: ``acquire`` reserves a token at once (the balance may go negative) and sleeps off the deficit,
so concurrent callers on one chat queue up fairly without a lock. When the platform itself says "wait"
(a 429's ``retry_after``), ``hold`` stops the whole chat until then: every ``acquire`` — also one already
sleeping — waits it out and ``try_take`` refuses. Idle, full, unheld buckets are forgotten.
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
    held_until: float = 0.0


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
        bucket = self._bucket(platform, chat_key, now)
        bucket.tokens = min(float(rate.burst), bucket.tokens + (now - bucket.at) * rate.per_s)
        bucket.at = now
        bucket.tokens -= 1.0
        deficit = 0.0 if bucket.tokens >= 0 else -bucket.tokens / rate.per_s
        return max(deficit, bucket.held_until - now)

    def try_take(self, platform: str, chat_key: str, *, keep: int = 0) -> bool:
        """Take one token only if ``keep`` more remain after it and the chat is not held; never borrows, so
        optional work (stream edits, with ``keep=1``) always leaves the reply's own delivery a token."""
        if self.held_for(platform, chat_key) > 0:
            return False
        self.reserve(platform, chat_key)
        bucket = self._buckets[(platform, chat_key)]
        if bucket.tokens >= keep:
            return True
        bucket.tokens += 1.0  # give the token back
        return False

    def hold(self, platform: str, chat_key: str, seconds: float) -> None:
        """The platform asked for ``seconds`` of silence in this chat (a 429's ``retry_after``)."""
        if seconds <= 0:
            return
        now = self._clock()
        bucket = self._bucket(platform, chat_key, now)
        bucket.held_until = max(bucket.held_until, now + seconds)

    def held_for(self, platform: str, chat_key: str) -> float:
        """How much longer the chat is held (0 when it is not)."""
        bucket = self._buckets.get((platform, chat_key))
        return 0.0 if bucket is None else max(0.0, bucket.held_until - self._clock())

    async def acquire(self, platform: str, chat_key: str) -> None:
        wait = self.reserve(platform, chat_key)
        while wait > 0:
            await asyncio.sleep(wait)
            wait = self.held_for(platform, chat_key)  # a hold that began while this caller slept

    def _bucket(self, platform: str, chat_key: str, now: float) -> _Bucket:
        key = (platform, chat_key)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _MAX_TRACKED:
                self._forget_full(now)
            bucket = self._buckets[key] = _Bucket(float(self._rate_for(platform).burst), now)
        return bucket

    def _forget_full(self, now: float) -> None:
        for key, bucket in list(self._buckets.items()):
            rate = self._rate_for(key[0])
            if bucket.held_until <= now and bucket.tokens + (now - bucket.at) * rate.per_s >= rate.burst:
                del self._buckets[key]
