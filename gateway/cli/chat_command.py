"""``mnemogate chat``: a terminal conversation with the agent for the local person.

Reads stdin line by line (so it also works piped). Each run is a new conversation unless
``--continue`` is given; memory is shared through the home directory. ``/new`` starts a new
conversation, ``/memory`` shows memory, ``/quit`` ends.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

from agent_core.agent import TurnFailed, TurnFinished, TurnScope
from agent_core.state import NewMessage, Principal
from gateway.cli.context import LOCAL_PERSON_ID, CommandContext
from gateway.runtime import Runtime, open_runtime

SESSION_KEY = f"cli:dm:{LOCAL_PERSON_ID}"
PRINCIPAL = Principal(
    person_id=LOCAL_PERSON_ID,
    platform="cli",
    user_id=LOCAL_PERSON_ID,
    chat_id=LOCAL_PERSON_ID,
    chat_type="dm",
)


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("chat", parents=[common], help="talk to the agent in the terminal")
    parser.add_argument(
        "--continue", dest="resume", action="store_true", help="continue the last terminal conversation"
    )
    parser.set_defaults(handler=run)


def run(context: CommandContext) -> int:
    return asyncio.run(_chat(context, sys.stdin, sys.stdout))


async def _chat(context: CommandContext, stdin: TextIO, stdout: TextIO) -> int:
    interactive = stdin.isatty()
    async with open_runtime(context.home, context.settings) as runtime:
        conversation_id = await _open_conversation(runtime, resume=context.args.resume)
        while True:
            if interactive:
                stdout.write("you> ")
                stdout.flush()
            line = await asyncio.to_thread(stdin.readline)
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            if text == "/new":
                conversation_id = await _open_conversation(runtime, resume=False)
                _say(stdout, "Started a new conversation.")
            elif text == "/memory":
                _say(stdout, await _memory_text(runtime))
            else:
                _say(stdout, await _turn(runtime, conversation_id, text))
    return 0


async def _open_conversation(runtime: Runtime, *, resume: bool) -> str:
    if resume:
        record = await runtime.state.ensure_conversation(SESSION_KEY, PRINCIPAL)
    else:
        record = await runtime.state.start_new_conversation(SESSION_KEY, PRINCIPAL)
    return record.id


async def _turn(runtime: Runtime, conversation_id: str, text: str) -> str:
    tip = await runtime.state.resolve_tip(conversation_id)
    await runtime.state.append_message(tip.id, NewMessage(role="user", content=text, author=LOCAL_PERSON_ID))
    scope = TurnScope(
        conversation_id=conversation_id, person_id=LOCAL_PERSON_ID, is_admin=True, platform="cli"
    )
    reply = ""
    async for event in runtime.agent.run(scope):
        if isinstance(event, TurnFinished | TurnFailed):
            reply = event.text
    return reply


async def _memory_text(runtime: Runtime) -> str:
    lines = []
    for view in await runtime.memory.show(person_id=LOCAL_PERSON_ID):
        usage = view.usage
        lines.append(f"{usage.target.value}: {usage.used:,}/{usage.limit:,} chars")
        lines += [f"  - {entry}" for entry in view.entries] or ["  (empty)"]
    return "\n".join(lines)


def _say(stdout: TextIO, text: str) -> None:
    stdout.write(text.rstrip() + "\n")
    stdout.flush()
