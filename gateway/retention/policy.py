"""The retention policy: the configured ages as the storage's cut-offs, and what each kind means to a reader.

Invariant: an age of 0 days becomes ``None`` (that kind is kept forever), and ``conversations_days: 0``
keeps conversations whole — none is ended and none is deleted — whatever the grace period says.
"""

from __future__ import annotations

from typing import Final

from gateway.storage.retention import RetentionCutoffs, RetentionKind

from .settings import RetentionSettings

DAY_S: Final = 86_400.0

KIND_LABELS: Final[dict[RetentionKind, str]] = {
    "outbox_given_up": "replies given up on",
    "ledger": "inbound ledger rows",
    "turn_jobs_done": "finished turn jobs",
    "turn_jobs_failed": "failed turn jobs",
    "schedule_runs": "schedule runs",
    "tool_outputs": "tool outputs replaced by a stub",
    "conversations_ended": "idle conversations ended",
    "conversations_deleted": "conversations deleted",
}
"""How the CLI and the logs name each kind."""


def _age(days: float) -> float | None:
    return days * DAY_S if days > 0 else None


def cutoffs(settings: RetentionSettings) -> RetentionCutoffs:
    """The storage's cut-offs (seconds; None: keep forever) for ``settings``."""
    return RetentionCutoffs(
        outbox_given_up_s=_age(settings.given_up_replies_days),
        ledger_s=_age(settings.ledger_days),
        jobs_s=_age(settings.jobs_days),
        schedule_runs_s=_age(settings.schedule_runs_days),
        tool_outputs_s=_age(settings.tool_outputs_days),
        tool_output_min_chars=settings.tool_output_min_chars,
        conversation_idle_s=_age(settings.conversations_days),
        conversation_grace_s=settings.conversations_grace_days * DAY_S,
    )
