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
from gateway.webchat.awaited_replies import AwaitedReplies
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError
from gateway.webchat.feed import ChatFeed

# A browser renders any length; the cap only keeps one runaway reply from becoming one huge event.
WEB_CAPABILITIES = Capabilities(max_text_length=100_000)
_REFUSED = {
    "rate_limited": "You're sending messages faster than I can keep up with; please wait and send it again.",
    "denied": "Sorry, I only talk to people the operator of this bot has allowed.",
}


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
        """Hand one message to the gateway; returns the event id (stable for a retried client id).

        Raises ``MessageRefusedError`` when the gateway refused it (rate limit, access): nothing was
        stored, so the same ``client_message_id`` may be sent again later.
        """
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
            caller_waits=True,
        )
        # Awaited from before the hand-off: another host may run the turn and queue its reply before the
        # sink returns here, and this host must already claim that reply at once.
        self._awaited.accepted(event_id)
        try:
            outcome = await sink(message)
        except BaseException:
            self._awaited.answered(event_id)
            raise
        if outcome is not None and not outcome.accepted:
            self._awaited.answered(event_id)
            default = _REFUSED.get(outcome.reason, "The message was not accepted.")
            raise MessageRefusedError(outcome.reason, outcome.notice or default, outcome.retry_after_s)
        self._last_inbound_at = now
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
