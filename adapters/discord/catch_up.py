"""The catch-up after a READY: each known channel's messages newer than its checkpoint, oldest first.

Invariants: channels are read one at a time through discord.py (``fetch_channel`` then ``history`` with
``after`` the checkpoint), each message handed over through the adapter's own hand-off before the next is
read, at most ``limit`` per channel (a warning says when the limit was hit); a channel that is gone or
closed to the bot (404/403) is logged and skipped; a transient failure leaves the window's cursor in
place as a barrier, so the checkpoint cannot pass messages not yet read; nothing here raises.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import aiohttp
import discord

from adapters.discord.positions import CatchUpWindow, ChannelPositions

_LOG = logging.getLogger("mnemogate.adapters.discord")

HandOff = Callable[[discord.Message, CatchUpWindow], Awaitable[None]]


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
    for channel_id, start in window.starts.items():
        if not active():
            return
        try:
            complete = await _catch_up_channel(client, channel_id, start, limit, window, hand_off, active)
        except (discord.NotFound, discord.Forbidden) as exc:
            _LOG.warning("discord channel %s skipped by the catch-up: %s", channel_id, exc.text or exc.status)
            complete = True
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            _LOG.warning(
                "discord catch-up of channel %s failed (retried at the next READY): %s", channel_id, exc
            )
            complete = False
        if complete:
            await positions.close_window(window, channel_id)


async def _catch_up_channel(
    client: discord.Client,
    channel_id: int,
    start: int,
    limit: int,
    window: CatchUpWindow,
    hand_off: HandOff,
    active: Callable[[], bool],
) -> bool:
    """Whether the channel was read to its end (or to ``limit``)."""
    channel = await client.fetch_channel(channel_id)
    if not isinstance(channel, discord.abc.Messageable):
        _LOG.warning(
            "discord channel %s has no messages to catch up (%s)", channel_id, type(channel).__name__
        )
        return True
    count = 0
    async for message in channel.history(after=discord.Object(id=start), oldest_first=True, limit=limit):
        if not active():
            return False
        count += 1
        await hand_off(message, window)
    if count >= limit:
        _LOG.warning(
            "discord catch-up of channel %s stopped at catch_up_limit=%d; later missed messages are skipped",
            channel_id,
            limit,
        )
    return True
