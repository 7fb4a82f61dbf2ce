"""``mnemogate search QUERY [--person ID | --all] [--limit K] [--json]``: search past conversations.

The console searches as one person (``local`` by default, like ``mnemogate memory``) or, with ``--all``,
everything; ``--json`` prints exactly ``[{"conversation_id", "score", "snippets": [{"message_id",
"role", "text"}]}]``. Messages written moments ago are waited for (bounded) so they can be found. Ranking
is session_search's (the configured ``search`` settings: windows, names demoted, lexical and semantic
fused); when the semantic side could not take part, stderr says why. The command reads through the
``SearchIndex`` port only, of the backend ``open_storage`` opens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any

from agent_core.actor import Actor
from agent_core.search import SearchResults, SearchScope, SessionSearch, load_embedder
from gateway.cli.context import LOCAL_PERSON_ID, CommandContext
from gateway.storage import open_storage

DEFAULT_LIMIT = 5
MAX_LIMIT = 50
INDEX_WAIT_S = 10.0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("search", parents=[common], help="search past conversations")
    parser.add_argument("query", nargs="+", metavar="QUERY", help="words, phrases or identifiers to find")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--person", metavar="ID", help=f"search as this person (default: {LOCAL_PERSON_ID})")
    who.add_argument("--all", action="store_true", help="search every conversation")
    parser.add_argument("--limit", type=_limit, default=DEFAULT_LIMIT, help="conversations to show")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run_search)


def run_search(context: CommandContext) -> int:
    args = context.args
    query = " ".join(args.query)
    # --all: the operator, as an admin, reads everything; else the person (default: the terminal's).
    scope = SearchScope.for_actor(Actor(args.person or LOCAL_PERSON_ID, is_admin=args.all, label="admin:cli"))
    results, caught_up = asyncio.run(_search(context, query, scope, args.limit))
    if not caught_up:
        print(
            "mnemogate: warning: the search index is still catching up; recent messages may be missing",
            file=sys.stderr,
        )
    if results.note:
        print(f"mnemogate: note: {results.mode} search: {results.note}", file=sys.stderr)
    if args.json:
        print(json.dumps(results.to_json_list(), ensure_ascii=False))
    else:
        _print_text(results)
    return 0


async def _search(
    context: CommandContext, query: str, scope: SearchScope, limit: int
) -> tuple[SearchResults, bool]:
    settings = context.settings
    loaded = await asyncio.to_thread(load_embedder, settings.search.semantic)
    home = context.home.ensure().root
    async with open_storage(home, settings.storage, embedder=loaded.embedder) as storage:
        index = storage.search
        caught_up = await index.wait_indexed(INDEX_WAIT_S)
        search = SessionSearch(
            index,
            settings.search.model_copy(update={"max_limit": MAX_LIMIT}),
            embedder=loaded.embedder,
            semantic_note=loaded.reason,
        )
        return await search.search(query, scope, limit=limit), caught_up


def _print_text(results: SearchResults) -> None:
    if not results.conversations:
        print("No matching conversations.")
        return
    for rank, conversation in enumerate(results.conversations, start=1):
        details = [f"score {conversation.score:g}"]
        if conversation.title:
            details.append(repr(conversation.title))
        if conversation.platform:
            details.append(conversation.platform)
        if conversation.person_id:
            details.append(f"person {conversation.person_id}")
        if conversation.started_at is not None:
            details.append(datetime.fromtimestamp(conversation.started_at, UTC).date().isoformat())
        print(f"{rank}. {conversation.conversation_id}  ({', '.join(details)})")
        for snippet in conversation.snippets:
            print(f"   [{snippet.role} #{snippet.message_id}] {snippet.text}")


def _limit(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_LIMIT}")
    return value
