"""The embedded web chat channel's base: an adapter whose "platform" is this gateway's own HTTP server.

It is an ``Adapter`` like any platform's: ``submit`` turns a browser request into an ``InboundMessage``
handed to the gateway's sink (which returns once the message is durably accepted, or refused: then
``MessageRefusedError``, and nothing was stored), and ``send`` publishes a rendered reply to the chat's
feed, where the browser's stream or long poll picks it up. The receipt id is the outbox idempotency key,
which is durable and unique, so a delivery retry is recognised and never shown twice. The chat id is never
a secret: the HTTP routes turn the browser's cookie into an account id first
(``gateway.identity.ClientKey``). ``BrowserChat`` is the web chat built on it; the OpenAI-compatible API
has its own channel (``gateway.api``). ``awaited_replies`` names the messages accepted here whose answer
has not been delivered here yet, so the delivery loop of this process claims them first
(``AwaitedReplies``).
"""

from __future__ import annotations

import time

from gateway.contracts import (
    Adapter,
    AdapterHealth,
    Capabilities,
    ChatKind,
    ChatRef,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)
from gateway.webchat.feed import ChatFeed
from gateway.webchat.hand_off import AwaitedReplies, hand_off

# A browser renders any length; the cap only keeps one runaway reply from becoming one huge event.
WEB_CAPABILITIES = Capabilities(max_text_length=100_000)


class WebChatAdapter(Adapter):
    """One embedded chat channel (``BrowserChat`` is the web chat's)."""

    capabilities = WEB_CAPABILITIES

    def __init__(self, platform: str = "web", feed: ChatFeed | None = None) -> None:
        self.name = platform
        self.feed = feed or ChatFeed()
        self._sink: InboundSink | None = None
        self._last_inbound_at: float | None = None
        self._last_send_at: float | None = None
        self._awaited = AwaitedReplies()

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
        """Hand one message to the gateway (``hand_off``); returns the event id."""
        event_id = await hand_off(
            self._sink, self.chat_ref(chat_id), text, self._awaited, client_message_id=client_message_id
        )
        self._last_inbound_at = time.time()
        return event_id

    def awaited_replies(self) -> frozenset[str]:
        """The messages accepted here whose answer was not delivered here yet (their ``reply_to`` ids)."""
        return self._awaited.ids()

    async def send(self, message: OutboundMessage) -> SendReceipt:
        self._awaited.delivered(message)
        await self.feed.publish(message.chat.chat_id, message.idempotency_key, message.text)
        self._last_send_at = time.time()
        return SendReceipt(platform_message_id=message.idempotency_key)

    def health(self) -> AdapterHealth:
        return AdapterHealth(
            connected=self.started,
            last_inbound_at=self._last_inbound_at,
            last_send_at=self._last_send_at,
            detail="" if self.started else "not started",
        )
