"""The embedded chat channels: the browser web chat ("web") and the OpenAI-compatible API ("api").

Each is an ``Adapter`` like any platform's: ``submit`` turns a browser/API request into an
``InboundMessage`` handed to the gateway's sink (which returns once the message is durably accepted, or
refused: then ``MessageRefusedError``, and nothing was stored), and ``send`` publishes a rendered reply to
the chat's feed, where the browser's stream or long poll picks it up. The receipt id is the outbox
idempotency key, which is durable and unique, so a delivery retry is recognised and never shown twice.
The chat id is never a secret: the HTTP routes turn the browser's cookie or the API token into an
account id first (``gateway.identity.ClientKey``).

``ask`` (the API) is request/response: asks of one chat take turns (``ChatSequence``), and each waits for
the reply that answers ITS message — the delivery whose ``reply_to_message_id`` is its event id and whose
kind is an answer — never for whatever the chat is sent next, so a busy-policy notice or another
request's reply is never taken for its answer. ``render`` never splits a reply, so one delivery is the
whole answer.

The caller waits on THIS process (a browser's stream or long poll, an API request), so its replies should
be delivered here: ``awaited_replies`` names the messages this channel accepted whose answer has not come
yet (at most ``AWAITED_MAX``, none older than ``AWAITED_FOR_S``), which the delivery loop claims at once
while other processes leave them alone for a grace period (``gateway.storage.outbox.ReplyRouting``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

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
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError, ReplyTimeoutError
from gateway.webchat.feed import ChatFeed
from gateway.webchat.sequence import ChatSequence, Slot

# A browser renders any length; the cap only keeps one runaway reply from becoming one huge event.
WEB_CAPABILITIES = Capabilities(max_text_length=100_000)
ANSWER_KINDS = frozenset({"reply", "error", "command"})
"""Deliveries that answer a message; the gateway's notices (a busy-policy ack, ...) are not answers."""

AWAITED_MAX = 10_000
AWAITED_FOR_S = 300.0
"""Past this, another process has long delivered the answer (after its grace period): stop naming it."""

_REFUSED = {
    "rate_limited": "You're sending messages faster than I can keep up with; please wait and send it again.",
    "denied": "Sorry, I only talk to people the operator of this bot has allowed.",
}


@dataclass(frozen=True)
class Reply:
    """The answer to one ask: its text and kind ("reply", "command", or "error" for a failed turn)."""

    text: str
    kind: str


@dataclass
class PendingReply:
    """An ask that was accepted: ``answer`` waits for its reply (``ReplyTimeoutError`` past the deadline)."""

    event_id: str
    _future: asyncio.Future[Reply | None]
    timeout: float

    async def answer(self) -> Reply:
        # Shielded: a caller that goes away does not cancel the wait others' order depends on.
        reply = await asyncio.shield(self._future)
        if reply is None:
            raise ReplyTimeoutError(f"no reply within {self.timeout:g} s")
        return reply


class WebChatAdapter(Adapter):
    """One embedded channel; ``platform`` is "web" for the browser chat and "api" for /v1."""

    capabilities = WEB_CAPABILITIES

    def __init__(self, platform: str = "web", feed: ChatFeed | None = None) -> None:
        self.name = platform
        self.feed = feed or ChatFeed()
        self._sink: InboundSink | None = None
        self._last_inbound_at: float | None = None
        self._last_send_at: float | None = None
        self._sequence = ChatSequence()
        self._awaited: dict[str, asyncio.Future[Reply | None]] = {}
        self._unanswered: OrderedDict[str, float] = OrderedDict()  # accepted event id -> when

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink

    async def stop(self) -> None:
        self._sink = None
        for waiter in list(self._awaited.values()):
            if not waiter.done():
                waiter.set_result(None)
        await self.feed.close()

    @property
    def started(self) -> bool:
        return self._sink is not None

    @property
    def asks_waiting(self) -> int:
        """Asks waiting for an earlier ask of their chat to be answered (for tests and metrics)."""
        return self._sequence.waiting

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
        outcome = await sink(message)
        if outcome is not None and not outcome.accepted:
            default = _REFUSED.get(outcome.reason, "The message was not accepted.")
            raise MessageRefusedError(outcome.reason, outcome.notice or default, outcome.retry_after_s)
        self._last_inbound_at = now
        self._unanswered[event_id] = time.monotonic()
        self._unanswered.move_to_end(event_id)
        while len(self._unanswered) > AWAITED_MAX:
            self._unanswered.popitem(last=False)
        return event_id

    def awaited_replies(self) -> frozenset[str]:
        """The messages accepted here whose answer was not delivered here yet (their ``reply_to`` ids)."""
        too_old = time.monotonic() - AWAITED_FOR_S
        while self._unanswered and next(iter(self._unanswered.values())) < too_old:
            self._unanswered.popitem(last=False)
        return frozenset(self._unanswered)

    async def send(self, message: OutboundMessage) -> SendReceipt:
        if message.kind in ANSWER_KINDS and message.reply_to_message_id is not None:
            self._unanswered.pop(message.reply_to_message_id, None)
        awaited = self._awaited.get(message.reply_to_message_id or "")
        if awaited is not None and message.kind in ANSWER_KINDS:
            if not awaited.done():
                awaited.set_result(Reply(message.text, message.kind))
        else:
            await self.feed.publish(message.chat.chat_id, message.idempotency_key, message.text)
        self._last_send_at = time.time()
        return SendReceipt(platform_message_id=message.idempotency_key)

    async def ask(self, chat_id: str, text: str, *, timeout: float) -> PendingReply:  # noqa: ASYNC109
        """Submit ``text`` once this chat's earlier asks are answered; the reply is awaited on the result.

        The whole ask — its wait for earlier ones included — is bounded by ``timeout``; its slot in the
        chat is held until its reply arrives or the deadline passes, whatever the caller does meanwhile.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        slot = await self._sequence.enter(chat_id, timeout)
        if slot is None:
            raise ReplyTimeoutError(f"earlier requests of this conversation took over {timeout:g} s")
        event_id = f"{chat_id}:{secrets.token_hex(12)}"
        client_id = event_id.rpartition(":")[2]
        waiter: asyncio.Future[Reply | None] = loop.create_future()
        self._awaited[event_id] = waiter
        try:
            await self.submit(chat_id, text, client_id)
        except BaseException:
            self._settle(event_id, slot)
            raise
        expiry = loop.call_at(deadline, _expire, waiter)

        def settled(_: asyncio.Future[Reply | None]) -> None:
            expiry.cancel()
            self._settle(event_id, slot)

        waiter.add_done_callback(settled)
        return PendingReply(event_id, waiter, timeout)

    def _settle(self, event_id: str, slot: Slot) -> None:
        self._awaited.pop(event_id, None)
        slot.release()

    def health(self) -> AdapterHealth:
        return AdapterHealth(
            connected=self.started,
            last_inbound_at=self._last_inbound_at,
            last_send_at=self._last_send_at,
            detail="" if self.started else "not started",
        )


def _expire(waiter: asyncio.Future[Reply | None]) -> None:
    if not waiter.done():
        waiter.set_result(None)  # None: no answer in time (an exception nobody awaits would be logged)
