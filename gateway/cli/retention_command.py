"""``mnemogate retention [--dry-run] [--json]``: remove what is past its retention age now, or count it.

A run takes the same lease as serve's background runs (so it never overlaps one on any host) and ignores
their interval; ``--dry-run`` only counts (no lease, nothing changes). Ages come from the ``retention``
settings whether or not ``retention.enabled`` lets serve run it in the background. Prints one line per kind
(``--json``: one object); exits 1 when another run holds the lease.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from gateway.cli.context import CommandContext
from gateway.retention import KIND_LABELS, RetentionReport
from gateway.retention.deployment import retention_runner
from gateway.storage import open_storage

_MB = 1024 * 1024


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "retention", parents=[common], help="remove what is past its retention age (or --dry-run: count it)"
    )
    parser.add_argument("--dry-run", action="store_true", help="only say what a run would remove")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    report = asyncio.run(_run(context))
    if context.args.json:
        print(json.dumps(as_json(report)))
    else:
        print(as_text(report))
    return 1 if report.skipped else 0


async def _run(context: CommandContext) -> RetentionReport:
    settings = context.settings
    async with open_storage(
        context.home.ensure().root, settings.storage, facts_file=settings.memory.provider.local.db_path
    ) as storage:
        runner = retention_runner(settings, storage)
        if context.args.dry_run:
            return await runner.preview()
        return await runner.run(every_s=0.0)


def as_json(report: RetentionReport) -> dict[str, Any]:
    space = report.space
    return {
        "dry_run": report.dry_run,
        "skipped": report.skipped or None,
        "removed": dict(report.removed),
        "seconds": round(report.seconds, 3),
        "space": None
        if space is None
        else {
            "mode": space.mode,
            "file_bytes": space.file_bytes,
            "free_bytes": space.free_bytes,
            "reclaimed_bytes": space.reclaimed_bytes,
        },
    }


def as_text(report: RetentionReport) -> str:
    if report.skipped:
        return f"retention: not run: {report.skipped}"
    verb = "would remove" if report.dry_run else "removed"
    width = max(len(label) for label in KIND_LABELS.values())
    lines = [f"retention {verb}:"]
    lines += [f"  {KIND_LABELS[kind]:<{width}}  {count}" for kind, count in report.removed.items()]
    space = report.space
    if space is not None and space.mode == "autovacuum":
        lines.append("space: PostgreSQL's autovacuum reclaims it")
    elif space is not None:
        line = f"space: state.db {space.file_bytes / _MB:.1f} MB, {space.free_fraction:.0%} free"
        if space.mode == "none":
            line += " (created before auto-vacuum: only VACUUM with the gateway stopped shrinks it)"
        elif not report.dry_run:
            line += f", {space.reclaimed_bytes / _MB:.1f} MB handed back"
        lines.append(line)
    return "\n".join(lines)
