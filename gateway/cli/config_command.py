"""``mnemogate check-config``: validate config.yaml plus environment and say what is wrong.

Runs the same checks ``serve`` runs before it connects: the settings, and every enabled adapter built from
them (its token present, its extra installed, its options valid) — without contacting any platform — and
prints the notes ``serve`` logs at start (the model, what the APIs expose, unused platform tokens, deprecated
settings) and, when deprecated settings are in use, exactly what to write instead.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.cli.context import CommandContext
from gateway.runtime import configured_adapters
from gateway.startup_notes import startup_notes


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "check-config",
        parents=[common],
        help="validate the configuration; exits non-zero naming the bad key",
    )
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    settings = context.settings
    adapters = configured_adapters(settings)  # AdapterConfigError names every problem at once
    source = context.home.config_file
    origin = str(source) if source.exists() else f"{source} (absent: defaults and environment only)"
    print(f"configuration OK: {origin}")
    print(f"  memory isolation: {settings.memory.isolation}")
    print(f"  http: {settings.http.host}:{settings.http.port}")
    print(f"  adapters: {', '.join(['web', *adapters])}")
    print(f"  storage: {settings.storage.backend}")
    for note in startup_notes(settings):
        print(f"warning: {note.text}" if note.warning else f"  {note.text}")
    hint = settings.migration_hint()
    if hint is not None:
        print("to migrate off deprecated settings, " + hint)
    return 0
