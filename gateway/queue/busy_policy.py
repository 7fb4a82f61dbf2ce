"""What happens to a message that arrives while its conversation's turn is running (a strategy object).

``queue`` (default): the message waits and the next turn answers everything that arrived meanwhile.
``interrupt``: the running turn is cancelled at its next safe point and one turn answers everything.
Either way the sender gets ONE acknowledgement that says which of the two will happen.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import UnknownBusyPolicyError


@dataclass(frozen=True)
class BusyPolicy:
    name: str
    interrupts: bool
    ack_text: str

    @classmethod
    def named(cls, name: str) -> BusyPolicy:
        for policy in (QUEUE_WHEN_BUSY, INTERRUPT_WHEN_BUSY):
            if policy.name == name:
                return policy
        raise UnknownBusyPolicyError(name)


QUEUE_WHEN_BUSY = BusyPolicy(
    name="queue",
    interrupts=False,
    ack_text="Got it — I'll answer that right after the current reply.",
)
INTERRUPT_WHEN_BUSY = BusyPolicy(
    name="interrupt",
    interrupts=True,
    ack_text="Got it — I'm stopping the current reply and will answer everything you sent together.",
)
