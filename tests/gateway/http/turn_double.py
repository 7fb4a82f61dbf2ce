"""A test-only stand-in for the gateway's inbound pipeline + queue + delivery (built by another helper).

It does what those do, minimally and for real: dedupes events, stores the user message in the chat's
conversation, runs a real turn through ``runtime.agent`` in the background (one at a time per chat), and
delivers the reply, rendered by the adapter, through its ``send``, as the delivery loop would.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agent_core.actor import Actor
from agent_core.agent import TurnFailed, TurnFinished
from agent_core.storage import NewMessage, Principal
from gateway.contracts import Adapter, InboundMessage, OutboundMessage
from gateway.runtime import Runtime
from gateway.sessions import KeyScope, SessionKey


@dataclass
class InlineTurns:
    runtime: Runtime
    adapters: dict[str, Adapter]
    seen: set[tuple[str, str]] = field(default_factory=set)
    turns: int = 0
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def handle(self, message: InboundMessage) -> None:
        if (message.platform, message.event_id) in self.seen:
            return
        self.seen.add((message.platform, message.event_id))
        key = SessionKey(platform=message.platform, scope=KeyScope.DM, chat_id=message.chat.chat_id)
        person = f"{message.platform}-{message.sender.user_id}"[:60]
        principal = Principal(
            person_id=person,
            platform=message.platform,
            user_id=message.sender.user_id,
            chat_id=message.chat.chat_id,
            chat_type="dm",
        )
        conversation = await self.runtime.storage.agent.ensure_conversation(key.to_string(), principal)
        tip = await self.runtime.storage.agent.resolve_tip(conversation.id)
        await self.runtime.storage.agent.append_message(
            tip.id, NewMessage(role="user", content=message.text, author=person)
        )
        task = asyncio.create_task(self._turn(message, conversation.id, person))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _turn(self, message: InboundMessage, conversation_id: str, person: str) -> None:
        async with self._locks.setdefault(conversation_id, asyncio.Lock()):
            reply = ""
            scope = Actor(person, conversation_id=conversation_id, platform=message.platform)
            async for event in self.runtime.agent.run(scope):
                if isinstance(event, TurnFinished | TurnFailed):
                    reply = event.text
            self.turns += 1
            if reply:
                adapter = self.adapters[message.platform]
                await adapter.send(
                    OutboundMessage(
                        message.chat,
                        "".join(adapter.render(reply)),  # rendered for the platform, as delivery does
                        idempotency_key=f"{message.event_id}:0",
                        reply_to_message_id=message.message_id,  # as the delivery loop does
                    )
                )

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
