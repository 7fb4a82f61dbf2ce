"""The embedded chat channels: the browser web chat ("web") and the OpenAI-compatible API ("api").

Each is an ``Adapter`` like any platform's: ``submit`` turns a browser/API request into an
``InboundMessage`` handed to the gateway's sink (which returns once the message is durably accepted),
and ``send`` publishes a rendered reply chunk to the chat's feed, where the browser's stream or long poll
(or the waiting API request) picks it up. The receipt id is the outbox idempotency key, which is durable
and unique, so a delivery retry is recognised and never shown twice.
"""

from __future__ import annotations

import secrets
import time

from gateway.contracts import (
    Adapter,
    AdapterHealth,
    Capabilities,
    ChatKind,
    ChatRef,
    InboundMessage,
    InboundSink,
    OutboundMessage,
    SendReceipt,
    UserRef,
)
from gateway.webchat.errors import ChannelNotStartedError, ReplyTimeoutError
from gateway.webchat.feed import ChatFeed, Cursor, Delivery

# A browser renders any length; the cap only keeps one runaway reply from becoming one huge event.
WEB_CAPABILITIES = Capabilities(max_text_length=100_000)


class WebChatAdapter(Adapter):
    """One embedded channel; ``platform`` is "web" for the browser chat and "api" for /v1."""

    capabilities = WEB_CAPABILITIES

    def __init__(self, platform: str = "web", feed: ChatFeed | None = None) -> None:
        self.name = platform
        self.feed = feed or ChatFeed()
        self._sink: InboundSink | None = None
        self._last_inbound_at: float | None = None
        self._last_send_at: float | None = None

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink

    async def stop(self) -> None:
        self._sink = None
        await self.feed.close()

    @property
    def started(self) -> bool:
        return self._sink is not None

    def chat_ref(self, chat_id: str) -> ChatRef:
        return ChatRef(platform=self.name, chat_id=chat_id, kind=ChatKind.DM)

    async def submit(self, chat_id: str, text: str, client_message_id: str | None = None) -> str:
        """Hand one message to the gateway; returns the event id (stable for a retried client id)."""
        sink = self._sink
        if sink is None:
            raise ChannelNotStartedError(f"the {self.name} channel is not running")
        # Scoped by chat so one browser's client ids can never collide with another's in the ledger.
        event_id = f"{chat_id}:{client_message_id or secrets.token_hex(12)}"
        now = time.time()
        message = InboundMessage(
            event_id=event_id,
            chat=self.chat_ref(chat_id),
            sender=UserRef(platform=self.name, user_id=chat_id),
            text=text,
            message_id=event_id,
            sent_at=now,
        )
        await sink(message)
        self._last_inbound_at = now
        return event_id

    async def send(self, message: OutboundMessage) -> SendReceipt:
        delivery = await self.feed.publish(message.chat.chat_id, message.idempotency_key, message.text)
        self._last_send_at = time.time()
        return SendReceipt(platform_message_id=delivery.receipt_id)

    async def ask(self, chat_id: str, text: str, *, timeout: float) -> tuple[str, list[Delivery]]:  # noqa: ASYNC109
        """Submit ``text`` and wait for the reply delivered after it: (event id, reply chunks)."""
        cursor: Cursor = self.feed.position()
        event_id = await self.submit(chat_id, text)
        replies = await self.feed.wait(chat_id, cursor, timeout)
        if not replies:
            raise ReplyTimeoutError(f"no reply within {timeout:g} s")
        return event_id, replies

    def health(self) -> AdapterHealth:
        return AdapterHealth(
            connected=self.started,
            last_inbound_at=self._last_inbound_at,
            last_send_at=self._last_send_at,
            detail="" if self.started else "not started",
        )
