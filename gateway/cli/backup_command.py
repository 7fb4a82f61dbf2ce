"""``mnemogate backup PATH`` and ``mnemogate restore PATH``: copies of a home directory an operator can keep.

A backup runs while the gateway and workers keep serving; a restore refuses a home that any process has
open, and a non-empty home unless ``--force``. ``python -m gateway.cli.backup_command backup PATH`` runs
these commands on their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_core.storage import StateError
from agent_core.storage.sqlite.backup import BackupReport, backup_home, restore_home
from gateway.cli.context import CommandContext
from gateway.config import ConfigError
from gateway.storage.sqlite import GATEWAY_LADDER


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    backup = commands.add_parser(
        "backup",
        parents=[common],
        help="copy state.db (online, consistent), memories/, skills/, SOUL.md and config.yaml into PATH",
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
    report = backup_home(
        context.home.root, destination, context.settings.storage.sqlite, ladders=(GATEWAY_LADDER,)
    )
    print(f"backup written to {report.path}: {_summary(report)}")
    return 0


def run_restore(context: CommandContext) -> int:
    source = Path(context.args.path).expanduser().resolve()
    settings = context.settings.storage.sqlite
    report = restore_home(
        source, context.home.root, settings, force=context.args.force, ladders=(GATEWAY_LADDER,)
    )
    print(f"restored {source} into {report.path}: {_summary(report)}")
    print("the search index is rebuilt in the background on the next start")
    return 0


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
