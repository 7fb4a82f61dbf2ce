"""``mnemogate worker``: an extra worker process that runs turns from the shared home until SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.cli import new_state
from gateway.cli.context import CommandContext
from gateway.serving import run_worker


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "worker", parents=[common], help="run turns from the shared home (scale with more processes)"
    )
    new_state.add_option(parser)
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    new_state.apply(context)
    asyncio.run(run_worker(context.home, context.settings))
    return 0
