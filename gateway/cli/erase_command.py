"""``mnemogate erase --person ID``: delete everything stored about one person (see gateway/erasure).

Asks for the person id to be typed back unless ``--yes`` is given; refuses an unknown person before asking.
Exit status: 0 erased, 1 refused or not confirmed, 3 the memory provider could not be cleared and nothing was
erased (run it again once the provider is reachable, or with ``--skip-provider``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agent_core.providers import MemoryProvider, ProviderContext, build_provider
from agent_core.providers.errors import ProviderUnavailableError
from gateway.cli.context import CommandContext
from gateway.erasure import ErasureReport, PersonEraser, ProviderNotClearedError, UnknownPersonError
from gateway.storage import PersonFootprint, Storage, open_storage

PROVIDER_NOT_CLEARED = 3


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "erase",
        parents=[common],
        help="delete everything stored about one person (conversations, memory, provider data, accounts)",
    )
    parser.add_argument("--person", required=True, metavar="ID", help="the person id to erase")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--skip-provider",
        action="store_true",
        help="leave the external memory provider's data (when it is gone for good); everything else goes",
    )
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    args = context.args
    try:
        report = asyncio.run(
            _erase(context, args.person, confirmed=args.yes, skip_provider=args.skip_provider)
        )
    except UnknownPersonError as exc:
        print(f"mnemogate: {exc}", file=sys.stderr)
        return 1
    except ProviderNotClearedError as exc:
        print(f"mnemogate: {exc}", file=sys.stderr)
        return PROVIDER_NOT_CLEARED
    if report is None:
        print("mnemogate: not confirmed; nothing was erased", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(f"person {report.person_id}: {report.summary()}")
    return 0


async def _erase(
    context: CommandContext, person_id: str, *, confirmed: bool, skip_provider: bool
) -> ErasureReport | None:
    settings = context.settings
    root = context.home.ensure().root
    facts_file = settings.memory.provider.local.db_path
    async with open_storage(root, settings.storage, facts_file=facts_file) as storage:
        found = await PersonEraser(storage).footprint(person_id)
        if not confirmed and not await asyncio.to_thread(_confirm, found):
            return None
        async with _provider(context, storage) as provider:
            eraser = PersonEraser(storage, provider)
            return await eraser.erase(person_id, erased_by="admin:cli", skip_provider=skip_provider)


def _confirm(found: PersonFootprint) -> bool:
    print(
        f"person {found.person_id}: {len(found.conversation_ids)} conversations, "
        f"{len(found.accounts)} accounts will be deleted with their memory and provider data.\n"
        "This cannot be undone (backups are not rewritten).",
        file=sys.stderr,
    )
    print(f"Type the person id ({found.person_id}) to erase: ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip() == found.person_id


@contextlib.asynccontextmanager
async def _provider(context: CommandContext, storage: Storage) -> AsyncIterator[MemoryProvider | None]:
    """The configured memory provider, initialised (None: none configured, or the local one, whose facts
    the eraser deletes through the storage); an unavailable one is yielded as is and fails its erase."""
    settings = context.settings.memory.provider
    if settings.name in ("none", "local"):
        yield None
        return
    provider = build_provider(settings, home=context.home.root, facts=storage.facts)
    if provider is None:
        yield None
        return
    reason = provider.unavailable_reason()
    if reason is not None:
        yield _Unavailable(provider.name, reason)
        return
    try:
        await provider.initialize()
    except Exception as exc:  # an SDK's own errors at start-up: the erase reports them, nothing changes
        yield _Unavailable(provider.name, f"it did not start: {type(exc).__name__}: {exc}")
        return
    try:
        yield provider
    finally:
        await provider.shutdown()


class _Unavailable(MemoryProvider):
    """A configured provider that cannot run here (no key, no package): its erase fails with the reason."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self._reason = reason

    def unavailable_reason(self) -> str | None:
        return self._reason

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        return None

    async def forget_person(self, person_id: str, conversation_ids: Sequence[str]) -> None:
        raise ProviderUnavailableError(self._reason)
