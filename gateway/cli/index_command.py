"""``mnemogate index status|rebuild``: how complete the search indexes are, and embedding every window anew.

``status`` prints the full-text index's and the semantic index's state (``--json``: one object);
``rebuild`` forgets every stored window vector and watches them being embedded again (a progress bar on a
terminal; ``--background`` returns at once and leaves the work to this home's ``serve`` or ``worker``).
Both read and write through the ``SearchIndex`` port of the backend ``open_storage`` opens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from agent_core.search import load_embedder
from gateway.cli.context import CommandContext
from gateway.cli.embedding_progress import watch_embedding
from gateway.storage import open_storage

WATCH_S = 24 * 3600.0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("index", parents=[common], help="search index status and rebuild")
    actions = parser.add_subparsers(dest="index_action", metavar="ACTION", required=True)
    status = actions.add_parser("status", parents=[common], help="how complete the search indexes are")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler=run_status)
    rebuild = actions.add_parser(
        "rebuild", parents=[common], help="embed every search window again (semantic index)"
    )
    rebuild.add_argument(
        "--background", action="store_true", help="return at once; serve or worker embed the windows"
    )
    rebuild.set_defaults(handler=run_rebuild)


def run_status(context: CommandContext) -> int:
    report = asyncio.run(_status(context))
    if context.args.json:
        print(json.dumps(report))
    else:
        full_text, semantic = report["full_text"], report["semantic"]
        print(f"full-text index: {full_text['state']} ({full_text['indexed_up_to']}/{full_text['newest']})")
        line = f"semantic index: {semantic['state']} ({semantic['embedded']}/{semantic['windows']} windows"
        line += f", model {semantic['model']})" if semantic["model"] else ")"
        print(line + (f": {semantic['detail']}" if semantic["detail"] else ""))
    return 0


def run_rebuild(context: CommandContext) -> int:
    return asyncio.run(_rebuild(context))


async def _status(context: CommandContext) -> dict[str, Any]:
    settings = context.settings
    loaded = await asyncio.to_thread(load_embedder, settings.search.semantic)
    async with open_storage(
        context.home.ensure().root, settings.storage, embedder=loaded.embedder
    ) as storage:
        health = await storage.health.search_health()
        semantic = await storage.search.semantic_status()
    return {
        "full_text": {"state": health.state, "indexed_up_to": health.indexed_up_to, "newest": health.newest},
        "semantic": {
            "state": semantic.state,
            "windows": semantic.windows,
            "embedded": semantic.embedded,
            "model": semantic.model_id,
            "detail": semantic.detail or loaded.reason,
        },
    }


async def _rebuild(context: CommandContext) -> int:
    settings = context.settings
    loaded = await asyncio.to_thread(load_embedder, settings.search.semantic)
    if loaded.embedder is None:
        print(f"mnemogate: error: {loaded.reason}", file=sys.stderr)
        return 1
    async with open_storage(
        context.home.ensure().root, settings.storage, embedder=loaded.embedder
    ) as storage:
        await storage.search.rebuild_semantic()
        if context.args.background:
            print("semantic index: vectors forgotten; serve or worker embed every window again")
            return 0
        progress = await watch_embedding(storage.search, sys.stderr, timeout=WATCH_S)
    print(progress.summary())
    return 0
