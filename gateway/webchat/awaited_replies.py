"""Which messages an embedded channel accepted whose answer it has not delivered yet (its callers wait here).

The caller of an embedded channel waits on THIS process (a browser's stream or long poll, an API request),
so its replies should be delivered here: the delivery loop claims these at once while other processes
leave them alone for a grace period (``gateway.storage.outbox.ReplyRouting``). Invariants: at most
``AWAITED_MAX`` ids are kept, none older than ``AWAITED_FOR_S`` (by then another process has long
delivered the answer after its grace period); an answer — a reply, a failed turn's error, a command's
reply — settles its message, a notice (a busy-policy ack) does not.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from gateway.contracts import OutboundMessage

ANSWER_KINDS = frozenset({"reply", "error", "command"})
"""Deliveries that answer a message; the gateway's notices (a busy-policy ack, ...) are not answers."""
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
