"""The cost and token counters of ``/metrics``, read from the usage log without summing all of it each scrape.

Invariant: calls logged before ``settled_until`` (``SETTLE_S`` ago, longer than any transaction that writes a
usage row stays open — the rule budgets settle their spend by) can no longer appear, so they are summed once
into this process's running totals; each read then sums only the calls since its last watermark, plus the
short unsettled tail. The usage log is never pruned, so a full sum per scrape would grow without bound (about
0.8 s per scrape at a million calls on SQLite).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from gateway.storage.budgets import settled_until
from gateway.storage.usage_reads import PlatformModelUsage, UsageLine, UsageReads

_Cell = tuple[str | None, str | None]


class UsageCounters:
    """Every logged call summed per (platform, model), as of the latest read."""

    def __init__(self, usage: UsageReads, clock: Callable[[], float] = time.time) -> None:
        self._usage = usage
        self._clock = clock
        self._settled: dict[_Cell, UsageLine] = {}
        self._until: float | None = None

    async def read(self) -> tuple[PlatformModelUsage, ...]:
        """The totals now: the settled sums, brought up to the current watermark, plus the calls after it."""
        until = settled_until(self._clock())
        if self._until is None or until > self._until:
            _add(self._settled, await self._usage.usage_by_platform_and_model(since=self._until, until=until))
            self._until = until
        totals = dict(self._settled)
        _add(totals, await self._usage.usage_by_platform_and_model(since=self._until))
        cells = sorted(totals, key=lambda c: (c[0] is None, c[0] or "", c[1] is None, c[1] or ""))
        return tuple(
            PlatformModelUsage(platform, model, totals[platform, model]) for platform, model in cells
        )


def _add(totals: dict[_Cell, UsageLine], cells: Iterable[PlatformModelUsage]) -> None:
    for cell in cells:
        key = (cell.platform, cell.model)
        totals[key] = totals[key] + cell.line if key in totals else cell.line
