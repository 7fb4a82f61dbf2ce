"""``mnemogate serve``: the gateway process (HTTP now; adapters, delivery and workers as they land)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.cli import new_state
from gateway.cli.context import CommandContext
from gateway.serving import serve


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("serve", parents=[common], help="run the gateway")
    parser.add_argument("--host", help="listen address (default: http.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="listen port (default: http.port, 8080)")
    new_state.add_option(parser)
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    settings = context.settings
    host = context.args.host or settings.http.host
    port = settings.http.port if context.args.port is None else context.args.port
    new_state.apply(context)
    asyncio.run(serve(context.home, settings, host, port))
    return 0
