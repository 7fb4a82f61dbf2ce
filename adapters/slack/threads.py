"""ThreadMemory: the Slack threads the bot takes part in, so a plain reply there is addressed to it.

Invariants: a thread joins when the bot is mentioned in it or answers in it, and stays joined while its
latest activity lies within ``window_s``; with checkpoints (``use``) a join is also recorded, in the
background and at most hourly per thread, under ``thread:{team}:{channel}:{thread_ts}`` at the whole second
of that activity (forward-only; ``flush`` waits for pending recordings), and ``load`` brings back the
threads still inside the window, so a restart forgets none of them, and drops the records of threads quiet
for longer; the in-memory map never holds more than ``capacity`` threads (those outside the window, then
the least recently joined, go first). A checkpoint that cannot be read or written is logged and costs only
that memory, never a message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from adapters.slack.convert import ThreadKey
from gateway.contracts import Checkpoints

_LOG = logging.getLogger("mnemogate.adapters.slack")
_PREFIX = "thread"
DAY_S = 86_400
_RECORD_EVERY_S = 3_600  # the window is days long: an hour's precision is plenty, and saves writes
_FLUSH_GRACE_S = 5.0


def checkpoint_key(thread: ThreadKey) -> str:
    team, channel, thread_ts = thread
    return f"{_PREFIX}:{team}:{channel}:{thread_ts}"


def parse_checkpoint_key(key: str) -> ThreadKey | None:
    """The thread a checkpoint key names, or ``None`` for a key of another kind."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != _PREFIX or not parts[2] or not parts[3]:
        return None
    return (parts[1], parts[2], parts[3])


def activity_second(ts: str) -> int | None:
    """A Slack ``ts`` ("1700000000.000100") as whole epoch seconds; ``None`` if it is not one."""
    try:
        return int(float(ts))
    except ValueError:
        return None


class ThreadMemory:
    """Which threads the bot is part of; a ``Container[ThreadKey]`` for ``event_to_inbound``."""

    def __init__(
        self, *, window_s: float, capacity: int = 10_000, clock: Callable[[], float] = time.time
    ) -> None:
        self._window_s, self._capacity, self._clock = window_s, capacity, clock
        self._active: OrderedDict[ThreadKey, float] = OrderedDict()  # thread -> latest activity
        self._checkpoints: Checkpoints | None = None
        self._recorded: dict[ThreadKey, float] = {}  # what the store was last told, per thread
        self._writes: set[asyncio.Task[None]] = set()
        self._recording = True

    def use(self, checkpoints: Checkpoints) -> None:
        self._checkpoints = checkpoints

    def __contains__(self, item: object) -> bool:
        seen = self._active.get(item) if isinstance(item, tuple) else None
        return seen is not None and seen >= self._clock() - self._window_s

    def __len__(self) -> int:
        return len(self._active)

    async def load(self) -> int:
        """Bring back the recorded threads active within the window; how many are now known."""
        self._recording = True
        if self._checkpoints is None:
            return len(self._active)
        try:
            recorded = await self._checkpoints.load()
        except Exception:
            # The adapter boundary: without the record the bot still answers mentions, only not plain replies.
            _LOG.warning("slack could not load the threads it takes part in", exc_info=True)
            return len(self._active)
        horizon = self._clock() - self._window_s
        found: list[tuple[float, ThreadKey]] = []
        quiet: list[str] = []
        for key, position in recorded.items():
            if (thread := parse_checkpoint_key(key)) is None:
                continue
            if position >= horizon:
                found.append((float(position), thread))
            else:
                quiet.append(key)
        for at, thread in sorted(found):
            self._remember(thread, at)
            self._recorded[thread] = at
        await self._forget(quiet)
        return len(self._active)

    async def _forget(self, keys: list[str]) -> None:
        """Drop the records of threads quiet for longer than the window, so the store does not grow."""
        if not keys or self._checkpoints is None:
            return
        try:
            await self._checkpoints.forget(keys)
        except Exception:
            # The adapter boundary: stale rows only cost space; the next start tries again.
            _LOG.warning("slack could not drop %d quiet thread records", len(keys), exc_info=True)

    def join(self, thread: ThreadKey, activity_ts: str) -> None:
        """The bot was mentioned or answered in ``thread`` at Slack time ``activity_ts``.

        Known at once; recorded in the background (at most once per ``_RECORD_EVERY_S`` per thread), so a
        send that already reached Slack never waits on, or is cancelled during, a state.db write.
        """
        second = activity_second(activity_ts)
        at = float(second) if second is not None else self._clock()
        self._remember(thread, at)
        recorded = self._recorded.get(thread)
        if (
            self._checkpoints is None
            or not self._recording
            or (recorded is not None and at - recorded < _RECORD_EVERY_S)
        ):
            return
        self._recorded[thread] = at  # no second write for this hour while this one runs
        write = asyncio.create_task(self._record(self._checkpoints, thread, int(at)))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _record(self, checkpoints: Checkpoints, thread: ThreadKey, second: int) -> None:
        try:
            await checkpoints.advance(checkpoint_key(thread), second)
        except Exception:
            # The adapter boundary: the message itself is already stored or sent; only the memory is lost.
            _LOG.warning("slack could not record thread %s", checkpoint_key(thread), exc_info=True)
            if int(self._recorded.get(thread, -1)) == second:
                del self._recorded[thread]  # the next activity in this thread tries again

    async def flush(self) -> None:
        """Wait for the recordings still being written, then stop recording (the adapter's stop)."""
        self._recording = False  # stopping: later joins are remembered in memory only, until ``load``
        if not self._writes:
            return
        _, late = await asyncio.wait(set(self._writes), timeout=_FLUSH_GRACE_S)
        for write in late:
            write.cancel()
        if late:
            await asyncio.wait(late)

    def _remember(self, thread: ThreadKey, at: float) -> None:
        previous = self._active.get(thread)
        self._active[thread] = at if previous is None else max(previous, at)
        self._active.move_to_end(thread)
        if len(self._active) <= self._capacity:
            return
        horizon = self._clock() - self._window_s
        for stale in [key for key, seen in self._active.items() if seen < horizon]:
            del self._active[stale]
            self._recorded.pop(stale, None)
        while len(self._active) > self._capacity:
            dropped, _ = self._active.popitem(last=False)
            self._recorded.pop(dropped, None)
