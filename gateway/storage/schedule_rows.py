"""Rows of the schedules' reads as records, shared by both backends (their SELECTs list the same columns:
a schedule's in table order, a run's as ``schedule_row``/``run_from_row`` say).

Invariant: a run's task and delivery status come from ``gateway.storage.schedules`` (``task_status``,
``delivery_status``), so every backend reads a run the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .schedules import (
    ScheduleAction,
    ScheduleKind,
    ScheduleRecord,
    ScheduleRun,
    ScheduleState,
    delivery_status,
    task_status,
)


def schedule_from_row(row: Sequence[Any]) -> ScheduleRecord:
    """A schedule from its columns in ``ScheduleRecord``'s field order."""
    return ScheduleRecord(
        id=int(row[0]),
        person_id=str(row[1]),
        conversation_id=str(row[2]),
        platform=str(row[3]),
        chat_ref=str(row[4]),
        kind=cast(ScheduleKind, row[5]),
        spec=str(row[6]),
        timezone=str(row[7]),
        action=cast(ScheduleAction, row[8]),
        text=str(row[9]),
        state=cast(ScheduleState, row[10]),
        reason=row[11],
        next_run_at=None if row[12] is None else float(row[12]),
        runs=int(row[13]),
        missed=int(row[14]),
        last_run_at=None if row[15] is None else float(row[15]),
        created_at=float(row[16]),
        created_by=str(row[17]),
        is_admin=bool(row[18]),
    )


def run_from_row(row: Sequence[Any]) -> ScheduleRun:
    """A run (id, schedule, occurrence, fired, conversation, job id, kind, missed) with its job's state and
    error (``row[8:10]``) and its reply's outbox state, attempts, error and text (``row[10:14]``)."""
    job_state, job_error, out_state, attempts = row[8], row[9], row[10], int(row[11] or 0)
    return ScheduleRun(
        id=int(row[0]),
        schedule_id=int(row[1]),
        occurrence_at=float(row[2]),
        fired_at=float(row[3]),
        conversation_id=str(row[4]),
        job_id=None if row[5] is None else int(row[5]),
        catch_up=row[6] == "catch_up",
        missed=int(row[7]),
        task=task_status(job_state, job_error),
        task_error=job_error,
        delivery=delivery_status(job_state, job_error, out_state, attempts),
        delivery_attempts=attempts,
        delivery_error=row[12],
        output=row[13],
    )
