"""``mnemogate check-config``: validate config.yaml plus environment and say what is wrong."""

from __future__ import annotations

import argparse
from typing import Any

from gateway.cli.context import CommandContext


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "check-config",
        parents=[common],
        help="validate the configuration; exits non-zero naming the bad key",
    )
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    settings = context.settings
    source = context.home.config_file
    origin = str(source) if source.exists() else f"{source} (absent: defaults and environment only)"
    print(f"configuration OK: {origin}")
    print(f"  model provider: {settings.model.provider}")
    print(f"  memory isolation: {settings.memory.isolation}")
    print(f"  http: {settings.http.host}:{settings.http.port}")
    return 0
