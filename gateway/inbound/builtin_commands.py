"""The built-in chat commands: /help, /new (/reset), /stop, /status, /memory, /compress, /link, /whoami.

Invariants: commands never enter the turn queue (they answer at once, even mid-turn); every command acts
only for its sender — /memory shows the sender's own memory, /status and /stop their own conversation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from agent_core.actor import Actor
from agent_core.memory import MemoryStores
from agent_core.storage import AgentStorage, EndReason, TokenUsage
from gateway.queue import TurnQueue, principal_for
from gateway.usage.personal import PersonalUsage

from .command_table import Command, CommandCall, CommandTable

Compressor = Callable[[Actor], Awaitable[str]]
"""Compress the actor's conversation now; returns the text to show the user."""

LinkHandler = Callable[[CommandCall], Awaitable[str]]
"""The whole /link command (issue a code, or redeem ``argument``); returns the reply."""

NO_COMPRESSION = "Compression is not available in this version yet."


@dataclass(frozen=True)
class CommandServices:
    state: AgentStorage
    queue: TurnQueue
    memory: MemoryStores
    model_name: str
    link: LinkHandler | None = None
    compress: Compressor | None = None
    memory_health: Callable[[], str] | None = None
    conversation_ended: Callable[[str, str, str], None] | None = None
    more: Sequence[Command] = ()
    """Commands of other components (e.g. /reminders, /timezone), listed after the built-in ones."""
    usage: PersonalUsage | None = None
    """The sender's own usage today and this month, for /status (None: not shown)."""


class BuiltinCommands:
    def __init__(self, services: CommandServices) -> None:
        self._s = services
        self.table = CommandTable(
            [
                Command("help", "list the commands", self.help),
                Command("new", "end this conversation and start a fresh one", self.new, aliases=("reset",)),
                Command("stop", "stop the reply being written and drop queued messages", self.stop),
                Command("status", "this conversation, its token use and the queue", self.status),
                Command("memory", "what I remember about you", self.memory),
                Command(
                    "compress", "summarise this conversation now to free context", self.compress, slow=True
                ),
                Command("link", "join your accounts on several platforms", self.link, usage="[CODE]"),
                Command("whoami", "your person id and account", self.whoami),
                *services.more,
            ]
        )

    async def help(self, call: CommandCall) -> str:
        return self.table.help_text()

    async def new(self, call: CommandCall) -> str:
        await self._s.queue.stop(call.key)
        reason = EndReason.RESET if call.name == "reset" else EndReason.NEW
        principal = principal_for(call.message, call.actor)
        previous = await self._s.state.live_conversation(call.key.to_string())
        await self._s.state.start_new_conversation(call.key.to_string(), principal, reason=reason.value)
        if previous is not None and self._s.conversation_ended is not None:
            self._s.conversation_ended(call.actor.person_id, previous.id, call.message.platform)
        return "Started a new conversation. Your memory is kept; the chat history starts fresh."

    async def stop(self, call: CommandCall) -> str:
        stopped = await self._s.queue.stop(call.key)
        return "Stopped." if stopped else "Nothing is running."

    async def status(self, call: CommandCall) -> str:
        own = await self._s.usage.lines(call.actor.person_id) if self._s.usage is not None else []
        live = await self._s.state.live_conversation(call.key.to_string())
        if live is None:
            return "\n".join(
                ["No conversation yet — send a message to start one.", f"Model: {self._s.model_name}", *own]
            )
        segments = await self._s.state.lineage(live.id)
        usage = _total(segment.usage for segment in segments)
        queue = await self._s.queue.queue_state(live.id)
        if queue.running:
            waiting = f"; {queue.queued} waiting" if queue.queued else ""
            queue_text = f"a reply is being written{waiting}"
        else:
            queue_text = f"{queue.queued} waiting" if queue.queued else "idle"
        return "\n".join(
            [
                f"Conversation: {live.id}",
                f"Segments: {len(segments)}",
                f"Tokens: {usage.input_tokens:,} in, {usage.output_tokens:,} out, "
                f"{usage.cache_read_tokens:,} cache read, {usage.cache_write_tokens:,} cache write",
                f"Queue: {queue_text}",
                f"Model: {self._s.model_name}",
                f"Memory: {self._s.memory_health() if self._s.memory_health else 'built-in'}",
                *own,
            ]
        )

    async def memory(self, call: CommandCall) -> str:
        lines = []
        for view in await self._s.memory.show(person_id=call.actor.person_id):
            usage = view.usage
            lines.append(f"{usage.target.value}: {usage.used:,}/{usage.limit:,} chars")
            lines += [f"  - {entry}" for entry in view.entries] or ["  (empty)"]
        return "\n".join(lines) or "I don't remember anything about you yet."

    async def compress(self, call: CommandCall) -> str:
        if self._s.compress is None:
            return NO_COMPRESSION
        live = await self._s.state.live_conversation(call.key.to_string())
        if live is None:
            return "There is no conversation to compress yet."
        return await self._s.compress(call.actor.in_conversation(live.id))

    async def link(self, call: CommandCall) -> str:
        if self._s.link is None:
            return "Linking accounts is not available here."
        return await self._s.link(call)

    async def whoami(self, call: CommandCall) -> str:
        sender = call.message.sender
        role = "admin" if call.actor.is_admin else "not an admin"
        return f"Person: {call.actor.person_id}\nAccount: {sender.platform}:{sender.user_id}\nRole: {role}"


def _total(usages: Iterable[TokenUsage]) -> TokenUsage:
    return sum(usages, TokenUsage())
