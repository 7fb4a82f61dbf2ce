"""A usage report as people read it: a plain-text table (``mnemogate usage``) or JSON (``--json``, the admin
API), from the storage port's ``UsageReport``.

Invariants: a cost is the sum of known prices; when some calls had no price the cost says so (``+ n
unpriced`` in the table, ``unpriced_calls`` and ``cost_complete: false`` in JSON) instead of looking
complete; a group with no key (unknown person, platform or model) is shown as ``(unknown)`` / null.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from gateway.storage.usage_reads import UsageLine, UsageReport

UNKNOWN = "(unknown)"
_MIN_TIME = 0.0
_MAX_TIME = 253_402_214_400.0  # 9999-12-31T00:00Z: representable in every zone


def line_json(line: UsageLine) -> dict[str, Any]:
    """One line of a report as JSON (the key only when the line is a group's)."""
    return {
        "calls": line.calls,
        "unpriced_calls": line.unpriced_calls,
        "input_tokens": line.input_tokens,
        "output_tokens": line.output_tokens,
        "cache_read_tokens": line.cache_read_tokens,
        "cache_write_tokens": line.cache_write_tokens,
        "tokens": line.tokens,
        "cost_usd": round(line.cost_usd, 6),
        "cost_complete": line.unpriced_calls == 0,
    }


def report_json(report: UsageReport) -> dict[str, Any]:
    """The report with its range (epoch seconds, and ISO in the query's zone), grouping, totals and groups."""
    query = report.query
    tz = ZoneInfo(query.timezone)

    def iso(at: float | None) -> str | None:
        if at is None or not _MIN_TIME <= at <= _MAX_TIME:
            return None  # a bound no calendar can show (the API takes epoch seconds up to 1e12)
        return dt.datetime.fromtimestamp(at, tz).isoformat(timespec="seconds")

    return {
        "since": query.since,
        "until": query.until,
        "since_iso": iso(query.since),
        "until_iso": iso(query.until),
        "timezone": query.timezone,
        "by": None if query.group is None else str(query.group),
        "person_id": query.person_id,
        "total": line_json(report.total),
        "groups": [{"key": line.key, **line_json(line)} for line in report.lines],
    }


def cost_text(line: UsageLine) -> str:
    """``$1.2345``, with ``+ 3 unpriced`` when some calls had no price."""
    text = f"${line.cost_usd:,.4f}"
    return f"{text} + {line.unpriced_calls} unpriced" if line.unpriced_calls else text


def report_table(report: UsageReport) -> list[str]:
    """The report as aligned text lines: one row per group, then the total."""
    head = (
        str(report.query.group or "total").upper(),
        "CALLS",
        "INPUT",
        "OUTPUT",
        "CACHE R",
        "CACHE W",
        "COST",
    )
    rows = [_row(line.key or UNKNOWN, line) for line in report.lines]
    rows.append(_row("TOTAL", report.total))
    table = [head, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = []
    for row in table:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:-1], strict=True)]
        lines.append("  ".join([first, *rest, row[-1]]))
    return lines


def _row(key: str, line: UsageLine) -> tuple[str, ...]:
    counts = (
        line.calls,
        line.input_tokens,
        line.output_tokens,
        line.cache_read_tokens,
        line.cache_write_tokens,
    )
    return (key, *(f"{count:,}" for count in counts), cost_text(line))
