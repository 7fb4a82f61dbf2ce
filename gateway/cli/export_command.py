"""``mnemogate export --person ID OUT [--force] [--json]``: everything stored about one person, as one zip.

The archive (format ``gateway.export.layout``: JSON, JSON Lines and the person's memory files, with a README
and a manifest naming its format version) is read through the storage port of the configured backend, so it
is the same on SQLite and PostgreSQL, and may be made while the gateway runs. An existing OUT is refused
unless ``--force``; an unknown person, a missing directory or an unwritable path is one error line (exit 2)
and leaves nothing behind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from gateway.cli.context import CommandContext
from gateway.export import ExportSummary, PersonExporter
from gateway.storage import open_storage


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "export", parents=[common], help="write everything stored about one person to a zip archive"
    )
    parser.add_argument("--person", metavar="ID", required=True, help="the person to export")
    parser.add_argument("out", type=Path, metavar="OUT", help="the archive to write (e.g. ada.zip)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(handler=run_export)


def run_export(context: CommandContext) -> int:
    args = context.args
    summary = asyncio.run(_export(context, args.person, args.out.absolute(), force=args.force))
    if args.json:
        body = {"path": str(summary.path), "person_id": summary.person_id, "bytes": summary.bytes}
        print(json.dumps({**body, "counts": dict(summary.counts)}, ensure_ascii=False))
        return 0
    counts = ", ".join(f"{value} {name.replace('_', ' ')}" for name, value in summary.counts.items())
    print(f"exported person {summary.person_id} to {summary.path} ({summary.bytes:,} bytes): {counts}")
    return 0


async def _export(context: CommandContext, person_id: str, out: Path, *, force: bool) -> ExportSummary:
    settings = context.settings
    provider = settings.memory.provider
    async with open_storage(
        context.home.ensure().root, settings.storage, facts_file=provider.local.db_path
    ) as storage:
        exporter = PersonExporter.configured(storage, context.home.root, settings)
        return await exporter.export(person_id, out, force=force)
