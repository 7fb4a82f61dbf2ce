"""ChannelPositions: the Discord adapter's per-channel checkpoints (key ``channel:<id>``, a message id).

Invariants: a channel's checkpoint only moves forward, and only to a position at or below which every
message seen in that channel was handed over (accepted by the sink, or filtered out as not for the bot).
It never passes a hand-off still in flight, a failed one (a barrier until the same message is handed over
again successfully, e.g. by the catch-up after the next restart) or the cursor of a catch-up window still
reading that channel's history. A failed checkpoint write is logged, never raised: the message it covered
was already accepted, and a lower stored checkpoint only means a re-fetch the gateway's ledger dedupes.
``caught_up`` holds a channel's live messages back until every open window released that channel (read,
skipped or failed), so they reach the gateway after what its catch-up hands over.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.contracts import Checkpoints

_LOG = logging.getLogger("mnemogate.adapters.discord")
_KEY_PREFIX = "channel:"


def checkpoint_key(channel_id: int) -> str:
    return f"{_KEY_PREFIX}{channel_id}"


def channel_of(key: str) -> int | None:
    """The channel id a checkpoint key names, or None for a key this adapter did not write."""
    if not key.startswith(_KEY_PREFIX):
        return None
    rest = key.removeprefix(_KEY_PREFIX)
    return int(rest) if rest.isdigit() else None


@dataclass(frozen=True)
class CatchUpWindow:
    """One catch-up pass, opened at a READY: where each known channel's history read starts."""

    number: int
    starts: Mapping[int, int]
    before: int | None = None
    """Read history only below this message id (the session's start, with a margin): what came later
    arrives live, and must neither take up ``catch_up_limit`` nor overtake older live messages."""


@dataclass
class _Channel:
    written: int  # the highest position handed to the store (or loaded from it)
    stored: bool  # whether the store knows this channel (so a restart catches it up)
    done: int  # the highest message id whose hand-off completed
    busy: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)
    cursors: dict[int, int] = field(default_factory=dict)  # open catch-up window -> its cursor
    reading: set[int] = field(default_factory=set)  # the catch-up windows still reading this channel
    # Live hand-offs held back while ``reading``, in arrival order; released one by one, head first.
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)
    first_live: int | None = None  # the oldest live message that arrived while ``reading``
    admitted: bool = False  # a held-back hand-off was let go and has not resumed yet
    enrolling: asyncio.Future[None] | None = None  # the write that makes the store know this channel

    def safe(self) -> int:
        """The highest position every message at or below which was handed over."""
        limit = self.done
        blockers = self.busy | self.failed
        if blockers:
            limit = min(limit, min(blockers) - 1)
        if self.cursors:
            limit = min(limit, *self.cursors.values())
        return limit


class ChannelPositions:
    """Checkpoint bookkeeping over one adapter's ``Checkpoints``; use from one event loop."""

    def __init__(self, store: Checkpoints) -> None:
        self._store = store
        self._channels: dict[int, _Channel] = {}
        self._windows = itertools.count(1)

    async def load(self) -> None:
        """Read the stored checkpoints; the channels they name are the ones a catch-up reads."""
        for key, position in (await self._store.load()).items():
            channel_id = channel_of(key)
            if channel_id is not None:
                self._channels[channel_id] = _Channel(position, True, done=position)

    def checkpoint(self, channel_id: int) -> int | None:
        """The position last written for ``channel_id`` (or loaded), None for a channel never seen."""
        channel = self._channels.get(channel_id)
        return channel.written if channel is not None else None

    def begin(self, channel_id: int, message_id: int, *, live: bool = True) -> None:
        """A hand-off of ``message_id`` starts; the checkpoint cannot pass it until it is finished."""
        channel = self._channels.get(channel_id)
        if channel is None:
            # A channel seen for the first time: nothing before this message was ours to hand over.
            channel = self._channels[channel_id] = _Channel(message_id - 1, False, done=message_id - 1)
        channel.busy.add(message_id)
        if live and channel.reading:
            channel.first_live = min(message_id, channel.first_live or message_id)

    async def enroll(self, channel_id: int) -> None:
        """Make sure the store knows ``channel_id`` before its first message is handed over, so a crash
        during that hand-off leaves the next start's catch-up reading the channel from just before it."""
        channel = self._channels.get(channel_id)
        if channel is None or channel.stored:
            return
        if channel.enrolling is None:
            # One write however many first messages arrive together; they resume in arrival order.
            channel.enrolling = asyncio.ensure_future(self._advance(channel_id, channel, channel.written))
        await asyncio.shield(channel.enrolling)

    def history_bound(self, window: CatchUpWindow, channel_id: int) -> int | None:
        """Read ``channel_id``'s history below this id: what arrived live is not the catch-up's to hand."""
        channel = self._channels.get(channel_id)
        bounds = [b for b in (window.before, channel.first_live if channel else None) if b is not None]
        return min(bounds) if bounds else None

    async def finish(
        self, channel_id: int, message_id: int, handed: bool, window: CatchUpWindow | None = None
    ) -> None:
        """The hand-off begun with ``begin`` ended: ``handed`` (accepted or filtered) or failed."""
        channel = self._channels[channel_id]
        channel.busy.discard(message_id)
        if window is not None and window.number in channel.cursors:
            channel.cursors[window.number] = max(channel.cursors[window.number], message_id)
        if not handed:
            channel.failed.add(message_id)
            if not channel.stored:
                # Make the restart's catch-up read this channel, from just before the failed message.
                await self._advance(channel_id, channel, channel.written)
            return
        channel.failed.discard(message_id)
        channel.done = max(channel.done, message_id)
        await self._write(channel_id, channel)

    def open_window(self, before: int | None = None) -> CatchUpWindow:
        """A catch-up pass over every known channel; until it closes a channel, it holds its checkpoint."""
        number = next(self._windows)
        starts: dict[int, int] = {}
        for channel_id, channel in self._channels.items():
            starts[channel_id] = channel.written
            channel.cursors[number] = channel.written
            channel.reading.add(number)
            channel.first_live = None
        return CatchUpWindow(number, starts, before)

    def release(self, window: CatchUpWindow, channel_id: int) -> None:
        """``window`` is done with ``channel_id`` (read, skipped or failed): live messages may go on."""
        channel = self._channels.get(channel_id)
        if channel is None:
            return
        channel.reading.discard(window.number)
        self._admit_next(channel)

    def release_all(self, window: CatchUpWindow) -> None:
        for channel_id in window.starts:
            self.release(window, channel_id)

    async def caught_up(self, channel_id: int) -> None:
        """Return once no catch-up window is still reading ``channel_id``'s history and every live
        hand-off of that channel that was held back before this one has gone on (first come, first
        served: a newcomer never slips past earlier ones still being woken up)."""
        channel = self._channels.get(channel_id)
        if channel is None or not (channel.reading or channel.waiting or channel.admitted):
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        channel.waiting.append(turn)
        self._admit_next(channel)
        try:
            await turn
        finally:
            if turn in channel.waiting:
                channel.waiting.remove(turn)  # cancelled while waiting
            elif turn.done() and not turn.cancelled():
                channel.admitted = False
            self._admit_next(channel)

    @staticmethod
    def _admit_next(channel: _Channel) -> None:
        """Let the head of the channel's held-back hand-offs go on, once nothing is being read."""
        if channel.reading or channel.admitted:
            return
        while channel.waiting:
            head = channel.waiting.popleft()
            if not head.done():
                head.set_result(None)
                channel.admitted = True
                return

    async def close_window(self, window: CatchUpWindow, channel_id: int) -> None:
        """``window`` read ``channel_id`` to its end; older windows' cursors there are superseded too."""
        channel = self._channels[channel_id]
        for number in [n for n in channel.cursors if n <= window.number]:
            del channel.cursors[number]
        await self._write(channel_id, channel)

    async def _write(self, channel_id: int, channel: _Channel) -> None:
        target = channel.safe()
        if target <= channel.written:
            return
        channel.written = target
        await self._advance(channel_id, channel, target)

    async def _advance(self, channel_id: int, channel: _Channel, position: int) -> None:
        try:
            await self._store.advance(checkpoint_key(channel_id), position)
            channel.stored = True
        except Exception:
            # The message is already accepted; a stale checkpoint only means a deduped re-fetch later.
            _LOG.warning("discord checkpoint for channel %s not saved", channel_id, exc_info=True)
