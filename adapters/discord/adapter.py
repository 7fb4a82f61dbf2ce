"""DiscordAdapter: discord.py 2.7 on the gateway websocket with the message-content intent, translating only.

Invariants: ``start`` returns once the gateway said READY (a rejected token or a missing privileged intent
is an ``AdapterConfigError``) and ``stop`` is its mirror image (close the client, await its task and every
in-flight hand-off), so no message reaches the sink after ``stop`` returns; discord.py's own per-route
rate limiter sleeps through short 429s and a longer one surfaces as a retryable ``SendError`` with
``retry_after``; dropped connections are re-established by discord.py with backoff and shown in
``health`` while down; the token is never logged (discord.py's loggers are held at WARNING).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence

import discord

from adapters.discord.config import DiscordSettings
from adapters.discord.convert import BotIdentity, message_to_inbound
from adapters.discord.render import DISCORD_LIMIT, render_discord
from adapters.discord.send_errors import send_error
from gateway.contracts import (
    Adapter,
    AdapterConfigError,
    AdapterError,
    AdapterHealth,
    Capabilities,
    ChatKind,
    ChatRef,
    InboundMessage,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)

_LOG = logging.getLogger("mnemogate.adapters.discord")
# discord.py logs websocket frames and request bodies at DEBUG; keep its loggers quiet.
_LIBRARY_LOGGERS = ("discord", "discord.http", "discord.gateway", "discord.client", "discord.state")
_THREAD_ALREADY_CREATED = 160004
_STOP_GRACE_S = 5.0
_THREAD_NAME_LIMIT = 90
# Replies may notify the person replied to; the model's text never pings @everyone, roles or users.
_ALLOWED_MENTIONS = discord.AllowedMentions(everyone=False, users=False, roles=False, replied_user=True)

DISCORD_CAPABILITIES = Capabilities(
    max_text_length=DISCORD_LIMIT,
    length_unit="chars",
    max_edit_length=DISCORD_LIMIT,
    can_edit=True,
    can_thread=True,
    can_typing=True,
)


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


class _GatewayClient(discord.Client):
    """discord.py's client with its events routed to the adapter."""

    def __init__(self, adapter: DiscordAdapter, settings: DiscordSettings) -> None:
        super().__init__(
            intents=gateway_intents(),
            max_ratelimit_timeout=settings.max_ratelimit_wait_s,
            guild_ready_timeout=settings.guild_ready_timeout_s,
            chunk_guilds_at_startup=False,
            allowed_mentions=_ALLOWED_MENTIONS,
        )
        self._adapter = adapter

    async def on_message(self, message: discord.Message) -> None:
        await self._adapter.on_message(message)

    async def on_ready(self) -> None:
        self._adapter.on_connection(True, "ready")

    async def on_resumed(self) -> None:
        self._adapter.on_connection(True, "resumed")

    async def on_disconnect(self) -> None:
        self._adapter.on_connection(False, "disconnected, reconnecting")

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        _LOG.warning("discord event handler %s failed", event_method, exc_info=True)


class DiscordAdapter(Adapter):
    """One bot account on the Discord gateway and REST API."""

    name = "discord"
    capabilities = DISCORD_CAPABILITIES

    def __init__(self, settings: DiscordSettings, *, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings.checked()
        self._token = settings.token.get_secret_value()
        self._clock = clock
        self._free_response = frozenset(settings.free_response_channels)
        self._client: _GatewayClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._sink: InboundSink | None = None
        self._identity: BotIdentity | None = None
        self._in_flight: set[asyncio.Task[object]] = set()
        self._connected = False
        self._detail = "not started"
        self._last_inbound: float | None = None
        self._last_send: float | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        if self._client is not None:
            raise AdapterError("discord adapter already started")
        silence_library_loggers()
        client = _GatewayClient(self, self._settings)
        try:
            await client.login(self._token)
        except discord.LoginFailure as exc:
            await client.close()
            raise AdapterConfigError("discord rejected the bot token (check DISCORD_BOT_TOKEN)") from exc
        except (discord.HTTPException, OSError) as exc:
            await client.close()
            raise AdapterError(f"discord is unreachable: {send_error(exc, self._token)}") from exc
        assert client.user is not None  # login fetched /users/@me
        self._identity = BotIdentity(client.user.id, client.user.name)
        self._client, self._sink = client, sink
        self._task = asyncio.create_task(client.connect(reconnect=True), name="discord-gateway")
        await self._wait_until_ready(client, self._task)
        _LOG.info("discord adapter started as %s", client.user.name)

    async def _wait_until_ready(self, client: _GatewayClient, task: asyncio.Task[None]) -> None:
        ready = asyncio.create_task(client.wait_until_ready())
        done, _ = await asyncio.wait(
            {ready, task}, timeout=self._settings.connect_timeout_s, return_when="FIRST_COMPLETED"
        )
        if ready in done:
            return
        ready.cancel()
        failure = task.exception() if task in done else None
        await self.stop()
        if isinstance(failure, discord.PrivilegedIntentsRequired):
            raise AdapterConfigError(
                "discord refused the message-content intent: enable it for the bot in the developer portal"
            ) from failure
        reason = send_error(failure, self._token) if isinstance(failure, Exception) else "timed out"
        raise AdapterError(f"discord gateway did not become ready: {reason}") from failure

    async def stop(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        self._sink = None
        task, self._task = self._task, None
        try:
            await client.close()
            if task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await task
            if self._in_flight:
                await asyncio.wait(set(self._in_flight), timeout=_STOP_GRACE_S)
        finally:
            self._connected, self._detail = False, "stopped"

    def on_connection(self, connected: bool, detail: str) -> None:
        self._connected, self._detail = connected, detail

    # -- inbound ---------------------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        identity, sink = self._identity, self._sink
        if identity is None or sink is None:
            return
        inbound = message_to_inbound(message, identity, self._free_response)
        if inbound is None:
            return
        if self._wants_auto_thread(message, inbound):
            inbound = await self._into_new_thread(message, inbound.text, identity) or inbound
        current = asyncio.current_task()
        if current is not None:
            self._in_flight.add(current)
        try:
            await sink(inbound)
        except Exception:
            # The adapter boundary: the gateway could not store it; Discord will not re-deliver it.
            _LOG.warning("discord message %s was not accepted by the gateway", message.id, exc_info=True)
            return
        finally:
            if current is not None:
                self._in_flight.discard(current)
        self._last_inbound = self._clock()

    def _wants_auto_thread(self, message: discord.Message, inbound: InboundMessage) -> bool:
        return (
            self._settings.auto_thread
            and inbound.chat.kind == ChatKind.GROUP
            and inbound.mentions_bot
            and message.reference is None
            and isinstance(message.channel, discord.TextChannel)
        )

    async def _into_new_thread(
        self, message: discord.Message, text: str, identity: BotIdentity
    ) -> InboundMessage | None:
        """The message re-addressed to a thread started from it; None (answer in the channel) on failure."""
        name = (text.splitlines()[0] if text.strip() else "conversation")[:_THREAD_NAME_LIMIT]
        try:
            await message.create_thread(
                name=name, auto_archive_duration=self._settings.auto_thread_archive_minutes
            )
        except discord.HTTPException as exc:
            # A re-delivered message already has its thread; Discord gives it the message's id.
            if exc.code != _THREAD_ALREADY_CREATED:
                _LOG.warning("discord could not open a thread for message %s: %s", message.id, exc.text)
                return None
        return message_to_inbound(message, identity, self._free_response, auto_thread_id=message.id)

    # -- outbound --------------------------------------------------------------------------------------

    def _channel(self, chat: ChatRef) -> discord.PartialMessageable:
        if self._client is None:
            raise AdapterError("discord adapter is not running")
        target = int(chat.thread_id or chat.chat_id)
        guild = int(chat.workspace) if chat.workspace else None
        return self._client.get_partial_messageable(target, guild_id=guild)

    async def send(self, message: OutboundMessage) -> SendReceipt:
        channel = self._channel(message.chat)
        reply = message.reply_to_message_id
        # In an auto-thread the replied-to message lives in the parent channel (same id as the thread).
        reference = (
            discord.MessageReference(message_id=int(reply), channel_id=channel.id, fail_if_not_exists=False)
            if reply and reply != message.chat.thread_id
            else None
        )
        try:
            if reference is None:
                sent = await channel.send(content=message.text)
            else:
                sent = await channel.send(content=message.text, reference=reference)
        except (discord.DiscordException, OSError, TimeoutError) as exc:
            raise send_error(exc, self._token) from exc
        self._last_send = self._clock()
        return SendReceipt(str(sent.id))

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        partial = self._channel(chat).get_partial_message(int(platform_message_id))
        try:
            await partial.edit(content=text)
        except (discord.DiscordException, OSError, TimeoutError) as exc:
            raise send_error(exc, self._token) from exc
        self._last_send = self._clock()

    async def typing(self, chat: ChatRef) -> None:
        try:
            await self._channel(chat).typing()
        except (discord.DiscordException, OSError, TimeoutError) as exc:
            raise send_error(exc, self._token) from exc

    def render(self, markdown: str) -> Sequence[str]:
        return render_discord(markdown)

    def health(self) -> AdapterHealth:
        client = self._client
        return AdapterHealth(
            connected=client is not None and self._connected and not client.is_closed(),
            last_inbound_at=self._last_inbound,
            last_send_at=self._last_send,
            detail=self._detail,
        )
