"""In-process wake-ups: set after a local write so local workers and the delivery loop react at once.

Other processes see a local ``set`` only through the storage: on PostgreSQL the runtime's wake-up listener
(``Storage.wakeups``, LISTEN/NOTIFY) sets these events when another host queued work; on SQLite nothing
does, and waiters poll with their short adaptive interval (which stays on PostgreSQL as the fallback).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Signals:
    """``jobs``: a job may be claimable; ``outbox``: a delivery may be waiting; ``schedules``: a schedule was
    added here (it may be due sooner than the scheduler thought). Consumers clear them."""

    jobs: asyncio.Event = field(default_factory=asyncio.Event)
    outbox: asyncio.Event = field(default_factory=asyncio.Event)
    schedules: asyncio.Event = field(default_factory=asyncio.Event)


async def wait_signal(event: asyncio.Event, timeout: float) -> bool:  # noqa: ASYNC109 - a poll interval
    """Wait until ``event`` is set or ``timeout`` passes; True if it was set.

    ``asyncio.timeout`` rather than ``asyncio.wait_for``: on Python 3.11 ``wait_for`` can swallow a
    cancellation that arrives just as the event fires, and a polling loop then never stops.
    """
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
    except TimeoutError:
        return False
    return True
