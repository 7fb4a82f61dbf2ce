"""The wake-up port: learn at once that another process queued a turn job or an outbox row.

Invariants: a backend whose writers can notify (PostgreSQL: LISTEN/NOTIFY) sets the given events as soon
as a transaction that queued work commits in any process on any host, and sets both once more after a
reconnect (notifications sent while it was away are lost); a backend that cannot notify (SQLite) sets
nothing. Either way waiters keep their own bounded poll, so a lost wake-up only delays work, never loses it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol


class Wakeups(Protocol):
    """Cross-process wake-ups of one opened backend."""

    def listen(
        self, *, jobs: asyncio.Event, outbox: asyncio.Event
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """While entered: set ``jobs`` when a job may be claimable, ``outbox`` when a delivery may wait."""
        ...


class NoWakeups:
    """``Wakeups`` of a backend without notifications: listening sets nothing (waiters poll)."""

    @contextlib.asynccontextmanager
    async def listen(self, *, jobs: asyncio.Event, outbox: asyncio.Event) -> AsyncIterator[None]:
        yield
