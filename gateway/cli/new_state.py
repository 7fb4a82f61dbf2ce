"""The ``--new-state`` option of ``serve`` and ``worker``: a new state.db when the present one is damaged.

Invariants: only a damaged state.db (empty where the home holds data, unreadable, or failing its
integrity check) is moved aside, to ``state.db.corrupt-<UTC time>``, and never deleted; a healthy one is
kept, so a flag left in a service definition never discards data; nothing moves while another process
has the home open.
"""

from __future__ import annotations

import argparse
import logging
import sys

from agent_core.storage.sqlite import set_aside_damaged
from gateway.cli.context import CommandContext

_LOG = logging.getLogger("mnemogate.cli")


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--new-state",
        action="store_true",
        help="if state.db is damaged or empty, move it aside (state.db.corrupt-<time>) and start a new one",
    )


def apply(context: CommandContext) -> None:
    """Carry out ``--new-state`` before the store opens; says on stderr what it did."""
    if not context.args.new_state:
        return
    root = context.home.ensure().root
    moved = set_aside_damaged(root, context.settings.storage.sqlite, log=_LOG)
    if moved is None:
        db = root / context.settings.storage.sqlite.db_filename
        verdict = "is healthy; keeping it" if db.exists() else "does not exist yet; it is created"
        print(f"mnemogate: --new-state: {db} {verdict}", file=sys.stderr)
        return
    print(
        f"mnemogate: moved the damaged state database aside to {moved.moved_to} ({moved.reason}); "
        "starting a new one",
        file=sys.stderr,
    )
