"""The Discord adapter's own background tasks: re-tries of refused hand-offs, and how any task is settled.

Invariants: a refused message gets at most ``len(delays)`` more attempts, each after its delay (a growing
backoff), and one still refused after the last stays a barrier (its checkpoint does not pass it) until a
later start's catch-up reads it again; ``close`` cancels and awaits every retry; ``settle`` waits for tasks
and reads their outcome without ever swallowing a cancellation aimed at its caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

_LOG = logging.getLogger("mnemogate.adapters.discord")

DEFAULT_RETRY_DELAYS_S = (0.5, 2.0, 8.0)


async def settle(*tasks: asyncio.Task[Any] | None, within_s: float | None = None) -> None:
    """Wait (up to ``within_s``) for ``tasks`` to end and read their outcome; the caller stays cancellable.

    ``asyncio.wait`` neither cancels the tasks when the caller is cancelled nor hides that cancellation,
    unlike ``await task`` inside ``suppress(CancelledError)``.
    """
    pending = {task for task in tasks if task is not None}
    if not pending:
        return
    done, _ = await asyncio.wait(pending, timeout=within_s)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            _LOG.debug("discord task %s ended with %r", task.get_name(), task.exception())


class HandOffRetries:
    """The pending re-tries of hand-offs the gateway refused, one task each; use from one event loop."""

    def __init__(self, delays: Sequence[float] = DEFAULT_RETRY_DELAYS_S) -> None:
        self._delays = tuple(delays)
        self._tasks: set[asyncio.Task[None]] = set()

    def schedule(self, message_id: int, attempt: Callable[[], Awaitable[bool]]) -> None:
        """Try ``attempt`` (True once handed over) again after each delay until it succeeds."""
        if not self._delays:
            return
        task = asyncio.create_task(self._run(message_id, attempt), name="discord-hand-off-retry")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, message_id: int, attempt: Callable[[], Awaitable[bool]]) -> None:
        for delay in self._delays:
            await asyncio.sleep(delay)
            if await attempt():
                return
        _LOG.warning(
            "discord message %s still refused after %d retries; caught up again after the next start",
            message_id,
            len(self._delays),
        )

    async def close(self) -> None:
        """Cancel every retry and wait until all have ended."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        await settle(*tasks)
