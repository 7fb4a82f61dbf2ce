"""The schedules port: reminders and scheduled turns, their runs, and each person's time zone.

Invariants every backend keeps (checked by tests/storage/contract/test_schedules.py): ``fire_due`` is ONE
transaction per call in which each due schedule is claimed (on a concurrent backend with its row locked
``SKIP LOCKED``, so hosts never wait on one another or fire one schedule together), its run recorded under
the unique key (schedule, occurrence), the run's job queued in the target conversation with the run's
message held for it, and the schedule moved to its next run — so an occurrence is fired at most once, and a
fired occurrence always has its job. The job is an ordinary turn job, claimed under the conversation's lease
after whatever runs or waits there, and never joined by other messages (``QueuedJob.joinable``); its held
message enters the transcript at claim, so a fixed message is the tip's final answer and is queued for
delivery without a model call, and a prompt is a user message the turn answers. A run's task status (its
job) and its delivery status (the job's reply in the outbox) are read, never copied, so they cannot
disagree with what happened; a delivery retry never touches the job. What a due schedule does — fire, skip
missed runs, pause — is not the repository's decision: ``fire_due`` asks a ``FiringRule`` and carries out
the ``Firing`` it returns. Counting a person's schedules and adding one is one transaction, so concurrent
creations never overshoot ``max_per_person``. Times are epoch seconds; ``fire_due`` is told "now" by the
caller (the scheduler's clock), every other stamp is the backend's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from agent_core.storage.records import NewMessage

ScheduleKind = Literal["once", "interval", "cron"]
ScheduleAction = Literal["message", "prompt"]
"""``message``: send a fixed text (no model call); ``prompt``: run the text as an agent turn."""
ScheduleState = Literal["active", "paused", "done", "cancelled"]
SCHEDULE_STATES: tuple[ScheduleState, ...] = ("active", "paused", "done", "cancelled")
OPEN_STATES: tuple[ScheduleState, ...] = ("active", "paused")
"""States that count against a person's limit and that ``/reminders`` lists."""
TaskStatus = Literal["queued", "running", "ran", "stopped", "failed"]
DeliveryStatus = Literal["none", "pending", "sending", "retrying", "sent", "gave_up"]
TargetState = Literal["live", "ended", "missing"]
FiringOutcome = Literal["fired", "skipped", "paused", "done"]


@dataclass(frozen=True, slots=True)
class ScheduleTarget:
    """Where a schedule's runs go: a conversation, its person, and the chat its replies are delivered to.

    ``chat_ref``/``platform`` are those of the conversation's latest turn; ``ended``: the conversation has
    ended (``/new``, a reset) and takes no more turns.
    """

    conversation_id: str
    person_id: str
    platform: str
    chat_ref: str
    ended: bool = False


@dataclass(frozen=True, slots=True)
class NewSchedule:
    """A schedule to add, validated by the gateway (``gateway.schedules.spec``).

    ``spec``: the recurrence as stored — ``once``: the instant (epoch seconds, as text), ``interval``:
    seconds, ``cron``: a five-field expression; ``first_run_at``: its first occurrence; ``is_admin``: turns
    run with admin rights (only when an admin created it in their own conversation).
    """

    target: ScheduleTarget
    kind: ScheduleKind
    spec: str
    timezone: str
    action: ScheduleAction
    text: str
    first_run_at: float
    created_by: str
    is_admin: bool = False


@dataclass(frozen=True, slots=True)
class ScheduleRecord:
    """A schedule as stored. ``next_run_at``: its next occurrence (None once done or cancelled);
    ``reason``: why it is paused, done without running, or cancelled; ``missed``: occurrences skipped."""

    id: int
    person_id: str
    conversation_id: str
    platform: str
    chat_ref: str
    kind: ScheduleKind
    spec: str
    timezone: str
    action: ScheduleAction
    text: str
    state: ScheduleState
    reason: str | None
    next_run_at: float | None
    runs: int
    missed: int
    last_run_at: float | None
    created_at: float
    created_by: str
    is_admin: bool


@dataclass(frozen=True, slots=True)
class ScheduleRun:
    """One fired occurrence: when it was due and fired, its task (the job) and its delivery (the job's reply).

    ``catch_up``: fired late, standing for ``missed`` + 1 occurrences missed while nothing ran; ``output``:
    the reply text while its outbox row exists (a delivered row may be pruned; a given-up one stays while
    its run does: retention keeps a kept run's job and given-up reply).
    """

    id: int
    schedule_id: int
    occurrence_at: float
    fired_at: float
    conversation_id: str
    job_id: int | None
    catch_up: bool
    missed: int
    task: TaskStatus
    task_error: str | None
    delivery: DeliveryStatus
    delivery_attempts: int
    delivery_error: str | None
    output: str | None


@dataclass(frozen=True, slots=True)
class DueSchedule:
    """A due schedule as ``fire_due`` found it, with the state of its target inside the transaction.

    ``conversation``: ``live``, ``ended`` or ``missing``; ``person_known``: the person still exists.
    """

    schedule: ScheduleRecord
    conversation: TargetState
    person_known: bool


@dataclass(frozen=True, slots=True)
class Firing:
    """What to do with one due schedule, as the ``FiringRule`` decided it.

    ``occurrence_at``: fire a run standing for that occurrence now, with ``message`` held for its job
    (None: no run now); ``missed``: occurrences skipped, or missed besides the one this run stands for;
    ``catch_up``: the run fires late (its occurrence was missed); ``next_run_at``: the next occurrence
    (None: the schedule is done); ``pause``: pause it with this reason instead (nothing fires); ``note``:
    why it is done without a run (e.g. a one-shot missed under the skip policy).
    """

    occurrence_at: float | None = None
    message: NewMessage | None = None
    missed: int = 0
    next_run_at: float | None = None
    pause: str | None = None
    note: str | None = None
    catch_up: bool = False


def target_state(exists: bool, ended: bool) -> TargetState:
    """How a due schedule's conversation stands: gone, ended, or live."""
    if not exists:
        return "missing"
    return "ended" if ended else "live"


def firing_outcome(fired: bool, done: bool) -> FiringOutcome:
    """What carrying out a (not paused) firing did."""
    if fired:
        return "fired"
    return "done" if done else "skipped"


class FiringRule(Protocol):
    """Decides, inside the firing transaction, what a due schedule does (the gateway's scheduling rules)."""

    def plan(self, due: DueSchedule, now: float) -> Firing: ...


@dataclass(frozen=True, slots=True)
class FiredRun:
    """A run ``fire_due`` queued (or, with ``run_id`` None, a schedule it skipped, paused or finished)."""

    schedule_id: int
    run_id: int | None
    job_id: int | None
    conversation_id: str
    occurrence_at: float | None
    outcome: FiringOutcome


class ScheduleRepository(Protocol):
    """Schedules, their runs and persons' time zones, kept by one storage backend."""

    async def now(self) -> float:
        """The backend's clock (the server's on PostgreSQL), for a scheduler that follows it."""
        ...

    async def target(self, conversation_id: str) -> ScheduleTarget | None:
        """Where runs for ``conversation_id`` would go; None when it does not exist or never had a chat."""
        ...

    async def create(self, schedule: NewSchedule, *, max_per_person: int) -> ScheduleRecord | None:
        """One transaction: add ``schedule`` unless its person already has ``max_per_person`` open ones
        (then None, nothing written)."""
        ...

    async def get(self, schedule_id: int) -> ScheduleRecord | None: ...

    async def find(
        self,
        *,
        person_id: str | None = None,
        conversation_id: str | None = None,
        states: Sequence[ScheduleState] = SCHEDULE_STATES,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ScheduleRecord]:
        """Schedules (of one person / conversation) in ``states``, soonest next run first, then newest."""
        ...

    async def count(
        self, *, person_id: str | None = None, states: Sequence[ScheduleState] = OPEN_STATES
    ) -> int: ...

    async def cancel(
        self, schedule_id: int, *, by: str, person_id: str | None = None
    ) -> ScheduleRecord | None:
        """One transaction: cancel an open schedule (only ``person_id``'s when given) and drop its runs whose
        jobs have not started (a running one finishes). Returns the cancelled record, or None when there is
        no such open schedule (of that person). ``by`` (who cancelled) is kept as its reason."""
        ...

    async def fire_due(self, now: float, rule: FiringRule, *, limit: int) -> list[FiredRun]:
        """One transaction: up to ``limit`` active schedules due at ``now`` (soonest first) are claimed and
        each carried out as ``rule`` plans it (see the module docstring)."""
        ...

    async def next_due_at(self) -> float | None:
        """The soonest ``next_run_at`` of an active schedule (None: nothing is scheduled)."""
        ...

    async def runs(
        self, *, schedule_id: int | None = None, limit: int = 50, offset: int = 0
    ) -> list[ScheduleRun]:
        """Runs (of one schedule), newest first, with their task and delivery status."""
        ...

    async def resend(self, run_id: int) -> bool:
        """One transaction: put a run's given-up delivery back in the outbox to be sent again (its text and
        the chunks already delivered are kept; the task is not run again). False when the run has no
        delivery that gave up."""
        ...

    async def timezone_of(self, person_id: str) -> str | None:
        """The person's own time zone (IANA name), or None when they never set one."""
        ...

    async def set_timezone(self, person_id: str, timezone: str | None) -> None:
        """Set (or with None forget) the person's time zone."""
        ...


_STOPPED_ERRORS = frozenset({"stopped", "interrupted", "cancelled"})
"""Job errors of a run that ended without answering (no reply was queued)."""


def task_status(job_state: str | None, job_error: str | None) -> TaskStatus:
    """A run's task status from its job row (the same reading on every backend)."""
    if job_state == "queued":
        return "queued"
    if job_state == "running":
        return "running"
    if job_error in _STOPPED_ERRORS:
        return "stopped"
    if job_state == "done":
        return "ran"
    return "failed"


def delivery_status(
    job_state: str | None, job_error: str | None, outbox_state: str | None, attempts: int
) -> DeliveryStatus:
    """A run's delivery status from its reply's outbox row. No row: nothing was queued yet or ever, or the
    job ended queuing a reply and the row was delivered and pruned (a given-up row stays while its run
    does)."""
    if outbox_state is None:
        replied = job_state in ("done", "failed") and job_error not in _STOPPED_ERRORS
        return "sent" if replied else "none"
    if outbox_state == "sent":
        return "sent"
    if outbox_state == "failed":
        return "gave_up"
    if attempts > 0:
        return "retrying"
    return "sending" if outbox_state == "sending" else "pending"
