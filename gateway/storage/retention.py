"""The retention port: deleting what the gateway no longer needs, in short bounded batches, and counting it.

Invariants every backend keeps: each pruning call is one short write transaction of at most ``limit`` rows
(oldest first) and only ever touches rows past the age it is given (ages in seconds, measured on the
backend's clock); what is still in use is never touched — undelivered outbox rows, queued or running jobs
and the messages held for them, the inbound ledger rows younger than the dedupe window, a schedule's latest
run, live conversations with work queued, an active schedule or a recent message; ``preview`` counts with
the same conditions the pruning calls delete with, so a dry run says what a run would remove; every row a
pruning call deletes is added, in the same transaction, to ``removed_totals`` (cluster-wide counters that
only grow, so metrics derived from row counts — finished turns, given-up replies — stay monotonic when
their rows go); a tool output replaced by its stub is no longer found by its old words in search.

Deleting a conversation completely is not here: the runner hands the ids ``expired_conversations`` names to
the storage's one way of forgetting conversations (the gateway's rows of them, ``erasure``, then the
agent's, ``forget_conversations``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from agent_core.storage.tool_output_stubs import TOOL_OUTPUT_FLOOR_CHARS, tool_output_stub

RetentionKind = Literal[
    "outbox_given_up",
    "ledger",
    "turn_jobs_done",
    "turn_jobs_failed",
    "schedule_runs",
    "tool_outputs",
    "conversations_ended",
    "conversations_deleted",
]
"""What a retention run removes, one counter each (``tool_outputs``: replaced by a stub;
``conversations_ended``: ended with ``RETENTION_END_REASON``; the rest: rows deleted)."""

RETENTION_KINDS: Final[tuple[RetentionKind, ...]] = (
    "outbox_given_up",
    "ledger",
    "turn_jobs_done",
    "turn_jobs_failed",
    "schedule_runs",
    "tool_outputs",
    "conversations_ended",
    "conversations_deleted",
)

RETENTION_END_REASON: Final = "retention"
"""The end reason of a conversation retention ended because nobody wrote in it for the retention period."""


@dataclass(frozen=True, slots=True)
class RetentionCutoffs:
    """The ages (seconds) past which each kind goes; None keeps that kind forever.

    ``conversation_idle_s``: a live conversation with no activity for this long is ended (reason
    ``retention``); ``conversation_grace_s``: a conversation retention ended is deleted this long after it
    ended, and one that ended otherwise ``conversation_idle_s + conversation_grace_s`` after it ended.
    ``tool_output_min_chars``: only tool outputs longer than this (and ``TOOL_OUTPUT_FLOOR_CHARS``) are
    stubbed.
    """

    outbox_given_up_s: float | None = None
    ledger_s: float | None = None
    jobs_s: float | None = None
    schedule_runs_s: float | None = None
    tool_outputs_s: float | None = None
    tool_output_min_chars: int = 4_000
    conversation_idle_s: float | None = None
    conversation_grace_s: float = 0.0


@dataclass(frozen=True, slots=True)
class SpaceReport:
    """How much of the database file is free, and what was done about it.

    ``mode``: ``incremental`` (SQLite, free pages handed back in steps), ``none`` (SQLite created before
    auto-vacuum: only a full ``VACUUM`` shrinks it), ``autovacuum`` (PostgreSQL: its autovacuum reclaims
    space; nothing is done here). ``reclaimed_bytes``: returned to the file system by this call.
    """

    mode: Literal["incremental", "none", "autovacuum"]
    file_bytes: int = 0
    free_bytes: int = 0
    reclaimed_bytes: int = 0

    @property
    def free_fraction(self) -> float:
        return self.free_bytes / self.file_bytes if self.file_bytes else 0.0


@dataclass(frozen=True, slots=True)
class RunClaim:
    """The outcome of claiming the run: ``held`` by the claimant now, or why not (``reason``)."""

    held: bool
    reason: str = ""
    last_finished_at: float | None = None


@dataclass(frozen=True, slots=True)
class RetentionCounts:
    """Rows per kind (a preview's would-remove counts, or ``removed_totals``)."""

    counts: Mapping[RetentionKind, int] = field(default_factory=dict)

    def get(self, kind: RetentionKind) -> int:
        return self.counts.get(kind, 0)

    @classmethod
    def of_rows(cls, rows: Iterable[tuple[object, object]]) -> RetentionCounts:
        """Counts from stored ``(kind, count)`` rows; kinds this release does not know are skipped."""
        known: dict[str, RetentionKind] = {kind: kind for kind in RETENTION_KINDS}
        return cls({known[str(k)]: int(str(n)) for k, n in rows if str(k) in known})


class RetentionRepository(Protocol):
    """Bounded pruning of every kind, the run's lease, the removed totals, and the database's free space."""

    async def preview(self, cutoffs: RetentionCutoffs) -> RetentionCounts:
        """How many rows of each kind a run with ``cutoffs`` would remove now (a read; nothing changes)."""
        ...

    async def prune_given_up_outbox(self, *, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` outbox rows given up on (``failed``) created over ``older_than_s`` ago,
        with their chunk progress, except replies of schedule runs that are kept. One transaction."""
        ...

    async def prune_ledger(self, *, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` inbound ledger rows received over ``older_than_s`` ago. One transaction.
        (A platform event re-delivered after that would be taken again: the age is the dedupe window.)"""
        ...

    async def prune_jobs(self, *, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` done or failed turn jobs finished over ``older_than_s`` ago that no
        undelivered outbox row, held message or kept schedule run names (a run's task status is its
        job's). One transaction."""
        ...

    async def prune_schedule_runs(self, *, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` schedule runs fired over ``older_than_s`` ago, except each schedule's
        latest run and runs whose job is queued or running. One transaction."""
        ...

    async def stub_tool_outputs(self, *, older_than_s: float, min_chars: int, limit: int, day: str) -> int:
        """Replace up to ``limit`` tool outputs longer than ``min_chars`` written over ``older_than_s`` ago
        by ``tool_output_stub(length, day)`` (their ``api_content`` cleared), so search no longer finds
        their words; returns how many."""
        ...

    async def end_idle_conversations(self, *, idle_s: float, limit: int) -> list[str]:
        """End (reason ``RETENTION_END_REASON``) up to ``limit`` live conversations with no message, reopening
        or start for ``idle_s``, no queued or running job and no active schedule; the ids ended."""
        ...

    async def expired_conversations(self, *, idle_s: float, grace_s: float, limit: int) -> list[str]:
        """Up to ``limit`` ended conversations due for deletion (see ``RetentionCutoffs``) with no queued
        or running job, undelivered outbox row or active schedule, oldest end first (a read)."""
        ...

    async def count_deleted_conversations(self, count: int) -> None:
        """Add ``count`` to the ``conversations_deleted`` total (after the forgetting primitive ran)."""
        ...

    async def removed_totals(self) -> RetentionCounts:
        """Every row retention removed since the database was created, per kind (only grows)."""
        ...

    async def claim_run(self, holder: str, *, lease_s: float, every_s: float) -> RunClaim:
        """Hold the retention run for ``lease_s`` (renewed by claiming again while holding it) unless another
        holder's lease is live, or a run finished less than ``every_s`` ago (0: run whenever free).
        One transaction; the backend's clock."""
        ...

    async def finish_run(self, holder: str) -> None:
        """Record that ``holder``'s run finished now and release its lease."""
        ...

    async def space(self) -> SpaceReport:
        """How much of the database file is free now, and how it can be reclaimed (a read)."""
        ...

    async def reclaim_space(self, *, min_free_fraction: float, max_bytes: int) -> SpaceReport:
        """Hand free pages back to the file system, at most ``max_bytes`` per short write transaction, when
        more than ``min_free_fraction`` of the file is free and the file can be shrunk in place; the report
        of what is free and what was done."""
        ...


__all__ = [
    "RETENTION_END_REASON",
    "RETENTION_KINDS",
    "TOOL_OUTPUT_FLOOR_CHARS",
    "RetentionCounts",
    "RetentionCutoffs",
    "RetentionKind",
    "RetentionRepository",
    "RunClaim",
    "SpaceReport",
    "tool_output_stub",
]
