"""The catch-up after a READY: each known channel's messages newer than its checkpoint, oldest first.

Invariants: channels are read one at a time through discord.py (the channel, then, only when its
``last_message_id`` is newer than the checkpoint, ``fetch_channel`` and ``history`` newest first down to
the checkpoint: a quiet channel costs one request), at most
the newest ``limit`` per channel (a warning says when older ones were skipped), each handed over oldest
first through the adapter's own hand-off before the next; every channel is released to waiting live
messages once read, skipped or failed, and all at the end of the pass; a channel that is gone or
closed to the bot (404/403) is logged and skipped; a transient failure leaves the window's cursor in
place as a barrier, so the checkpoint cannot pass messages not yet read; nothing here raises.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import discord

from adapters.discord.positions import CatchUpWindow, ChannelPositions

_LOG = logging.getLogger("mnemogate.adapters.discord")

HandOff = Callable[[discord.Message, CatchUpWindow], Awaitable[object]]


async def catch_up(
    client: discord.Client,
    positions: ChannelPositions,
    window: CatchUpWindow,
    *,
    limit: int,
    hand_off: HandOff,
    active: Callable[[], bool],
) -> None:
    """Hand over what every channel of ``window`` received after its start; stops once not ``active``."""
    try:
        for channel_id, start in window.starts.items():
            if not active():
                return
            try:
                complete = await _catch_up_channel(
                    client, positions, channel_id, start, limit, window, hand_off, active
                )
            except (discord.NotFound, discord.Forbidden) as exc:
                _LOG.warning(
                    "discord channel %s skipped by the catch-up: %s", channel_id, exc.text or exc.status
                )
                complete = True
            except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                _LOG.warning(
                    "discord catch-up of channel %s failed (retried at the next READY): %s", channel_id, exc
                )
                complete = False
            if complete:
                await positions.close_window(window, channel_id)
            positions.release(window, channel_id)
    finally:
        # However the pass ends (stopped, cancelled), no live message keeps waiting for it.
        positions.release_all(window)


async def _catch_up_channel(
    client: discord.Client,
    positions: ChannelPositions,
    channel_id: int,
    start: int,
    limit: int,
    window: CatchUpWindow,
    hand_off: HandOff,
    active: Callable[[], bool],
) -> bool:
    """Whether the channel was read to its end (or to ``limit``)."""
    # discord.py's DMChannel and Thread drop last_message_id, so it is read from the raw channel first.
    raw: Mapping[str, Any] = await client.http.get_channel(channel_id)
    last = raw.get("last_message_id")
    if last is not None and int(last) <= start:
        return True  # nothing new since the checkpoint: one request, no history read
    channel = await client.fetch_channel(channel_id)
    if not isinstance(channel, discord.abc.Messageable):
        _LOG.warning(
            "discord channel %s has no messages to catch up (%s)", channel_id, type(channel).__name__
        )
        return True
    newest = await _newest_after(channel, start, limit, positions.history_bound(window, channel_id))
    if len(newest) > limit:
        _LOG.warning(
            "discord catch-up of channel %s hit catch_up_limit=%d; older missed messages are skipped",
            channel_id,
            limit,
        )
        del newest[limit:]
    for message in reversed(newest):
        if not active():
            return False
        await hand_off(message, window)
    return True


async def _newest_after(
    channel: discord.abc.Messageable, start: int, limit: int, before: int | None
) -> list[discord.Message]:
    """Up to ``limit + 1`` messages after ``start`` (and below ``before``), newest first; one more than
    ``limit`` shows that some are skipped."""
    newest: list[discord.Message] = []
    below = discord.Object(id=before) if before is not None else None
    async for message in channel.history(limit=limit + 1, before=below):
        if message.id <= start:
            break
        newest.append(message)
    return newest
