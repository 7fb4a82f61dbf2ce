"""DiscordAdapter: discord.py 2.7 on the gateway websocket with the message-content intent, translating only.

Invariants: ``start`` returns once the gateway said READY (a rejected token or a missing privileged intent
is an ``AdapterConfigError``) and ``stop`` is its mirror image (close the client, await its task and every
in-flight hand-off), so no message reaches the sink after ``stop`` returns; discord.py's own per-route
rate limiter sleeps through short 429s and a longer one surfaces as a retryable ``SendError`` with
``retry_after``; dropped connections are re-established by discord.py with backoff and shown in
``health`` while down; the token is never logged (discord.py's loggers are held at WARNING). With
checkpoints (``use_checkpoints``) every new session (a READY that is not a RESUME: discord.py's
``on_connect``, dispatched before any of the session's messages) opens a catch-up window at once and reads
what the known channels got meanwhile in the background; a live message of a channel still being caught
up waits for it (order), a refused hand-off is retried a few times in the background, and ``stop`` never
swallows its own cancellation; the checkpoints' own rules are ``ChannelPositions``'.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import logging
import time
from collections.abc import Callable, Sequence

import discord

from adapters.discord.background import DEFAULT_RETRY_DELAYS_S, HandOffRetries, settle
from adapters.discord.catch_up import catch_up
from adapters.discord.config import DiscordSettings
from adapters.discord.convert import BotIdentity, message_to_inbound
from adapters.discord.gateway_client import GatewayClient, silence_library_loggers
from adapters.discord.positions import CatchUpWindow, ChannelPositions
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
    Checkpoints,
    InboundMessage,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)

_LOG = logging.getLogger("mnemogate.adapters.discord")
_THREAD_ALREADY_CREATED = 160004
_STOP_GRACE_S = 5.0
_SESSION_MARGIN = datetime.timedelta(seconds=30)
_THREAD_NAME_LIMIT = 90

DISCORD_CAPABILITIES = Capabilities(
    max_text_length=DISCORD_LIMIT,
    length_unit="chars",
    max_edit_length=DISCORD_LIMIT,
    can_edit=True,
    can_thread=True,
    can_typing=True,
)


class DiscordAdapter(Adapter):
    """One bot account on the Discord gateway and REST API."""

    name = "discord"
    capabilities = DISCORD_CAPABILITIES

    @property
    def holds_connection(self) -> bool:
        return True  # the gateway connection

    def __init__(
        self,
        settings: DiscordSettings,
        *,
        clock: Callable[[], float] = time.time,
        retry_delays_s: Sequence[float] = DEFAULT_RETRY_DELAYS_S,
        stop_grace_s: float = _STOP_GRACE_S,
    ) -> None:
        self._settings = settings.checked()
        self._token = settings.token.get_secret_value()
        self._clock = clock
        self._free_response = frozenset(settings.free_response_channels)
        self._client: GatewayClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._sink: InboundSink | None = None
        self._identity: BotIdentity | None = None
        self._in_flight: set[asyncio.Task[object]] = set()
        self._checkpoints: Checkpoints | None = None
        self._positions: ChannelPositions | None = None
        self._catch_up: asyncio.Task[None] | None = None
        self._retries = HandOffRetries(retry_delays_s)
        self._stop_grace_s = stop_grace_s
        self._connected = False
        self._detail = "not started"
        self._last_inbound: float | None = None
        self._last_send: float | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        self._checkpoints = checkpoints

    async def start(self, sink: InboundSink) -> None:
        if self._client is not None:
            raise AdapterError("discord adapter already started")
        silence_library_loggers()
        if self._checkpoints is not None:
            positions = ChannelPositions(self._checkpoints)
            await positions.load()
            self._positions = positions
        client = GatewayClient(self, self._settings)
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

    async def _wait_until_ready(self, client: GatewayClient, task: asyncio.Task[None]) -> None:
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
        catching_up, self._catch_up = self._catch_up, None
        try:
            # A catch-up between two messages stops now; one inside a hand-off finishes it like on_message.
            if catching_up is not None and catching_up not in self._in_flight:
                catching_up.cancel()
            await client.close()
            await settle(task)
            await settle(*self._in_flight, within_s=self._stop_grace_s)
            if catching_up is not None:
                catching_up.cancel()
            await settle(catching_up)
            await self._retries.close()
        finally:
            self._connected, self._detail = False, "stopped"

    def on_connection(self, connected: bool, detail: str) -> None:
        self._connected, self._detail = connected, detail

    def on_new_session(self) -> None:
        """A fresh session (not a RESUME) began: it missed events, so a catch-up window opens right now."""
        positions, client = self._positions, self._client
        if positions is None or client is None or self._sink is None or not self._settings.catch_up_limit:
            return
        # Opened synchronously before any live message of this session begins, so none can pass the gap.
        # History is read below the session's start; the margin covers clock skew (an overlap is deduped).
        window = positions.open_window(discord.utils.time_snowflake(discord.utils.utcnow() + _SESSION_MARGIN))
        self._catch_up = asyncio.create_task(
            self._run_catch_up(self._catch_up, client, positions, window), name="discord-catch-up"
        )

    async def _run_catch_up(
        self,
        previous: asyncio.Task[None] | None,
        client: GatewayClient,
        positions: ChannelPositions,
        window: CatchUpWindow,
    ) -> None:
        try:
            await settle(previous)
            await catch_up(
                client,
                positions,
                window,
                limit=self._settings.catch_up_limit,
                hand_off=self._hand_off,
                active=lambda: self._sink is not None,
            )
        except Exception:  # the adapter boundary: a failed pass is retried at the next new session
            _LOG.warning("discord catch-up failed", exc_info=True)
        finally:
            positions.release_all(window)  # also when cancelled before catch_up began

    # -- inbound ---------------------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        await self._hand_off(message)

    async def _hand_off(
        self, message: discord.Message, window: CatchUpWindow | None = None, *, retried: bool = False
    ) -> bool:
        """``message`` to the sink (unless filtered out), then its channel's checkpoint moves past it.

        A live message first waits until its channel's catch-up is done; a refused one is retried.
        """
        identity, positions = self._identity, self._positions
        if identity is None or self._sink is None:
            return False
        current = asyncio.current_task()
        if current is not None:
            self._in_flight.add(current)
        if positions is not None:
            positions.begin(message.channel.id, message.id, live=window is None)
        handed = refused = False
        try:
            if positions is not None:
                await positions.enroll(message.channel.id)
            if positions is not None and window is None:
                await positions.caught_up(message.channel.id)
            sink = self._sink  # None once stop began while this message waited
            if sink is not None:
                handed = await self._deliver(message, identity, sink)
                refused = not handed
        finally:
            if positions is not None:
                await positions.finish(message.channel.id, message.id, handed, window)
            if current is not None:
                self._in_flight.discard(current)
        if refused and not retried and self._sink is not None:
            self._retries.schedule(message.id, lambda: self._hand_off(message, retried=True))
        return handed

    async def _deliver(self, message: discord.Message, identity: BotIdentity, sink: InboundSink) -> bool:
        """Whether ``message`` was handed over: accepted by the sink, or not one for the bot at all."""
        inbound = message_to_inbound(message, identity, self._free_response)
        if inbound is None:
            return True
        if self._wants_auto_thread(message, inbound):
            inbound = await self._into_new_thread(message, inbound.text, identity) or inbound
        try:
            await sink(inbound)
        except Exception:
            # The gateway could not store it: its channel's checkpoint stays before it (a barrier).
            _LOG.warning("discord message %s was not accepted by the gateway", message.id, exc_info=True)
            return False
        self._last_inbound = self._clock()
        return True

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
        nonce = send_nonce(message.idempotency_key)
        try:
            if reference is None:
                sent = await channel.send(content=message.text, nonce=nonce)
            else:
                sent = await channel.send(content=message.text, reference=reference, nonce=nonce)
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


def send_nonce(idempotency_key: str) -> str:
    """The nonce of a send: the same for every attempt at one outbox chunk, so Discord (``enforce_nonce``,
    which discord.py sets with every nonce) returns the message it already created instead of posting it
    again when a send is repeated after a crash (Discord remembers nonces for a few minutes); at most 25
    characters, as Discord requires."""
    return hashlib.blake2b(idempotency_key.encode(), digest_size=12).hexdigest()
