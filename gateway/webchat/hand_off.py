"""How an embedded channel (the web chat, the API) hands a caller's message to the gateway, and which of the
messages it accepted still wait for their answer here.

``hand_off`` builds the ``InboundMessage`` (its event id scoped by chat, so one caller's client ids never
collide with another's in the ledger) and returns once the sink durably accepted it, or raises
``MessageRefusedError`` (nothing was stored) or ``ChannelNotStartedError``. The caller of an embedded
channel waits on THIS process (a browser's stream or long poll, an API request), so its replies should be
delivered here: the delivery loop claims the ``AwaitedReplies`` at once while other processes leave them
alone for a grace period (``gateway.storage.outbox.ReplyRouting``). Invariants: a message is awaited from
before its hand-off; at most ``AWAITED_MAX`` ids are kept, none older than ``AWAITED_FOR_S`` (by then
another process has long delivered the answer after its grace period); an answer — a reply, a failed
turn's error, a command's reply — settles its message, a notice (a busy-policy ack) does not.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict

from gateway.contracts import ChatRef, InboundMessage, InboundSink, OutboundMessage, UserRef
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError

ANSWER_KINDS = frozenset({"reply", "error", "command", "budget"})
"""Deliveries that answer a message; the gateway's notices (a busy-policy ack, ...) are not answers."""
_REFUSED = {
    "rate_limited": "You're sending messages faster than I can keep up with; please wait and send it again.",
    "denied": "Sorry, I only talk to people the operator of this bot has allowed.",
}
AWAITED_MAX = 10_000
AWAITED_FOR_S = 300.0
"""Past this, another process has long delivered the answer (after its grace period): stop naming it."""


class AwaitedReplies:
    """The event ids a channel accepted, until their answer is delivered through it (or they age out)."""

    def __init__(self) -> None:
        self._since: OrderedDict[str, float] = OrderedDict()

    def accepted(self, event_id: str) -> None:
        self._since[event_id] = time.monotonic()
        self._since.move_to_end(event_id)
        while len(self._since) > AWAITED_MAX:
            self._since.popitem(last=False)

    def delivered(self, message: OutboundMessage) -> None:
        if message.kind in ANSWER_KINDS and message.reply_to_message_id is not None:
            self.answered(message.reply_to_message_id)

    def answered(self, event_id: str) -> None:
        """The answer to ``event_id`` was delivered here (a final edit of a streamed reply, say), or none will
        come (the message was refused)."""
        self._since.pop(event_id, None)

    def ids(self) -> frozenset[str]:
        """The messages accepted here whose answer was not delivered here yet (their ``reply_to`` ids)."""
        too_old = time.monotonic() - AWAITED_FOR_S
        while self._since and next(iter(self._since.values())) < too_old:
            self._since.popitem(last=False)
        return frozenset(self._since)


async def hand_off(
    sink: InboundSink | None,
    chat: ChatRef,
    text: str,
    awaited: AwaitedReplies,
    *,
    client_message_id: str | None = None,
    model_text: str | None = None,
) -> str:
    """Hand one caller's message in ``chat`` to the gateway; its event id (stable for a retried client id).

    Raises ``MessageRefusedError`` when the gateway refused it (rate limit, access): nothing was stored, so
    the same ``client_message_id`` may be sent again later.
    """
    if sink is None:
        raise ChannelNotStartedError(f"the {chat.platform} channel is not running")
    event_id = f"{chat.chat_id}:{client_message_id or secrets.token_hex(12)}"
    message = InboundMessage(
        event_id=event_id,
        chat=chat,
        sender=UserRef(platform=chat.platform, user_id=chat.chat_id),
        text=text,
        message_id=event_id,
        sent_at=time.time(),
        caller_waits=True,
        model_text=model_text,
    )
    # Awaited from before the hand-off: another host may run the turn and queue its reply before the sink
    # returns here, and this host must already claim that reply at once.
    awaited.accepted(event_id)
    try:
        outcome = await sink(message)
    except BaseException:
        awaited.answered(event_id)
        raise
    if outcome is not None and not outcome.accepted:
        awaited.answered(event_id)
        default = _REFUSED.get(outcome.reason, "The message was not accepted.")
        raise MessageRefusedError(outcome.reason, outcome.notice or default, outcome.retry_after_s)
    return event_id
