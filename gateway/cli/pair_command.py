"""``mnemogate pair list|approve CODE|deny CODE``: DM pairing requests, decided by the operator.

Decisions are written to state.db, so a running gateway admits an approved account on its next message
without a restart. ``python -m gateway.cli.pair_command`` runs this command on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
from typing import Any

from gateway.cli.context import CommandContext
from gateway.identity import Pairing, PairingError, PairingRequest, PairingState
from gateway.storage import PairingRepository, open_storage


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("pair", parents=[common], help="list, approve or deny DM pairing requests")
    actions = parser.add_subparsers(dest="pair_action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", parents=[common], help="show pairing requests (default: pending)")
    listing.add_argument("--all", action="store_true", help="include approved and denied requests")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)

    for name, verb in (("approve", "admit"), ("deny", "refuse")):
        action = actions.add_parser(name, parents=[common], help=f"{verb} the account behind CODE")
        action.add_argument("code", metavar="CODE")
        action.set_defaults(handler=run_approve if name == "approve" else run_deny)


def run_list(context: CommandContext) -> int:
    args = context.args
    state = None if args.all else PairingState.PENDING
    requests = asyncio.run(_list(context, state))
    if args.json:
        print(json.dumps([request.to_dict() for request in requests], ensure_ascii=False, indent=2))
        return 0
    if not requests:
        print("no pending pairing requests" if state is PairingState.PENDING else "no pairing requests")
        return 0
    for request in requests:
        print(_describe(request))
    return 0


def run_approve(context: CommandContext) -> int:
    return _decide(context, approve=True)


def run_deny(context: CommandContext) -> int:
    return _decide(context, approve=False)


def _decide(context: CommandContext, *, approve: bool) -> int:
    try:
        request = asyncio.run(_apply(context, context.args.code, approve=approve))
    except PairingError as exc:
        print(f"mnemogate: {exc}", file=sys.stderr)
        return 1
    verb = "approved" if approve else "denied"
    print(f"{verb}: {_describe(request)}")
    return 0


async def _list(context: CommandContext, state: PairingState | None) -> list[PairingRequest]:
    settings = context.settings
    async with open_storage(context.home.ensure().root, settings.storage) as storage:
        return await _pairing(context, storage.pairing).list_requests(state)


async def _apply(context: CommandContext, code: str, *, approve: bool) -> PairingRequest:
    settings = context.settings
    async with open_storage(context.home.ensure().root, settings.storage) as storage:
        pairing = _pairing(context, storage.pairing)
        if approve:
            return await pairing.approve(code, by="cli")
        return await pairing.deny(code, by="cli")


def _pairing(context: CommandContext, requests: PairingRepository) -> Pairing:
    access = context.settings.access
    return Pairing(
        requests, codes_per_hour=access.pairing_codes_per_hour, code_length=access.link.code_length
    )


def _describe(request: PairingRequest) -> str:
    when = datetime.datetime.fromtimestamp(request.created_at, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    name = f" ({request.display_name})" if request.display_name else ""
    return f"{request.code}  {request.platform}:{request.account_id}{name}  {request.state.value}  {when}"
