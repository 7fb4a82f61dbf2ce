"""The console's overview page: health of every component and adapter (with the host that owns each leased
adapter), queue depth, turns and errors over the last 24 hours, delivery failures, memory providers, and
model tokens (cache reads included) and cost since midnight in the usage zone, with today's top spenders.

Invariants: every figure is read at request time from the database (so every host shows the same queue,
turns and usage) or from this process's live components (adapter connections, provider health); a
component that cannot be read is shown as such, never hidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import APIRouter, Request
from starlette.responses import Response

from gateway.http.metrics import Metrics
from gateway.http.readiness import ReadinessCheck
from gateway.storage.console_reads import ActivityBucket
from gateway.storage.usage_reads import UsageGroup, UsageQuery
from gateway.usage import UsageCalendar

from .guards import SignedIn
from .pages_support import Console, console_reads

_HOURS = 24
_CHART_HEIGHT = 120
_BAR_WIDTH = 24
_TOP_SPENDERS = 5


@dataclass(frozen=True)
class ChartBar:
    """One hour of the activity chart, in SVG units (y grows downwards)."""

    x: int
    label: str
    done: int
    failed: int
    deliveries_failed: int
    done_height: float
    failed_height: float
    start: float


@dataclass(frozen=True)
class AdapterRow:
    """One platform adapter as this host sees it, with the lease's owner when it is leased."""

    name: str
    connected: bool
    standby: bool
    detail: str
    last_inbound_at: float | None
    last_send_at: float | None
    owner_host: str | None
    owner_live: bool


def activity_chart(
    buckets: Sequence[ActivityBucket], since: float, labels: Sequence[str]
) -> tuple[list[ChartBar], int]:
    """Hourly bars from ``since`` (one per label) and the tallest bar's turn count (at least 1)."""
    by_hour = {round((b.start - since) / 3600): b for b in buckets}
    tallest = max([1, *(b.turns_done + b.turns_failed for b in buckets)])
    scale = _CHART_HEIGHT / tallest
    bars = []
    for hour, label in enumerate(labels):
        bucket = by_hour.get(hour) or ActivityBucket(since + hour * 3600, 0, 0, 0)
        bars.append(
            ChartBar(
                x=hour * _BAR_WIDTH,
                label=label,
                done=bucket.turns_done,
                failed=bucket.turns_failed,
                deliveries_failed=bucket.deliveries_failed,
                done_height=bucket.turns_done * scale,
                failed_height=bucket.turns_failed * scale,
                start=since + hour * 3600,
            )
        )
    return bars, tallest


def overview_routes(
    router: APIRouter, console: Console, *, readiness: ReadinessCheck | None, metrics: Metrics | None
) -> None:
    backend = console.backend
    clock, reads = console.pages.clock, backend.reads

    async def adapters() -> list[AdapterRow]:
        owners = {o.adapter: o for o in await backend.leases.owners()} if backend.leases else {}
        rows = []
        for name, health in metrics.adapter_health() if metrics is not None else []:
            owner = owners.get(name)
            rows.append(
                AdapterRow(
                    name=name,
                    connected=health.connected,
                    standby=health.standby,
                    detail=health.detail,
                    last_inbound_at=health.last_inbound_at,
                    last_send_at=health.last_send_at,
                    owner_host=owner.host if owner else None,
                    owner_live=bool(owner and owner.live),
                )
            )
        return rows

    @router.get("/", include_in_schema=False)
    async def overview(request: Request, session: SignedIn) -> Response:
        store = console_reads(backend)
        now = clock.now()
        checks = await readiness() if readiness is not None else {}
        counters = await reads.gateway_counters()
        since = clock.hour_floor(now) - (_HOURS - 1) * 3600
        labels = [clock.local(since + hour * 3600).strftime("%H") for hour in range(_HOURS)]
        bars, tallest = activity_chart(await store.activity(since=since, bucket_s=3600), since, labels)
        failures = await store.failed_deliveries(limit=5)
        midnight = UsageCalendar(backend.usage_zone, now=clock.now).today()[0]
        spenders = None
        if backend.usage is not None:
            query = UsageQuery(since=midnight, group=UsageGroup.PERSON, timezone=backend.usage_zone)
            spenders = await backend.usage.usage_report(query)
        return console.render(
            request,
            "overview.html",
            session,
            checks=sorted(checks.items()),
            adapters=await adapters(),
            jobs=dict(counters.jobs_by_state),
            outbox=dict(counters.outbox_by_state),
            bars=bars,
            tallest=tallest,
            chart_height=_CHART_HEIGHT,
            chart_width=_HOURS * _BAR_WIDTH,
            bar_width=_BAR_WIDTH - 4,
            turns_24h=sum(b.done + b.failed for b in bars),
            failed_24h=sum(b.failed for b in bars),
            deliveries_failed_24h=sum(b.deliveries_failed for b in bars),
            failures=failures,
            providers=list(metrics.provider_health()) if metrics is not None else [],
            today=await store.usage_since(midnight),
            spenders=spenders,
            top_spenders=_TOP_SPENDERS,
            usage_zone=backend.usage_zone,
            conversation_count=(await reads.conversations(limit=1)).total,
            pending_pairing=len(await backend.pairing.list_pending()) if backend.pairing else 0,
            over_budget=await backend.budgets.holds(now) if backend.budgets else [],
        )
