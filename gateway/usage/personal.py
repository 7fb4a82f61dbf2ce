"""A person's own usage as ``/status`` shows it: today and this month, cost and tokens, in the usage zone.

Invariant: it reads only the asking person's calls (``UsageQuery.person_id``); a cost with unpriced calls
says so rather than looking complete.
"""

from __future__ import annotations

from gateway.storage.usage_reads import UsageLine, UsageQuery, UsageReads

from .calendar import UsageCalendar
from .report import cost_text


class PersonalUsage:
    """Reads one person's usage for today and this month."""

    def __init__(self, reads: UsageReads, calendar: UsageCalendar) -> None:
        self._reads = reads
        self._calendar = calendar

    async def lines(self, person_id: str) -> list[str]:
        """``Your usage today: …`` and ``… this month: …``."""
        found = []
        for label, (since, until) in (
            ("today", self._calendar.today()),
            ("this month", self._calendar.this_month()),
        ):
            query = UsageQuery(
                since=since, until=until, person_id=person_id, timezone=self._calendar.zone_name
            )
            total = (await self._reads.usage_report(query)).total
            found.append(f"Your usage {label}: {_summary(total)}")
        return found


def _summary(line: UsageLine) -> str:
    if line.calls == 0:
        return "nothing yet"
    calls = "1 model call" if line.calls == 1 else f"{line.calls:,} model calls"
    return f"{cost_text(line)}, {line.tokens:,} tokens, {calls}"
