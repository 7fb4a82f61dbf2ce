"""``mnemogate memory show|add|remove|export|import``: the curated memory, as an operator sees it.

The documents come from the opened storage (files under the home on SQLite, rows on PostgreSQL). Writes go
through the same store, scanner and locks as the agent's memory tool, acting as the console operator (an
admin ``Actor`` for the chosen person), and are audited with actor ``cli``. ``export DIR`` writes every
document as the plain file the file backend keeps (``DIR/people/<person>/MEMORY.md`` …), whatever the
backend; ``import DIR`` reads such files back, each replacing its store after the same checks as a write
(delimiter, threat scan, limit), audited as one ``import`` change by ``cli:import``; importing the same files
again changes nothing. Import exits 1 when any file was not imported.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from agent_core.actor import Actor
from agent_core.memory import (
    ExportedDocument,
    ImportFile,
    MemoryResult,
    MemoryStores,
    StoreView,
    export_documents,
    read_import,
)
from gateway.cli.context import LOCAL_PERSON_ID, CommandContext
from gateway.storage import Storage, open_storage

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

    export = actions.add_parser("export", parents=[common], help="write every memory document as plain files")
    export.add_argument("directory", type=Path, metavar="DIR")
    export.set_defaults(handler=run_export)

    load = actions.add_parser("import", parents=[common], help="read plain memory files back (see export)")
    load.add_argument("directory", type=Path, metavar="DIR")
    load.set_defaults(handler=run_import)


def run_show(context: CommandContext) -> int:
    args = context.args
    views = asyncio.run(_show(context, args.person, args.target))
    if args.json:
        print(json.dumps([view.to_dict() for view in views], ensure_ascii=False, indent=2))
        return 0
    in_database = context.settings.storage.backend != "sqlite"
    memories = context.home.memories
    for view in views:
        usage = view.usage
        where = f"database: {usage.path.relative_to(memories).as_posix()}" if in_database else usage.path
        print(f"== {usage.target.value} ({where}) — {usage.used:,}/{usage.limit:,} chars")
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


def run_export(context: CommandContext) -> int:
    directory: Path = context.args.directory
    written = asyncio.run(_export(context, directory))
    for document in written:
        note = f" (stored text {document.problem}; exported its entries)" if document.problem else ""
        count = f"{document.entry_count} {'entry' if document.entry_count == 1 else 'entries'}"
        print(f"{document.key}: {count}{note}")
    print(f"exported {len(written)} memory documents to {directory}")
    return 0


def run_import(context: CommandContext) -> int:
    directory: Path = context.args.directory
    if not directory.is_dir():
        print(f"mnemogate: error: {directory} is not a directory", file=sys.stderr)
        return 2
    outcomes = asyncio.run(_import(context, directory))
    failures = 0
    for found, result in outcomes:
        if result is None:
            failures += 1
            print(f"{found.key}: skipped: {found.problem}", file=sys.stderr)
        elif not result.success:
            failures += 1
            print(f"{found.key}: refused: {result.error}", file=sys.stderr)
        else:
            print(f"{found.key}: {result.message} ({result.usage})")
    print(f"imported {len(outcomes) - failures} of {len(outcomes)} memory files from {directory}")
    return 1 if failures else 0


async def _show(context: CommandContext, person: str, target: str | None) -> tuple[StoreView, ...]:
    async with _opened(context) as storage:
        stores = _stores(context, storage)
        if target is not None:
            return (await stores.entries(person_id=person, target=target),)
        return await stores.show(person_id=person)


async def _write(context: CommandContext, action: str, person: str, target: str, text: str) -> MemoryResult:
    async with _opened(context) as storage:
        stores = _stores(context, storage)
        operator = _console_operator(person)
        if action == "add":
            return await stores.add(operator, target=target, content=text)
        return await stores.remove(operator, target=target, old_text=text)


async def _export(context: CommandContext, directory: Path) -> tuple[ExportedDocument, ...]:
    async with _opened(context) as storage:
        return await asyncio.to_thread(export_documents, storage.documents, directory)


async def _import(context: CommandContext, directory: Path) -> list[tuple[ImportFile, MemoryResult | None]]:
    async with _opened(context) as storage:
        stores = _stores(context, storage)
        found = await asyncio.to_thread(read_import, directory, stores.sync.layout)
        outcomes: list[tuple[ImportFile, MemoryResult | None]] = []
        for file in found:
            if file.location is None or file.problem is not None:
                outcomes.append((file, None))
                continue
            operator = _console_operator(file.person_id or LOCAL_PERSON_ID).as_writer("cli:import")
            outcomes.append((file, await stores.set_entries(operator, file.location, file.entries)))
        return outcomes


def _opened(context: CommandContext) -> contextlib.AbstractAsyncContextManager[Storage]:
    return open_storage(context.home.ensure().root, context.settings.storage)


def _stores(context: CommandContext, storage: Storage) -> MemoryStores:
    """The memory stores over the opened storage's documents, audited in its agent storage."""
    return MemoryStores(
        context.home.root, context.settings.memory, audit=storage.agent, documents=storage.documents
    )


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
