"""What happens to a message that arrives while its conversation is busy, and to a turn told to yield.

The busy policy is the one owner of these decisions; the queue repository and the turn lane only carry
them out. ``queue`` (default): the message waits and the next turn answers everything that arrived
meanwhile. ``interrupt``: the running turn is cancelled at its next safe point and one turn answers
everything. Either way the sender gets ONE acknowledgement that says which of the two will happen. A turn
answers ONE sender with that sender's rights: a message joins a waiting job only when it is the same
person's (with the same admin flag), else it waits for a job of its own. ``/stop`` always wins: the
running turn ends unanswered with a note recorded (never sent), whatever the policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.actor import Actor
from gateway.storage.queue import Admission, ConversationQueue, Interrupt, Placement

from .errors import UnknownBusyPolicyError

STOPPED_NOTE = "(Stopped at the user's request before finishing.)"


@dataclass(frozen=True, slots=True)
class Cut:
    """How a running turn ends when it is told to yield: ``result`` of the lane, and an unsent note."""

    result: str
    note: str | None = None


STOPPED = Cut("stopped", note=STOPPED_NOTE)
INTERRUPTED = Cut("interrupted")


@dataclass(frozen=True, slots=True)
class BusyPolicy:
    """A strategy object: ``admit`` places an arriving message, ``on_interrupt`` ends a flagged turn."""

    name: str
    interrupts: bool
    ack_text: str

    @classmethod
    def named(cls, name: str) -> BusyPolicy:
        for policy in (QUEUE_WHEN_BUSY, INTERRUPT_WHEN_BUSY):
            if policy.name == name:
                return policy
        raise UnknownBusyPolicyError(name)

    def admit(self, queue: ConversationQueue, actor: Actor) -> Admission:
        """Where a message from ``actor`` goes, given the conversation's queue when it arrived."""
        if queue.idle:
            return Admission(Placement.TIP)
        newest = queue.newest_queued
        if newest is not None and newest.joinable and _same_sender(newest.actor, actor):
            return Admission(Placement.JOIN, join_job=newest.id)
        if not queue.running:
            return Admission(Placement.WAIT)  # behind another sender's waiting job: nothing to say yet
        return Admission(Placement.WAIT, interrupt_running=self.interrupts, ack_text=self.ack_text)

    def on_interrupt(self, flag: Interrupt) -> Cut | None:
        """How a running turn that read ``flag`` at a safe point ends (None: it carries on)."""
        if flag is Interrupt.STOP:
            # Recorded, not sent: the next turn must not pick the stopped request up again.
            return STOPPED
        if flag is Interrupt.NEWER:
            return INTERRUPTED
        return None


def _same_sender(waiting: Actor, arriving: Actor) -> bool:
    return waiting.person_id == arriving.person_id and waiting.is_admin == arriving.is_admin


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
