"""``mnemogate memory show|add|remove``: the curated memory files, as an operator sees them.

Writes go through the same store, scanner and locks as the agent's memory tool, acting as the console
operator (an admin ``Actor`` for the chosen person), and are audited in state.db with actor ``cli``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from agent_core.actor import Actor
from agent_core.memory import MemoryResult, MemoryStores, StoreView
from gateway.cli.context import LOCAL_PERSON_ID, CommandContext
from gateway.storage import open_storage

TARGETS = ("memory", "user", "global")


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("memory", parents=[common], help="show or edit curated memory")
    actions = parser.add_subparsers(dest="memory_action", metavar="ACTION", required=True)
    scope = argparse.ArgumentParser(add_help=False)
    scope.add_argument(
        "--person", metavar="ID", default=LOCAL_PERSON_ID, help="whose memory (default: local)"
    )

    show = actions.add_parser("show", parents=[common, scope], help="print entries and usage")
    show.add_argument("--target", choices=TARGETS, help="one store only (default: all)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=run_show)

    add = actions.add_parser("add", parents=[common, scope], help="add one entry")
    add.add_argument("text")
    add.add_argument("--target", choices=TARGETS, default="memory")
    add.set_defaults(handler=run_add)

    remove = actions.add_parser("remove", parents=[common, scope], help="remove the entry containing TEXT")
    remove.add_argument("old_text", metavar="OLD_TEXT")
    remove.add_argument("--target", choices=TARGETS, default="memory")
    remove.set_defaults(handler=run_remove)


def run_show(context: CommandContext) -> int:
    args = context.args
    views = asyncio.run(_show(context, args.person, args.target))
    if args.json:
        print(json.dumps([view.to_dict() for view in views], ensure_ascii=False, indent=2))
        return 0
    for view in views:
        usage = view.usage
        print(f"== {usage.target.value} ({usage.path}) — {usage.used:,}/{usage.limit:,} chars")
        if usage.problem:
            print(f"   problem: {usage.problem}")
        for entry in view.entries:
            print("  - " + entry.replace("\n", "\n    "))
        if not view.entries:
            print("  (empty)")
    return 0


def run_add(context: CommandContext) -> int:
    args = context.args
    return _report(asyncio.run(_write(context, "add", args.person, args.target, args.text)))


def run_remove(context: CommandContext) -> int:
    args = context.args
    return _report(asyncio.run(_write(context, "remove", args.person, args.target, args.old_text)))


async def _show(context: CommandContext, person: str, target: str | None) -> tuple[StoreView, ...]:
    stores = MemoryStores(context.home.ensure().root, context.settings.memory)
    if target is not None:
        return (await stores.entries(person_id=person, target=target),)
    return await stores.show(person_id=person)


async def _write(context: CommandContext, action: str, person: str, target: str, text: str) -> MemoryResult:
    settings = context.settings
    async with open_storage(context.home.ensure().root, settings.storage) as storage:
        stores = MemoryStores(context.home.root, settings.memory, audit=storage.agent)
        operator = _console_operator(person)
        if action == "add":
            return await stores.add(operator, target=target, content=text)
        return await stores.remove(operator, target=target, old_text=text)


def _console_operator(person: str) -> Actor:
    """The operator at the console, acting on ``person``'s stores: trusted with the global store too, and
    audited as ``cli`` outside any conversation."""
    return Actor(person, is_admin=True, platform="cli", label="cli")


def _report(result: MemoryResult) -> int:
    if result.success:
        print(f"{result.message or 'done'} ({result.usage})")
        return 0
    print(f"mnemogate: {result.error or 'memory write failed'}", file=sys.stderr)
    return 1
