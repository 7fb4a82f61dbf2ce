"""The admin API's schedules (mounted at ``/admin``): list, add, inspect (with runs), cancel, re-send, time
zones.

Every route sits behind the admin ``BearerGuard``; everything goes through ``ScheduleBook`` (the same
validation and limits as the tool and the commands: a bad time, cron expression or time zone is a 400 whose
``detail`` names what was wrong), and reads through the schedules port. A run's task status and delivery
status are reported apart; re-sending a run's given-up delivery never runs its task again.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, ConfigDict, Field

from gateway.http.access import BearerGuard
from gateway.http.admin.problems import AdminProblem
from gateway.schedules import (
    ScheduleBook,
    ScheduleError,
    ScheduleInputError,
    ScheduleNotFoundError,
    ScheduleRequest,
    ScheduleTargetError,
    describe_schedule,
    local_time,
)
from gateway.storage.schedules import SCHEDULE_STATES, ScheduleRecord, ScheduleRun, ScheduleState

_MAX_ID = 2**63 - 1
_MAX_PAGE = 500


class NewScheduleBody(BaseModel):
    """A schedule an admin adds to a conversation: one "when" and one of message or prompt."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    conversation_id: str = Field(min_length=1, max_length=200)
    at: str | None = Field(default=None, max_length=100)
    after: str | None = Field(default=None, max_length=100, alias="in")
    every: str | None = Field(default=None, max_length=100)
    cron: str | None = Field(default=None, max_length=200)
    message: str | None = Field(default=None, max_length=100_000)
    prompt: str | None = Field(default=None, max_length=100_000)
    timezone: str | None = Field(default=None, max_length=100)
    starting: str | None = Field(default=None, max_length=100)

    def request(self) -> ScheduleRequest:
        fields = self.model_dump(exclude={"conversation_id"})
        return ScheduleRequest(**fields)


class TimezoneBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field(min_length=1, max_length=100)


def schedule_json(record: ScheduleRecord) -> dict[str, Any]:
    """A schedule as the API shows it: its fields, plus its description and next run in its time zone."""
    body = dataclasses.asdict(record)
    body["description"] = describe_schedule(record)
    body["next_run_local"] = (
        None if record.next_run_at is None else local_time(record.next_run_at, record.timezone)
    )
    return body


def run_json(run: ScheduleRun) -> dict[str, Any]:
    return dataclasses.asdict(run)


def _status(exc: ScheduleError) -> int:
    if isinstance(exc, ScheduleNotFoundError):
        return 404
    if isinstance(exc, ScheduleTargetError):
        return 409
    return 400


def _refused(exc: ScheduleError) -> AdminProblem:
    """The admin API's one error shape; a bad input also names its ``field``."""
    if isinstance(exc, ScheduleInputError):
        return AdminProblem(_status(exc), str(exc), field=exc.field)
    return AdminProblem(_status(exc), str(exc))


def schedule_router(book: ScheduleBook, guard: BearerGuard) -> APIRouter:
    router = APIRouter(dependencies=[Depends(guard)])
    repository = book.repository

    async def schedule_or_404(schedule_id: int) -> ScheduleRecord:
        record = await repository.get(schedule_id)
        if record is None:
            raise HTTPException(404, f"no schedule {schedule_id}")
        return record

    @router.get("/schedules")
    async def schedules(
        person: str | None = Query(default=None, max_length=200),
        conversation: str | None = Query(default=None, max_length=200),
        state: ScheduleState | None = None,
        limit: int = Query(default=50, ge=1, le=_MAX_PAGE),
        offset: int = Query(default=0, ge=0, le=_MAX_ID),
    ) -> dict[str, Any]:
        states = SCHEDULE_STATES if state is None else (state,)
        found = await repository.find(
            person_id=person, conversation_id=conversation, states=states, limit=limit, offset=offset
        )
        return {"items": [schedule_json(r) for r in found], "limit": limit, "offset": offset}

    @router.post("/schedules", status_code=201)
    async def add(body: NewScheduleBody) -> dict[str, Any]:
        try:
            record = await book.add_to(body.conversation_id, body.request(), by="admin:api")
        except ScheduleError as exc:
            raise _refused(exc) from exc
        return {"schedule": schedule_json(record)}

    @router.get("/schedules/{schedule_id}")
    async def schedule(schedule_id: int, runs: int = Query(default=20, ge=0, le=_MAX_PAGE)) -> dict[str, Any]:
        record = await schedule_or_404(schedule_id)
        found = await repository.runs(schedule_id=schedule_id, limit=runs) if runs else []
        return {"schedule": schedule_json(record), "runs": [run_json(r) for r in found]}

    @router.delete("/schedules/{schedule_id}")
    async def cancel(schedule_id: int) -> dict[str, Any]:
        await schedule_or_404(schedule_id)
        try:
            record = await book.cancel(schedule_id, by="admin:api")
        except ScheduleError as exc:
            raise _refused(exc) from exc
        return {"schedule": schedule_json(record)}

    @router.post("/schedules/runs/{run_id}/resend")
    async def resend(run_id: int) -> dict[str, Any]:
        if not await repository.resend(run_id):
            raise HTTPException(409, f"run {run_id} has no delivery that gave up (nothing to re-send)")
        return {"run_id": run_id, "resent": True}

    @router.get("/persons/{person_id}/timezone")
    async def timezone(person_id: str) -> dict[str, Any]:
        own = await repository.timezone_of(person_id)
        return {
            "person_id": person_id,
            "timezone": own or book.settings.default_timezone,
            "own": own is not None,
        }

    @router.put("/persons/{person_id}/timezone")
    async def set_timezone(person_id: str, body: TimezoneBody) -> dict[str, Any]:
        try:
            name = await book.set_timezone(person_id, body.timezone)
        except ScheduleError as exc:
            raise _refused(exc) from exc
        return {"person_id": person_id, "timezone": name, "own": True}

    return router
