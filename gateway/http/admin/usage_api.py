"""The admin API's usage and cost (mounted at ``/admin``): the usage log summed over a time range, in total
and by person, platform, model, kind or day — everyone's, or one person's.

Every route sits behind the admin ``BearerGuard``; reads go through the ``UsageReads`` port. A range is
``since`` ≤ call < ``until`` in epoch seconds, or a ``period`` (``today``, ``month``) of the usage zone
(``usage.timezone``, else ``admin.timezone``); a cost sums known prices and says how many calls had none.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query

from gateway.http.access import BearerGuard
from gateway.storage.admin_reads import AdminReads
from gateway.storage.usage_reads import UsageGroup, UsageQuery, UsageReads
from gateway.usage import UsageCalendar, report_json

_FOREVER = 1e12  # epoch seconds far past any stored time, as the other date filters
Period = Literal["today", "month"]
_SINCE = Query(default=None, ge=0, le=_FOREVER, description="from (epoch s; default: today's midnight)")
_UNTIL = Query(default=None, ge=0, le=_FOREVER, description="before (epoch s; default: now)")
_BY_PERSON = Query(default=UsageGroup.PERSON, description="group calls by (default: person)")
_BY_DAY = Query(default=UsageGroup.DAY, description="group calls by (default: day)")
_PERIOD = Query(default=None, description="today or this month in the usage zone (instead of since/until)")


def usage_router(reads: UsageReads, people: AdminReads, zone: str, guard: BearerGuard) -> APIRouter:
    """The usage routes (paths relative to the ``/admin`` mount), days counted in ``zone``."""
    router = APIRouter(dependencies=[Depends(guard)], tags=["usage"])
    calendar = UsageCalendar(zone)

    def query(
        since: float | None,
        until: float | None,
        period: Period | None,
        by: UsageGroup,
        person: str | None,
    ) -> UsageQuery:
        if period is not None and (since is not None or until is not None):
            raise HTTPException(422, "give either a period or since/until, not both")
        if period is not None:
            since, until = calendar.today() if period == "today" else calendar.this_month()
        start = calendar.today()[0] if since is None else since
        return UsageQuery(since=start, until=until, group=by, person_id=person, timezone=zone)

    @router.get(
        "/usage",
        summary="Model usage and cost over a time range, by person, platform, model, kind or day",
    )
    async def usage(
        since: float | None = _SINCE,
        until: float | None = _UNTIL,
        period: Period | None = _PERIOD,
        by: UsageGroup = _BY_PERSON,
        person: str | None = Query(default=None, max_length=200, description="only this person's calls"),
    ) -> dict[str, Any]:
        """`total` sums every selected call; `groups` (ordered by cost, then tokens; days oldest first) split
        it. `cost_usd` sums known prices; `unpriced_calls` counts calls of a model with no price."""
        return report_json(await reads.usage_report(query(since, until, period, by, person)))

    @router.get(
        "/persons/{person_id}/usage",
        summary="One person's model usage and cost, by day, model, kind or platform",
    )
    async def person_usage(
        person_id: str,
        since: float | None = _SINCE,
        until: float | None = _UNTIL,
        period: Period | None = _PERIOD,
        by: UsageGroup = _BY_DAY,
    ) -> dict[str, Any]:
        if await people.person(person_id) is None:
            raise HTTPException(404, f"no person {person_id!r}")
        return report_json(await reads.usage_report(query(since, until, period, by, person_id)))

    return router
