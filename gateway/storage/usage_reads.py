"""The usage read port: model calls from ``usage_log`` summed over a time range, in total and grouped by
person, platform, model, kind or day — what ``mnemogate usage``, the admin API and console, ``/status`` and
the cost metrics report.

Invariants every backend keeps: nothing here writes; one report is one read (one snapshot); a range is
``since <= at < until`` in epoch seconds of the backend's clock; a call with an unknown price (NULL cost) is
counted in ``unpriced_calls`` and adds nothing to ``cost_usd`` (a sum of known prices, never a guess); days
are calendar days in the query's IANA time zone (DST included), named ``YYYY-MM-DD``; groups come ordered by
cost, then tokens, descending (days: oldest first), and a NULL key (a call of no known person, platform
or model) is a group of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class UsageGroup(StrEnum):
    """What a usage report groups its calls by."""

    PERSON = "person"
    PLATFORM = "platform"
    MODEL = "model"
    KIND = "kind"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class UsageQuery:
    """Which calls a report sums: a time range (``until`` None: up to now), optionally one person's only,
    grouped by ``group`` (None: the totals alone); ``timezone`` names the zone days are counted in."""

    since: float
    until: float | None = None
    group: UsageGroup | None = None
    person_id: str | None = None
    timezone: str = "UTC"


@dataclass(frozen=True, slots=True)
class UsageLine:
    """Model calls summed: how many, how many had no price, tokens of each kind, and the known cost (USD).

    ``key`` names the group (a person id, platform, model, kind or ``YYYY-MM-DD``); None for the totals line
    and for calls whose person, platform or model is unknown."""

    key: str | None = None
    calls: int = 0
    unpriced_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: UsageLine) -> UsageLine:
        """Both lines' calls summed, under this line's key."""
        return UsageLine(
            self.key,
            self.calls + other.calls,
            self.unpriced_calls + other.unpriced_calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True, slots=True)
class UsageReport:
    """A query's groups (empty without a group) and the totals over all of them."""

    query: UsageQuery
    total: UsageLine
    lines: tuple[UsageLine, ...] = ()


@dataclass(frozen=True, slots=True)
class PlatformModelUsage:
    """Every call ever logged on one platform with one model, summed (the cost metrics' counters)."""

    platform: str | None
    model: str | None
    line: UsageLine


class UsageReads(Protocol):
    """Usage over time from the usage log."""

    async def usage_report(self, query: UsageQuery) -> UsageReport:
        """The calls ``query`` selects, summed in total and per group (``ValueError``: unknown time zone)."""
        ...

    async def usage_by_platform_and_model(
        self, since: float | None = None, until: float | None = None
    ) -> tuple[PlatformModelUsage, ...]:
        """The calls logged at ``since <= at < until`` (None: unbounded) summed per (platform, model),
        ordered by platform then model (unknown ones last)."""
        ...


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``ValueError`` when there is none of that name)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


def calendar_days(first: float, last: float, timezone: str) -> tuple[tuple[str, float, float], ...]:
    """The calendar days of ``timezone`` from the one holding ``first`` to the one holding ``last``: each as
    (``YYYY-MM-DD``, start, end) in epoch seconds (a DST day is 23 or 25 hours long)."""
    tz = zone(timezone)
    day = datetime.fromtimestamp(first, tz).date()
    end_day = datetime.fromtimestamp(last, tz).date()
    days: list[tuple[str, float, float]] = []
    while day <= end_day:
        start = datetime.combine(day, time(), tz).timestamp()
        following = day + timedelta(days=1)
        days.append((day.isoformat(), start, datetime.combine(following, time(), tz).timestamp()))
        day = following
    return tuple(days)


def ordered(lines: Iterable[UsageLine], group: UsageGroup) -> tuple[UsageLine, ...]:
    """Groups in report order: days oldest first; anything else by cost, then tokens, descending."""
    if group is UsageGroup.DAY:
        return tuple(sorted(lines, key=lambda line: line.key or ""))
    return tuple(sorted(lines, key=lambda line: (-line.cost_usd, -line.tokens, line.key or "")))
