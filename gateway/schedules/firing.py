"""The scheduling rules a due schedule is judged by inside the firing transaction (``FiringRule``).

Invariants: a schedule whose target is gone — its conversation ended or no longer exists, its person was
erased, its platform is not enabled here — is paused with that reason and fires nothing; a run at most
``missed_after_s`` late is on time; runs missed beyond that follow the policy: ``catch_up_once`` fires the
latest occurrence once (saying it is late when it is), ``skip`` fires none of the missed ones; either way
the next run is the first occurrence still to come, so missed runs never pile up. A scheduled prompt asks
the ``RunBudget`` first (the seam for usage budgets): a refused occurrence is skipped with the budget's
reason. What a run holds for its job is built here: a fixed message is the assistant's answer itself (no
model call); a prompt is a user message whose request bytes tell the model it is a scheduled task.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Protocol

from agent_core.storage.records import NewMessage
from gateway.storage.schedules import DueSchedule, Firing, ScheduleRecord

from .describe import describe_when, local_time
from .recurrence import Recurrence
from .settings import ScheduleSettings

_MISSED_COUNTED = 10_000  # occurrences counted one by one at most; a longer outage reports this many


class RunBudget(Protocol):
    """Whether a scheduled turn may run now (the seam for usage budgets, issue 15).

    ``prepare`` runs once before each firing pass (read what the check needs); ``refusal`` is asked inside
    the firing transaction for each due prompt: None lets it run, a reason skips that occurrence.
    """

    async def prepare(self, now: float) -> None: ...

    def refusal(self, schedule: ScheduleRecord, now: float) -> str | None: ...


class Unlimited:
    """No budget: every scheduled turn may run (until usage budgets exist)."""

    async def prepare(self, now: float) -> None:
        return None

    def refusal(self, schedule: ScheduleRecord, now: float) -> str | None:
        return None


@dataclass(frozen=True)
class ScheduleRules:
    """``FiringRule`` from settings; ``platforms``: where this deployment can deliver (None: anywhere)."""

    settings: ScheduleSettings
    platforms: Collection[str] | None = None
    budget: RunBudget = field(default_factory=Unlimited)

    def plan(self, due: DueSchedule, now: float) -> Firing:
        schedule = due.schedule
        gone = self._gone(due)
        if gone is not None:
            return Firing(pause=gone)
        recurrence = Recurrence.of(schedule.kind, schedule.spec, schedule.timezone)
        occurrence = schedule.next_run_at if schedule.next_run_at is not None else now
        if now - occurrence <= self.settings.missed_after_s:
            return self._run(
                schedule, occurrence, recurrence.after(occurrence), missed=0, late=False, now=now
            )
        missed = recurrence.occurrences(occurrence, now, limit=_MISSED_COUNTED)
        latest = missed[-1] if missed else occurrence
        following = recurrence.after(latest if len(missed) < _MISSED_COUNTED else now)
        while following is not None and following <= now:  # only after a very long outage
            following = recurrence.after(following)
        count = len(missed) + 1
        late = now - latest > self.settings.missed_after_s  # the latest of them may still be on time
        if late and self.settings.missed == "skip":
            note = None if following is not None else "missed while the gateway was not running"
            return Firing(missed=count, next_run_at=following, note=note)
        return self._run(schedule, latest, following, missed=count - 1, late=late, now=now)

    def _gone(self, due: DueSchedule) -> str | None:
        schedule = due.schedule
        if due.conversation == "missing":
            return "its conversation no longer exists"
        if due.conversation == "ended":
            return "its conversation has ended (/new or a reset); set it again in the new conversation"
        if not due.person_known:
            return "its person was erased"
        if self.platforms is not None and schedule.platform not in self.platforms:
            return f"the {schedule.platform} platform is not enabled"
        return None

    def _run(
        self,
        schedule: ScheduleRecord,
        occurrence: float,
        following: float | None,
        *,
        missed: int,
        late: bool,
        now: float,
    ) -> Firing:
        if schedule.action == "prompt":
            refusal = self.budget.refusal(schedule, now)
            if refusal is not None:
                note = None if following is not None else f"not run: {refusal}"
                return Firing(missed=missed + 1, next_run_at=following, note=note)
        message = run_message(schedule, occurrence, late=late)
        return Firing(occurrence, message, missed=missed, next_run_at=following, catch_up=late)


def run_message(schedule: ScheduleRecord, occurrence: float, *, late: bool) -> NewMessage:
    """What a run holds for its job: the fixed message as the answer, or the prompt as a user message."""
    author = f"schedule:{schedule.id}"
    due = local_time(occurrence, schedule.timezone)
    lateness = f"\n\n(This was due at {due}; it is late because the gateway was not running.)" if late else ""
    if schedule.action == "message":
        return NewMessage(role="assistant", content=schedule.text + lateness, author=author)
    framing = (
        f"[Scheduled task #{schedule.id} ({describe_when(schedule)}), set up earlier in this conversation, "
        f"is due now ({due}). Carry it out and reply to the person directly.]"
        + (" [It runs late: the gateway was not running when it was due.]" if late else "")
    )
    return NewMessage(
        role="user", content=f"⏰ {schedule.text}", author=author, api_content=f"{framing}\n{schedule.text}"
    )
