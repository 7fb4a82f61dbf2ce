"""``mnemogate schedule add|list|show|cancel``: an operator's reminders and scheduled turns.

Adds go through ``ScheduleBook`` like the tool, the commands and the admin API (one validation: a bad time,
cron expression or time zone is one line naming what was wrong, exit 2). A running gateway picks a new
schedule up within ``schedules.poll_s``; nothing here fires anything.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from typing import Any

from gateway.cli.context import CommandContext
from gateway.schedules import ScheduleBook, ScheduleRequest, describe_run, describe_schedule
from gateway.schedules.clock import BackendClock
from gateway.schedules.deployment import deliverable_platforms
from gateway.storage import Storage, open_storage
from gateway.storage.schedules import OPEN_STATES, SCHEDULE_STATES


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "schedule", parents=[common], help="add, list, show or cancel reminders and scheduled turns"
    )
    actions = parser.add_subparsers(dest="schedule_action", metavar="ACTION", required=True)
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--json", action="store_true", help="print JSON")

    add = actions.add_parser("add", parents=[common, output], help="schedule a message or a turn")
    add.add_argument("--conversation", required=True, metavar="ID", help="the conversation it lands in")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--at", metavar="TIME", help="once: HH:MM, 'tomorrow 09:30' or 'YYYY-MM-DD HH:MM'")
    when.add_argument("--in", dest="after", metavar="DELAY", help="once, after a delay: 90s, 10 minutes")
    when.add_argument("--every", metavar="INTERVAL", help="repeat: '1 day', '2 hours'")
    when.add_argument("--cron", metavar="EXPR", help="repeat on a five-field cron expression: '0 9 * * 1'")
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--message", metavar="TEXT", help="send this text as it is (no model call)")
    what.add_argument("--prompt", metavar="TEXT", help="run this as a turn of the agent")
    add.add_argument("--timezone", metavar="TZ", help="IANA time zone (default: the person's)")
    add.add_argument("--starting", metavar="TIME", help="first run of an --every schedule")
    add.set_defaults(handler=run_add)

    listing = actions.add_parser("list", parents=[common, output], help="open schedules (--all: every one)")
    listing.add_argument("--person", metavar="ID")
    listing.add_argument("--conversation", metavar="ID")
    listing.add_argument("--all", action="store_true", help="include done and cancelled schedules")
    listing.set_defaults(handler=run_list)

    show = actions.add_parser("show", parents=[common, output], help="one schedule and its runs")
    show.add_argument("id", type=int, metavar="ID")
    show.set_defaults(handler=run_show)

    cancel = actions.add_parser("cancel", parents=[common, output], help="cancel a schedule")
    cancel.add_argument("id", type=int, metavar="ID")
    cancel.set_defaults(handler=run_cancel)


def _book(context: CommandContext, storage: Storage) -> ScheduleBook:
    settings = context.settings
    return ScheduleBook(
        storage.schedules,
        settings.schedules,
        clock=BackendClock(storage.schedules),
        platforms=deliverable_platforms(settings),
    )


def _open(context: CommandContext) -> Any:
    return open_storage(context.home.ensure().root, context.settings.storage)


def run_add(context: CommandContext) -> int:
    args = context.args
    request = ScheduleRequest(
        at=args.at,
        after=args.after,
        every=args.every,
        cron=args.cron,
        message=args.message,
        prompt=args.prompt,
        timezone=args.timezone,
        starting=args.starting,
    )

    async def add() -> Any:
        async with _open(context) as storage:
            return await _book(context, storage).add_to(args.conversation, request, by="admin:cli")

    record = asyncio.run(add())
    _print(context, dataclasses.asdict(record), f"added {describe_schedule(record)}")
    return 0


def run_list(context: CommandContext) -> int:
    args = context.args

    async def listing() -> Any:
        async with _open(context) as storage:
            return await storage.schedules.find(
                person_id=args.person,
                conversation_id=args.conversation,
                states=SCHEDULE_STATES if args.all else OPEN_STATES,
                limit=10_000,
            )

    records = asyncio.run(listing())
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in records], ensure_ascii=False, indent=2))
        return 0
    for record in records:
        print(
            f"{describe_schedule(record)}  [person {record.person_id}, conversation {record.conversation_id}]"
        )
    if not records:
        print("no schedules" if args.all else "no open schedules")
    return 0


def run_show(context: CommandContext) -> int:
    args = context.args

    async def show() -> Any:
        async with _open(context) as storage:
            record = await storage.schedules.get(args.id)
            runs = await storage.schedules.runs(schedule_id=args.id, limit=100) if record else []
            return record, runs

    record, runs = asyncio.run(show())
    if record is None:
        print(f"mnemogate: error: no schedule {args.id}")
        return 2
    if args.json:
        body = {"schedule": dataclasses.asdict(record), "runs": [dataclasses.asdict(r) for r in runs]}
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    print(describe_schedule(record))
    for run in runs:
        print("  " + describe_run(run, record.timezone))
    return 0


def run_cancel(context: CommandContext) -> int:
    args = context.args

    async def cancel() -> Any:
        async with _open(context) as storage:
            return await _book(context, storage).cancel(args.id, by="admin:cli")

    record = asyncio.run(cancel())
    _print(context, dataclasses.asdict(record), f"cancelled {describe_schedule(record)}")
    return 0


def _print(context: CommandContext, body: dict[str, Any], text: str) -> None:
    print(json.dumps(body, ensure_ascii=False, indent=2) if context.args.json else text)
