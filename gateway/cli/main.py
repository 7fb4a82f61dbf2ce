"""Entry point of the ``mnemogate`` console script: parse, dispatch, and turn known errors into one line.

Known failures (bad config, unusable home or database, bad input) print ``mnemogate: error: …`` and exit
2; nothing else is caught, so genuine bugs keep their traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gateway.cli import (
    backup_command,
    bench_command,
    chat_command,
    config_command,
    erase_command,
    export_command,
    import_command,
    index_command,
    memory_command,
    migrate_command,
    pair_command,
    retention_command,
    schedule_command,
    search_command,
    serve_command,
    sessions_command,
    skills_command,
    usage_command,
    worker_command,
)
from gateway.cli.context import CommandContext
from gateway.cli.errors import USER_FACING_ERRORS

COMMAND_MODULES = (
    config_command,
    serve_command,
    worker_command,
    chat_command,
    sessions_command,
    usage_command,
    memory_command,
    skills_command,
    search_command,
    index_command,
    import_command,
    export_command,
    pair_command,
    schedule_command,
    retention_command,
    erase_command,
    backup_command,
    migrate_command,
    bench_command,
)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--home",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="home directory (default: $MNEMOGATE_HOME or ~/.mnemogate)",
    )
    parser = argparse.ArgumentParser(
        prog="mnemogate",
        description="Multi-platform chat gateway for an AI agent that remembers.",
        parents=[common],
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    context = CommandContext.from_args(args)
    try:
        result: int = args.handler(context)
    except USER_FACING_ERRORS as exc:
        print(f"mnemogate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
