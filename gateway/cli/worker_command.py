"""``mnemogate worker``: an extra worker process that runs turns from the shared home until SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.cli.context import CommandContext
from gateway.runtime import run_worker


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "worker", parents=[common], help="run turns from the shared home (scale with more processes)"
    )
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    asyncio.run(run_worker(context.home, context.settings))
    return 0
