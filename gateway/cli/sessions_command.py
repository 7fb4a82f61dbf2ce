"""``mnemogate sessions list|show``: conversations, their segments, queue state and deliveries."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from gateway.cli.context import CommandContext
from gateway.storage import open_storage


class UnknownConversationError(LookupError):
    """``sessions show`` was given an id that names no conversation."""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("sessions", parents=[common], help="list or show conversations")
    actions = parser.add_subparsers(dest="sessions_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="recent conversations")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--all", action="store_true", help="include ended conversations")
    listing.set_defaults(handler=run_list)
    show = actions.add_parser("show", parents=[common], help="one conversation in full")
    show.add_argument("conversation_id")
    show.add_argument("--messages", type=int, default=20, help="how many of the newest messages to print")
    show.set_defaults(handler=run_show)


def run_list(context: CommandContext) -> int:
    for line in asyncio.run(_list(context)):
        print(line)
    return 0


def run_show(context: CommandContext) -> int:
    try:
        lines = asyncio.run(_show(context))
    except UnknownConversationError as exc:
        print(f"mnemogate: error: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


async def _list(context: CommandContext) -> list[str]:
    args = context.args
    async with open_storage(context.home.root, context.settings.storage) as storage:
        rows = await storage.admin.recent_conversations(limit=max(args.limit, 1), include_ended=args.all)
    if not rows:
        return ["no conversations"]
    lines = []
    for row in rows:
        status = f"ended ({row.end_reason})" if row.ended_at is not None else "live"
        person = row.person_id or "-"
        lines.append(f"{row.id}  {_when(row.created_at)}  {status:<18} {person:<14} {row.session_key}")
    return lines


async def _show(context: CommandContext) -> list[str]:
    conversation_id = context.args.conversation_id
    async with open_storage(context.home.root, context.settings.storage) as storage:
        record = await storage.agent.get_conversation(conversation_id)
        if record is None:
            raise UnknownConversationError(f"no conversation {conversation_id!r}")
        segments = await storage.agent.lineage(conversation_id)
        messages = await storage.agent.conversation_messages(conversation_id)
        queue = await storage.queue.queue_state(conversation_id)
        outbox = await storage.outbox.for_conversation(conversation_id)
    ended = f"ended {_when(record.ended_at)} ({record.end_reason})" if record.ended_at else "live"
    lines = [
        f"conversation {record.id}  key {record.session_key}",
        f"person {record.person_id or '-'}  created {_when(record.created_at)}  {ended}",
        f"queue: {queue.running} running, {queue.queued} queued",
        "segments:",
    ]
    for segment in segments:
        usage = segment.usage
        lines.append(
            f"  {segment.id}  {_when(segment.started_at)}  end={segment.end_reason or '-'}  "
            f"in={usage.input_tokens} out={usage.output_tokens} cache_read={usage.cache_read_tokens}"
        )
    failed = [row for row in outbox if row.state == "failed"]
    pending = [row for row in outbox if row.state in ("pending", "sending")]
    lines.append(f"deliveries: {len(outbox)} total, {len(pending)} pending, {len(failed)} failed")
    lines += [f"  failed #{row.id}: {row.error}" for row in failed]
    lines.append(f"messages (newest {context.args.messages} of {len(messages)}):")
    for message in messages[-max(context.args.messages, 0) :] if context.args.messages else []:
        text = (message.content or "").replace("\n", " ")
        lines.append(f"  [{message.role}] {text[:200]}")
    return lines


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))
