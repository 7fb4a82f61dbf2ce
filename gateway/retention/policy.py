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


def _days(days: float) -> str:
    return "kept" if days <= 0 else f"{days:g} d"


def retention_notes(settings: RetentionSettings) -> list[tuple[str, bool]]:
    """What ``serve`` and ``check-config`` say about retention: ``(line, is_warning)`` pairs."""
    if not settings.enabled:
        return [("retention: off in serve (retention.enabled: false); `mnemogate retention` runs it", False)]
    conversations = (
        "conversations kept"
        if settings.conversations_days <= 0
        else f"conversations idle {settings.conversations_days:g} d end, deleted "
        f"{settings.conversations_grace_days:g} d later"
    )
    notes = [
        (
            f"retention: every {settings.every_s:g} s; {conversations}; tool outputs over "
            f"{settings.tool_output_min_chars} chars {_days(settings.tool_outputs_days)}; ledger "
            f"{_days(settings.ledger_days)}, jobs {_days(settings.jobs_days)}, given-up replies "
            f"{_days(settings.given_up_replies_days)}, schedule runs {_days(settings.schedule_runs_days)}",
            False,
        )
    ]
    if 0 < settings.ledger_days < 1:
        notes.append(
            (
                "retention.ledger_days is below one day: a platform event re-delivered after that is "
                "answered again",
                True,
            )
        )
    return notes
