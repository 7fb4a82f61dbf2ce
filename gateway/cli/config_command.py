"""``mnemogate check-config``: validate config.yaml plus environment and say what is wrong.

Runs the same checks ``serve`` runs before it connects: the settings, and every enabled adapter built from
them (its token present, its extra installed, its options valid) — without contacting any platform — and
prints the notes ``serve`` logs at start (the model, what the APIs expose, unused platform tokens, deprecated
settings) and, when deprecated settings are in use, exactly what to write instead. The storage is described
by ``storage_check``: the PostgreSQL DSN is parsed (and printed redacted); ``--connect`` also visits the
database, read-only, and says whether its schema fits.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.cli.context import CommandContext
from gateway.cli.storage_check import storage_lines
from gateway.runtime import configured_adapters
from gateway.startup_notes import startup_notes


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "check-config",
        parents=[common],
        help="validate the configuration; exits non-zero naming the bad key",
    )
    parser.add_argument(
        "--connect",
        action="store_true",
        help="also connect to the database (read only) and check its server and schema version",
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
    for line in storage_lines(settings.storage, context.home, connect=context.args.connect):
        print(line)
    for note in startup_notes(settings):
        print(f"warning: {note.text}" if note.warning else f"  {note.text}")
    hint = settings.migration_hint()
    if hint is not None:
        print("to migrate off deprecated settings, " + hint)
    return 0
