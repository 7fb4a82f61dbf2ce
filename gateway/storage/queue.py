"""The turn queue's port: jobs, conversation leases and the inbound ledger, as frozen records and one
``TurnQueueRepository`` Protocol that every backend implements.

Invariants (every backend, checked by tests/storage/contract/test_queue.py): an inbound event yields at
most one user message and at most one job; the jobs of one conversation run one at a time, in the order
they were enqueued, because a conversation has at most one live lease; a lease that expires (its holder
died) returns its job to the queue; ``finish`` checks that the caller still holds the job, and queues the
reply in the same transaction that closes it, keyed by the job id, so a reply is queued exactly once.
Leases and expiries are measured on the backend's clock: callers pass durations, never timestamps.
Ordering rule: the enqueues of one conversation are serialised by the backend (SQLite: its single writer;
a concurrent backend: the conversation's row lock, taken before anything else is read), so "oldest job"
and the order of held messages are the order in which those enqueues committed, never a global id order.
Who decides what a message does to a busy conversation is not the repository: ``enqueue`` asks an
``AdmissionRule`` (the gateway's busy policy) and carries out the ``Admission`` it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal

from .budgets import BudgetGate


class Interrupt(IntEnum):
    """What a running job is asked to do at its next safe point."""

    NONE = 0
    NEWER = 1
    """Newer messages arrived and the busy policy interrupts: yield so one turn answers everything."""
    STOP = 2
    """The user sent /stop: end the turn without answering."""


class Placement(StrEnum):
    """Where an admitted message goes."""

    TIP = "tip"
    """The conversation is idle: into the transcript now, with a new job to answer it."""
    JOIN = "join"
    """Held for the newest queued job (``Admission.join_job``); that job answers it too, no new job."""
    WAIT = "wait"
    """Held for a new job of its own, which runs after the running and queued ones."""


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """A job waiting to be claimed, and who it acts for; ``joinable``: arriving messages may join it (a
    scheduled run's job is never joined: its held message must stay the newest thing it answers)."""

    id: int
    actor: Actor
    joinable: bool = True


@dataclass(frozen=True, slots=True)
class ConversationQueue:
    """A conversation's queue as one arriving message finds it (inside the enqueue transaction)."""

    running: int
    queued: int
    newest_queued: QueuedJob | None = None

    @property
    def idle(self) -> bool:
        return not self.running and not self.queued


@dataclass(frozen=True, slots=True)
class Admission:
    """What enqueue does with a message, as the busy policy decided it.

    ``interrupt_running``: flag the running job ``Interrupt.NEWER``; ``ack_text``: queue this notice to
    the sender in the same transaction (keyed by the new job, so a retried event never sends it twice).
    """

    placement: Placement
    join_job: int | None = None
    interrupt_running: bool = False
    ack_text: str | None = None


class AdmissionRule(Protocol):
    """Decides, inside the enqueue transaction, what an arriving message does (the busy policy)."""

    def admit(self, queue: ConversationQueue, actor: Actor) -> Admission: ...


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything one inbound message contributes to the queue.

    ``session_key`` and ``principal`` find or create the live conversation; ``chat_ref``/``reply_to`` say
    where the job's reply goes; ``idle_after_s``: end the live conversation first when it has been quiet
    that long (None: never); ``message`` is persisted through the backend's redaction boundary.
    """

    actor: Actor
    event_id: str
    session_key: str
    principal: Principal
    chat_ref: str
    reply_to: str | None
    message: NewMessage
    idle_after_s: float | None = None


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What enqueue did; ``behind_running``: a new job waits for a running turn (its ack is queued)."""

    duplicate: bool
    conversation_id: str | None = None
    job_id: int | None = None
    coalesced: bool = False
    behind_running: bool = False
    ended_idle: str | None = None


@dataclass(frozen=True, slots=True)
class TipTail:
    """The newest message of a conversation's tip segment; ``queued``: it already has an outbox row."""

    role: str
    message_id: int
    has_tool_calls: bool
    content: str | None
    queued: bool = False


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job this holder now runs under its conversation's lease.

    ``tail``: the tip segment's newest message right after the claim (held messages already joined it),
    so a re-claimed job can tell that a previous run already stored its reply.
    """

    id: int
    actor: Actor
    chat_ref: str | None
    reply_to: str | None
    attempts: int
    tail: TipTail | None = None

    @property
    def conversation_id(self) -> str:
        return self.actor.conversation_id or ""


@dataclass(frozen=True, slots=True)
class QueueState:
    """How many of a conversation's jobs are running and waiting."""

    running: int
    queued: int


@dataclass(frozen=True, slots=True)
class JobReply:
    """The reply a finished job queues; ``append``: an assistant row to persist first (unexpected errors)."""

    text: str
    kind: str = "reply"
    message_id: int | None = None
    append: NewMessage | None = None


@dataclass(frozen=True, slots=True)
class ReplyTarget:
    """Where a running job's reply goes."""

    chat_ref: str
    reply_to: str | None


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job as stored, for inspection (tests, ``sessions show``, the admin API)."""

    id: int
    conversation_id: str
    state: str
    attempts: int
    holder: str | None
    error: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """A conversation lease as stored, for inspection."""

    conversation_id: str
    holder: str
    expires_at: float


class InboundLedger(Protocol):
    """Which platform events the gateway has accepted: ``(platform, event_id)`` is recorded at most once."""

    async def seen(self, platform: str, event_id: str) -> bool:
        """Whether the event is recorded (a fast pre-check; the unique record stays the real guard)."""
        ...

    async def record_event(self, platform: str, event_id: str, *, kind: str) -> bool:
        """Record the event alone (commands, refusals); False when it was already recorded."""
        ...


class TurnQueueRepository(InboundLedger, Protocol):
    """The durable turn queue; it writes the ledger row of every turn, so it is the ledger too."""

    async def enqueue(self, request: TurnRequest, rule: AdmissionRule) -> Enqueued:
        """One transaction: ledger row (a duplicate stops here, writing nothing), the idle end, the
        conversation (created if needed), then what ``rule`` decides: the user message into the tip or
        held for a job, a new job or none, the running job's interrupt flag and the acknowledgement."""
        ...

    async def claim(
        self,
        holder: str,
        *,
        lease_s: float,
        limit: int,
        max_attempts: int,
        expect_work: bool = False,
        budget: BudgetGate | None = None,
    ) -> list[ClaimedJob]:
        """One transaction: expired leases are reaped (their jobs re-queued, or failed with a notice
        after ``max_attempts``), then up to ``limit`` jobs are claimed, the oldest of each conversation
        without a lease, each under a new lease of ``lease_s``, with its held messages moved into the tip.
        ``expect_work``: the caller was told a job was just queued, so a backend that first looks (cheaply,
        without locks) whether anything is claimable may skip that look; the result is the same.
        ``budget``: each job that will call the model is first decided by it (gateway.storage.budgets):
        a refused job is closed with its notice, a job that must wait stays queued for a later claim."""
        ...

    async def renew(self, holder: str, conversation_ids: Sequence[str], *, lease_s: float) -> list[str]:
        """Extend this holder's leases by ``lease_s``; returns the conversations whose lease it lost."""
        ...

    async def interrupt(self, job_id: int) -> Interrupt:
        """The job's interrupt flag (``Interrupt.NONE`` for an unknown job)."""
        ...

    async def finish(
        self,
        job_id: int,
        holder: str,
        *,
        state: str,
        error: str | None = None,
        reply: JobReply | None = None,
        note: NewMessage | None = None,
    ) -> bool:
        """One transaction: the job is marked ``state`` (done/failed), its lease dropped, ``note`` (an
        assistant row never sent) and ``reply.append`` stored in the tip, and ``reply`` queued in the
        outbox keyed by the job. False if the holder no longer holds the job (nothing is written)."""
        ...

    async def release(self, holder: str, job_ids: Sequence[int]) -> int:
        """One transaction: give the holder's running jobs back to the queue (drain), leases dropped."""
        ...

    async def stop(self, conversation_id: str) -> QueueState:
        """One transaction: cancel the queued jobs, flag the running one ``Interrupt.STOP``, drop the held
        messages (what the user asked to drop never reaches the transcript); returns what there was."""
        ...

    async def stop_live(self, session_key: str) -> QueueState | None:
        """``stop`` on the live conversation of ``session_key``; None when there is none."""
        ...

    async def queue_state(self, conversation_id: str) -> QueueState:
        """How many of the conversation's jobs run and wait."""
        ...

    async def running_target(self, conversation_id: str) -> ReplyTarget | None:
        """Where the conversation's running job replies (None: nothing runs, or it has no chat)."""
        ...

    async def jobs(self, conversation_id: str | None = None) -> list[JobRecord]:
        """Every job (of one conversation), oldest first."""
        ...

    async def leases(self) -> list[LeaseRecord]:
        """Every live or expired lease not yet reaped."""
        ...
