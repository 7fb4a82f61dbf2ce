"""GatewayClient: discord.py's ``Client`` as the Discord adapter configures it, its events routed back.

Invariants: only guild and DM messages with their content are subscribed (no member chunking at start);
replies never ping anyone but the person replied to; discord.py's own loggers stay at WARNING or above
(they log frames and request bodies at DEBUG); custom endpoints apply to this client only.
"""

from __future__ import annotations

import logging
from typing import Protocol

import discord

from adapters.discord.config import DiscordSettings
from adapters.discord.endpoints import RebasedHTTPClient

_LOG = logging.getLogger("mnemogate.adapters.discord")
_LIBRARY_LOGGERS = ("discord", "discord.http", "discord.gateway", "discord.client", "discord.state")
# Replies may notify the person replied to; the model's text never pings @everyone, roles or users.
_ALLOWED_MENTIONS = discord.AllowedMentions(everyone=False, users=False, roles=False, replied_user=True)


class ClientEvents(Protocol):
    """What the client tells its adapter."""

    async def on_message(self, message: discord.Message) -> None: ...

    def on_connection(self, connected: bool, detail: str) -> None: ...

    def on_new_session(self) -> None: ...


def silence_library_loggers() -> None:
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.WARNING:
            logger.setLevel(logging.WARNING)


def gateway_intents() -> discord.Intents:
    """Guild and DM messages with their content; no members or presences (nothing to chunk at start)."""
    intents = discord.Intents.default()
    intents.message_content = True
    return intents


class GatewayClient(discord.Client):
    """discord.py's client with its events routed to the adapter."""

    def __init__(self, adapter: ClientEvents, settings: DiscordSettings) -> None:
        super().__init__(
            intents=gateway_intents(),
            max_ratelimit_timeout=settings.max_ratelimit_wait_s,
            guild_ready_timeout=settings.guild_ready_timeout_s,
            chunk_guilds_at_startup=False,
            allowed_mentions=_ALLOWED_MENTIONS,
        )
        self._adapter = adapter
        if settings.custom_endpoints:
            # Built before anything connected, so swapping the client is safe; state shares it.
            self.http = RebasedHTTPClient(
                self.loop,
                api_base=settings.api_base_url,
                gateway=settings.gateway_url,
                max_ratelimit_timeout=settings.max_ratelimit_wait_s,
            )
            self._connection.http = self.http

    async def on_message(self, message: discord.Message) -> None:
        await self._adapter.on_message(message)

    async def on_connect(self) -> None:
        # discord.py dispatches this from READY of every fresh IDENTIFY (never on a RESUME), before it
        # schedules any later MESSAGE_CREATE; on_ready comes only up to guild_ready_timeout later.
        self._adapter.on_new_session()

    async def on_ready(self) -> None:
        self._adapter.on_connection(True, "ready")

    async def on_resumed(self) -> None:
        self._adapter.on_connection(True, "resumed")

    async def on_disconnect(self) -> None:
        self._adapter.on_connection(False, "disconnected, reconnecting")

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        _LOG.warning("discord event handler %s failed", event_method, exc_info=True)
