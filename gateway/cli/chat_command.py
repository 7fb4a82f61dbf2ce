"""``mnemogate chat``: a terminal conversation with the agent for the local person, an admin.

Reads stdin line by line (so it also works piped). Each run is a new conversation unless ``--continue``
is given; memory is shared through the home directory. Slash commands go through the gateway's own
command table (``/help``, ``/new``, ``/status``, ``/memory``, ``/whoami`` …) under the terminal's
session key, the one the inbound pipeline would give a DM on platform ``cli``; ``/quit`` ends.
Invariant: every line joins the key's live conversation, so a command that ends it (``/new``) is
followed by the next line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import Any, TextIO

from agent_core.actor import Actor
from agent_core.agent import TurnFailed, TurnFinished
from agent_core.storage import NewMessage, Principal
from gateway.cli.context import LOCAL_PERSON_ID, CommandContext
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.inbound import BuiltinCommands, CommandCall, CommandTable, session_key_for
from gateway.runtime import Runtime, build_gateway, command_services, open_runtime
from gateway.sessions import SessionKey

PLATFORM = "cli"
TERMINAL = ChatRef(PLATFORM, LOCAL_PERSON_ID, ChatKind.DM)
ACCOUNT = UserRef(PLATFORM, LOCAL_PERSON_ID)
OPERATOR = Actor(LOCAL_PERSON_ID, is_admin=True, platform=PLATFORM, account_id=LOCAL_PERSON_ID)
"""The operator at the terminal: trusted (admin), and the one person every terminal conversation is for."""
PRINCIPAL = Principal.of(OPERATOR, chat_id=LOCAL_PERSON_ID, chat_type=ChatKind.DM.value)
QUIT = ("/quit", "/exit")
QUIT_HELP = "/quit, /exit — leave the terminal chat"


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
        key = session_key_for(_message(""), runtime.settings.sessions)
        # /link is left out (no link service): the terminal's person is fixed, not an account to join.
        table = BuiltinCommands(command_services(runtime, build_gateway(runtime).queue)).table
        conversation_id = await _open_conversation(runtime, key, resume=context.args.resume)
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
            if text in QUIT:
                break
            reply = await _command(table, key, text)
            if reply is None:
                reply = await _turn(runtime, conversation_id, text)
            else:
                conversation_id = await _open_conversation(runtime, key, resume=True)
            _say(stdout, reply)
    return 0


async def _command(table: CommandTable, key: SessionKey, text: str) -> str | None:
    """The command's reply when ``text`` is one of the table's commands, else None."""
    parsed = table.parse(text)
    if parsed is None:
        return None
    command, name, argument = parsed
    reply = await command.handler(CommandCall(name, argument, _message(text), OPERATOR, key))
    return f"{reply}\n{QUIT_HELP}" if command.name == "help" else reply


def _message(text: str) -> InboundMessage:
    return InboundMessage(event_id=f"cli-{uuid.uuid4().hex}", chat=TERMINAL, sender=ACCOUNT, text=text)


async def _open_conversation(runtime: Runtime, key: SessionKey, *, resume: bool) -> str:
    if resume:
        record = await runtime.storage.agent.ensure_conversation(key.to_string(), PRINCIPAL)
    else:
        record = await runtime.storage.agent.start_new_conversation(key.to_string(), PRINCIPAL)
    return record.id


async def _turn(runtime: Runtime, conversation_id: str, text: str) -> str:
    tip = await runtime.storage.agent.resolve_tip(conversation_id)
    await runtime.storage.agent.append_message(
        tip.id, NewMessage(role="user", content=text, author=LOCAL_PERSON_ID)
    )
    reply = ""
    async for event in runtime.agent.run(OPERATOR.in_conversation(conversation_id)):
        if isinstance(event, TurnFinished | TurnFailed):
            reply = event.text
    return reply


def _say(stdout: TextIO, text: str) -> None:
    stdout.write(text.rstrip() + "\n")
    stdout.flush()
