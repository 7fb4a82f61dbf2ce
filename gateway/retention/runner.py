"""``RetentionRunner``: one retention run (or its dry run), and serve's background loop that runs it.

Invariants: a run holds the storage's retention lease (one run at a time across processes and hosts; a
host whose lease lapses mid-run stops at its next batch) and renews it between batches; every kind is
removed in batches of ``retention.batch`` rows, each its own short transaction, at most
``retention.max_batches`` per kind, yielding to other work between batches, so a backlog never holds a long
write lock; conversations past their grace period are deleted only through the storage's one
conversation-forgetting primitive (``ConversationForgetter``); a dry run only counts; the background loop
never runs on the append path and a database error ends one run (logged), never the loop. Space is handed
back (SQLite) after the deletions, when the free fraction passes ``retention.vacuum_free_fraction``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

from agent_core.storage.errors import StateError
from gateway.storage.retention import (
    RETENTION_KINDS,
    RetentionKind,
    RetentionRepository,
    SpaceReport,
)

from .policy import KIND_LABELS, cutoffs
from .settings import RetentionSettings

_LOG = logging.getLogger("mnemogate.retention")
_MB = 1024 * 1024
_FORGET_BATCH = 50  # conversations deleted per call of the forgetting primitive


class ConversationForgetter(Protocol):
    """The storage's one way to delete conversations completely (messages, segments, search entries)."""

    async def __call__(self, conversation_ids: Sequence[str]) -> int:
        """Delete the conversations; how many were deleted."""
        ...


@dataclass(frozen=True, slots=True)
class RetentionReport:
    """What one run removed (or, ``dry_run``, would remove), per kind; ``skipped``: why it did not run."""

    dry_run: bool
    removed: dict[RetentionKind, int] = field(default_factory=dict)
    space: SpaceReport | None = None
    skipped: str = ""
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.removed.values())

    def summary(self) -> str:
        """One line for the log."""
        if self.skipped:
            return f"retention run skipped: {self.skipped}"
        verb = "would remove" if self.dry_run else "removed"
        parts = ", ".join(f"{KIND_LABELS[kind]} {count}" for kind, count in self.removed.items() if count)
        line = f"retention {verb} {parts or 'nothing'} in {self.seconds:.2f} s"
        if self.space is not None and self.space.mode != "autovacuum":
            line += (
                f"; state.db {self.space.file_bytes / _MB:.1f} MB, {self.space.free_fraction:.0%} free"
                f", {self.space.reclaimed_bytes / _MB:.1f} MB handed back"
            )
        return line


def new_holder() -> str:
    """A holder id unique to this process: host name, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class RetentionRunner:
    """Runs retention over one storage; ``async with`` it to run it every ``retention.every_s``."""

    def __init__(
        self,
        repository: RetentionRepository,
        settings: RetentionSettings,
        *,
        forget: ConversationForgetter | None,
        holder: str | None = None,
        on_report: Callable[[RetentionReport], None] | None = None,
        today: Callable[[], str] | None = None,
    ) -> None:
        """``forget``: deletes expired conversations (None: they are counted as due but kept);
        ``on_report``: told every finished run (metrics); ``today``: the date written into stubs."""
        self._repository = repository
        self._settings = settings
        self._forget = forget
        self.holder = holder or new_holder()
        self._on_report = on_report
        self._today = today or (lambda: datetime.datetime.now(datetime.UTC).date().isoformat())
        self._task: asyncio.Task[None] | None = None
        self.last_report: RetentionReport | None = None

    async def __aenter__(self) -> RetentionRunner:
        if self._settings.enabled:
            self._task = asyncio.create_task(self._loop(), name="retention")
            self._task.add_done_callback(_log_crash)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while True:
            try:
                await self.run()
            except (StateError, RetentionLeaseLostError):
                _LOG.warning(
                    "retention run failed; trying again in %g s", self._settings.every_s, exc_info=True
                )
            await asyncio.sleep(self._settings.every_s)

    async def preview(self) -> RetentionReport:
        """What a run would remove now (a read: nothing changes, no lease is taken)."""
        started = time.monotonic()
        counts = await self._repository.preview(cutoffs(self._settings))
        removed = {kind: counts.get(kind) for kind in RETENTION_KINDS if kind in counts.counts}
        space = await self._repository.space()
        report = RetentionReport(True, removed, space, seconds=time.monotonic() - started)
        _LOG.info("%s", report.summary())
        return report

    async def run(self, *, every_s: float | None = None) -> RetentionReport:
        """One run, unless another holder runs one or one finished less than ``every_s`` ago (default:
        most of ``retention.every_s``, so serve's hosts share one interval); what it removed, per kind."""
        interval = self._settings.every_s * 0.9 if every_s is None else every_s
        claim = await self._repository.claim_run(
            self.holder, lease_s=self._settings.lease_s, every_s=interval
        )
        if not claim.held:
            return RetentionReport(False, skipped=claim.reason)
        started = time.monotonic()
        before = await self._repository.removed_totals()
        try:
            await self._remove_all()
            space = await self._repository.reclaim_space(
                min_free_fraction=self._settings.vacuum_free_fraction,
                max_bytes=int(self._settings.vacuum_step_mb * _MB),
            )
        finally:
            with contextlib.suppress(StateError):
                await self._repository.finish_run(self.holder)
        after = await self._repository.removed_totals()
        removed = {kind: after.get(kind) - before.get(kind) for kind in self._kinds()}
        report = RetentionReport(False, removed, space, seconds=time.monotonic() - started)
        self.last_report = report
        _LOG.info("%s", report.summary())
        if self._on_report is not None:
            self._on_report(report)
        return report

    def _kinds(self) -> list[RetentionKind]:
        """The kinds this configuration removes (those kept forever are not reported)."""
        limits = cutoffs(self._settings)
        ages: dict[RetentionKind, float | None] = {
            "outbox_given_up": limits.outbox_given_up_s,
            "ledger": limits.ledger_s,
            "turn_jobs_done": limits.jobs_s,
            "turn_jobs_failed": limits.jobs_s,
            "schedule_runs": limits.schedule_runs_s,
            "tool_outputs": limits.tool_outputs_s,
            "conversations_ended": limits.conversation_idle_s,
            "conversations_deleted": limits.conversation_idle_s,
        }
        return [kind for kind in RETENTION_KINDS if ages[kind] is not None]

    async def _remove_all(self) -> None:
        limits = cutoffs(self._settings)
        repo, batch = self._repository, self._settings.batch
        steps: list[tuple[float | None, Callable[[float], Awaitable[int]]]] = [
            (limits.outbox_given_up_s, lambda age: repo.prune_given_up_outbox(older_than_s=age, limit=batch)),
            (limits.ledger_s, lambda age: repo.prune_ledger(older_than_s=age, limit=batch)),
            (limits.jobs_s, lambda age: repo.prune_jobs(older_than_s=age, limit=batch)),
            (limits.schedule_runs_s, lambda age: repo.prune_schedule_runs(older_than_s=age, limit=batch)),
            (limits.tool_outputs_s, self._stub_step(limits.tool_output_min_chars)),
            (
                limits.conversation_idle_s,
                lambda age: _count(repo.end_idle_conversations(idle_s=age, limit=batch)),
            ),
        ]
        for age, step in steps:
            if age is not None:
                await self._batches(functools.partial(step, age))
        if limits.conversation_idle_s is not None:
            await self._delete_expired(limits.conversation_idle_s, limits.conversation_grace_s)

    def _stub_step(self, min_chars: int) -> Callable[[float], Awaitable[int]]:
        repo, batch, day = self._repository, self._settings.batch, self._today()
        return lambda age: repo.stub_tool_outputs(older_than_s=age, min_chars=min_chars, limit=batch, day=day)

    async def _batches(self, step: Callable[[], Awaitable[int]]) -> None:
        for _ in range(self._settings.max_batches):
            if await step() < self._settings.batch:
                return
            await self._renew()

    async def _renew(self) -> None:
        """Keep the lease between batches; a run whose lease was taken over stops here."""
        claim = await self._repository.claim_run(self.holder, lease_s=self._settings.lease_s, every_s=0.0)
        if not claim.held:
            raise RetentionLeaseLostError(f"the retention lease was taken over ({claim.reason})")
        await asyncio.sleep(0)  # let writes queued meanwhile go first

    async def _delete_expired(self, idle_s: float, grace_s: float) -> None:
        if self._forget is None:
            return
        for _ in range(self._settings.max_batches):
            due = await self._repository.expired_conversations(
                idle_s=idle_s, grace_s=grace_s, limit=min(self._settings.batch, _FORGET_BATCH)
            )
            if not due:
                return
            await self._repository.count_deleted_conversations(await self._forget(due))
            await self._renew()


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        _LOG.error("retention loop crashed; no more runs until restart", exc_info=task.exception())


class RetentionLeaseLostError(Exception):
    """Another holder took the retention lease while this run was between batches."""


async def _count(ids: Awaitable[list[str]]) -> int:
    return len(await ids)
