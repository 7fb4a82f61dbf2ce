"""``mnemogate import transcripts FILE.jsonl``: import past conversations so they can be searched.

One conversation per line (see gateway.storage.transcripts for the format). Each malformed line is
reported on stderr as ``FILE:LINE: reason`` while the rest imports; the exit status is 1 when any line
failed, else 0. Importing the same file again adds nothing twice. The command waits until the imported
messages are searchable (or says that the index is still catching up), then shows the semantic index
embedding their windows (a progress bar on a terminal, with windows/s; Ctrl-C or ``--background`` leaves
the rest to this home's ``serve`` or ``worker``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from agent_core.search import load_embedder
from gateway.cli.context import CommandContext
from gateway.cli.embedding_progress import EmbeddingProgress, watch_embedding
from gateway.storage import ImportReport, open_storage

INDEX_WAIT_S = 120.0
EMBED_WATCH_S = 24 * 3600.0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("import", parents=[common], help="import data into the home directory")
    kinds = parser.add_subparsers(dest="import_kind", metavar="KIND", required=True)
    transcripts = kinds.add_parser(
        "transcripts", parents=[common], help="import conversations from a JSONL file (one per line)"
    )
    transcripts.add_argument("file", type=Path, metavar="FILE.jsonl")
    transcripts.add_argument(
        "--background",
        action="store_true",
        help="do not wait for the semantic index; serve or worker embed the new windows",
    )
    transcripts.set_defaults(handler=run_import_transcripts)


def run_import_transcripts(context: CommandContext) -> int:
    path: Path = context.args.file
    try:
        report, caught_up, progress = asyncio.run(_import(context, path))
    except OSError as exc:
        print(f"mnemogate: error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for error in report.errors:
        print(f"{path}:{error.line}: {error.reason}", file=sys.stderr)
    print(
        f"imported {report.conversations} conversation(s) with {report.messages} message(s); "
        f"{len(report.skipped)} already present; {len(report.errors)} line(s) failed"
    )
    if not caught_up:
        print("mnemogate: warning: the search index is still catching up", file=sys.stderr)
    if progress is not None:
        print(progress.summary())
    return 1 if report.errors else 0


async def _import(context: CommandContext, path: Path) -> tuple[ImportReport, bool, EmbeddingProgress | None]:
    settings = context.settings
    loaded = await asyncio.to_thread(load_embedder, settings.search.semantic)
    home = context.home.ensure().root
    async with open_storage(home, settings.storage, embedder=loaded.embedder) as storage:
        report = await storage.imports.import_path(path)
        caught_up = await storage.search.wait_indexed(INDEX_WAIT_S)
        if loaded.embedder is None or context.args.background or not report.messages:
            return report, caught_up, None
        progress = await watch_embedding(storage.search, sys.stderr, timeout=EMBED_WATCH_S)
        return report, caught_up, progress
