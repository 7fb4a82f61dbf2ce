"""``mnemogate usage``: model usage and cost over a time range, in total and grouped by person, platform,
model, kind or day — a table, or JSON with ``--json``."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from gateway.cli.context import CommandContext
from gateway.storage import open_storage
from gateway.storage.usage_reads import UsageGroup, UsageQuery
from gateway.usage import UsageCalendar, report_json, report_table, usage_zone
from gateway.usage.calendar import FORMS


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "usage",
        parents=[common],
        help="model usage and cost by person, platform, model, kind or day",
        description="Sum the recorded model calls over a time range. Times: " + FORMS + " (calendar "
        "words in usage.timezone, else admin.timezone). A cost sums known prices; calls of a model with "
        "no price are counted as unpriced.",
    )
    parser.add_argument("--since", default="today", help="start of the range (default: today)")
    parser.add_argument("--until", default=None, help="end of the range, exclusive (default: now)")
    parser.add_argument(
        "--by",
        choices=[group.value for group in UsageGroup],
        default="person",
        help="group by (default person)",
    )
    parser.add_argument("--person", default=None, metavar="PERSON_ID", help="only this person's calls")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run_usage)


def run_usage(context: CommandContext) -> int:
    args = context.args
    zone = usage_zone(context.settings)
    calendar = UsageCalendar(zone)
    query = UsageQuery(
        since=calendar.parse(args.since),
        until=None if args.until is None else calendar.parse(args.until),
        group=UsageGroup(args.by),
        person_id=args.person,
        timezone=zone,
    )
    report = asyncio.run(_report(context, query))
    if args.json:
        print(json.dumps(report_json(report), indent=2))
        return 0
    for line in report_table(report):
        print(line)
    return 0


async def _report(context: CommandContext, query: UsageQuery) -> Any:
    async with open_storage(context.home.root, context.settings.storage) as storage:
        return await storage.usage.usage_report(query)
