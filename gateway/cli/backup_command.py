"""``mnemogate backup PATH`` and ``mnemogate restore PATH``: copies of a home directory an operator can keep.

A backup runs while the gateway and workers keep serving; a restore refuses a home that any process has
open, and a non-empty home unless ``--force``. On the PostgreSQL backend a backup is ``pg_dump`` of the
configured schema plus the home's host-local files, and a restore is ``pg_restore`` into the configured
schema (``gateway.storage.postgres.backup``); a backup restores only onto the backend it was taken from.
``python -m gateway.cli.backup_command backup PATH`` runs these commands on their own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_core.storage import StateError
from agent_core.storage.sqlite.backup import MANIFEST, BackupError, BackupReport, backup_home, restore_home
from gateway.cli.context import CommandContext
from gateway.config import ConfigError, Settings
from gateway.storage.sqlite import GATEWAY_LADDER


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    backup = commands.add_parser(
        "backup",
        parents=[common],
        help="copy state.db (online, consistent), memories/, skills/, SOUL.md and config.yaml into PATH "
        "(PostgreSQL: pg_dump of the schema, plus SOUL.md, client_ids.key and config.yaml)",
    )
    backup.add_argument("path", metavar="PATH", help="a new or empty directory")
    backup.set_defaults(handler=run_backup)

    restore = commands.add_parser(
        "restore", parents=[common], help="replace the home's state with a backup (mnemogate must be stopped)"
    )
    restore.add_argument("path", metavar="PATH", help="a directory written by `mnemogate backup`")
    restore.add_argument("--force", action="store_true", help="replace the contents of a non-empty home")
    restore.set_defaults(handler=run_restore)


def run_backup(context: CommandContext) -> int:
    destination = Path(context.args.path).expanduser().resolve()
    if context.settings.storage.backend == "postgres":
        return _backup_postgres(context, destination)
    report = backup_home(
        context.home.root, destination, context.settings.storage.sqlite, ladders=(GATEWAY_LADDER,)
    )
    print(f"backup written to {report.path}: {_summary(report)}")
    return 0


def run_restore(context: CommandContext) -> int:
    source = Path(context.args.path).expanduser().resolve()
    if context.settings.storage.backend == "postgres":
        return _restore_postgres(context, source)
    if _backend_of(source) == "postgres":
        raise BackupError(
            f"{source} is a backup of a PostgreSQL database: restore it with storage.backend: postgres "
            "and the DSN of the database to restore into"
        )
    settings = context.settings.storage.sqlite
    report = restore_home(
        source, context.home.root, settings, force=context.args.force, ladders=(GATEWAY_LADDER,)
    )
    print(f"restored {source} into {report.path}: {_summary(report)}")
    print("the search index is rebuilt in the background on the next start")
    return 0


def _backup_postgres(context: CommandContext, destination: Path) -> int:
    from gateway.storage.postgres.backup import backup_database

    settings = context.settings
    report = asyncio.run(
        backup_database(
            settings.storage.postgres,
            context.home.root,
            destination,
            soul_file=settings.prompt.soul_file,
            context_file=_context_file(settings),
        )
    )
    versions = ", ".join(f"{owner} v{v}" for owner, v in report.schema_versions.items())
    print(
        f"backup written to {report.path}: pg_dump of schema {report.schema} of database {report.database} "
        f"({report.messages:,} messages, {versions}), {', '.join(report.files)} ({report.seconds:.2f} s)"
    )
    return 0


def _restore_postgres(context: CommandContext, source: Path) -> int:
    from gateway.storage.postgres.backup import restore_database

    report = asyncio.run(
        restore_database(
            source, context.home.root, context.settings.storage.postgres, force=context.args.force
        )
    )
    versions = ", ".join(f"{owner} v{v}" for owner, v in report.schema_versions.items())
    print(
        f"restored {source} into schema {report.schema} of database {report.database}: "
        f"{report.messages:,} messages, {versions} ({report.seconds:.2f} s)"
    )
    files = report.host_files
    if files is not None:
        if files.restored:
            print(f"  restored into {report.path}: {', '.join(files.restored)}")
        if files.kept:
            print(
                f"  kept this home's own (differs from the backup; --force replaces): {', '.join(files.kept)}"
            )
        if files.not_written:
            copies = ", ".join(str(source / name) for name in files.not_written)
            print(f"  not written (this host's deployment configuration; compare by hand): {copies}")
    return 0


def _context_file(settings: Settings) -> Path | None:
    workspace = settings.prompt.workspace
    if workspace is None or not workspace.is_dir():
        return None
    from agent_core.prompt.context_files import find_context_file

    return find_context_file(workspace)


def _backend_of(source: Path) -> str:
    """The backend a backup was taken from (manifests before PostgreSQL name none: SQLite)."""
    try:
        data = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "sqlite"  # restore_home reports the unreadable manifest in its own words
    return str(data.get("backend", "sqlite")) if isinstance(data, dict) else "sqlite"


def _summary(report: BackupReport) -> str:
    return (
        f"{report.messages:,} messages, schema v{report.schema_version}, "
        f"{', '.join(report.files)} ({report.seconds:.2f} s)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``backup``/``restore`` alone, with ``mnemogate``'s error style (exit 2 and one line)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", metavar="DIR", default=argparse.SUPPRESS, help="home directory")
    parser = argparse.ArgumentParser(prog="mnemogate", parents=[common])
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True), common)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    context = CommandContext.from_args(args)
    try:
        result: int = args.handler(context)
    except (ConfigError, StateError) as exc:
        print(f"mnemogate: error: {exc}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())
