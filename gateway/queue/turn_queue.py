"""The durable turn queue's gateway face: inbound message -> ledger row + user message + job, in one commit.

Invariant: ``enqueue`` returns only after its single write transaction committed, so an adapter that
acknowledges the platform after it returns never loses a message; a platform retry of the same event is
refused by the ledger's unique key (``EnqueueResult.duplicate``) and produces no second turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_core.storage.sqlite import NewMessage, Principal, StateStore
from agent_core.storage.sqlite.messages import prepare
from gateway.contracts import InboundMessage
from gateway.identity import Person
from gateway.sessions import SessionKey
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.sqlite.jobs import (
    Enqueued,
    QueueState,
    TurnRequest,
    enqueue_turn,
    queue_state,
    stop_conversation,
)
from gateway.storage.sqlite.ledger import record_event, seen

from .busy_policy import BusyPolicy
from .signals import Signals

IdlePolicy = Callable[[str], float | None]
"""Platform -> seconds of silence after which the next message starts a new conversation (None: never)."""


@dataclass(frozen=True)
class EnqueueResult:
    """``duplicate``: the event was seen before and nothing was written."""

    duplicate: bool
    conversation_id: str | None = None
    job_id: int | None = None
    coalesced: bool = False
    queued_behind_running: bool = False
    ended_idle_conversation: str | None = None


def principal_for(message: InboundMessage, person: Person) -> Principal:
    return Principal(
        person_id=person.person_id,
        platform=message.platform,
        user_id=message.sender.user_id,
        chat_id=message.chat.chat_id,
        chat_type=message.chat.kind.value,
        thread_id=message.chat.thread_id,
        display_name=message.sender.display_name or person.display_name,
    )


ConversationEnded = Callable[[str, str, str], None]
"""Told (person id, conversation id, platform) when a conversation ends, e.g. to notify memory providers."""


class TurnQueue:
    """Writes turns into state.db; any worker process may run them."""

    def __init__(
        self,
        state: StateStore,
        signals: Signals,
        busy_policy: BusyPolicy,
        idle_policy: IdlePolicy | None = None,
        on_conversation_end: ConversationEnded | None = None,
    ) -> None:
        self._state = state
        self._signals = signals
        self._busy = busy_policy
        self._idle = idle_policy or (lambda platform: None)
        self._on_end = on_conversation_end

    async def enqueue(self, message: InboundMessage, key: SessionKey, person: Person) -> EnqueueResult:
        """ONE transaction: ledger row, conversation (created if needed), user message, job (coalesced)."""
        now = time.time()
        row = NewMessage(
            role="user",
            content=message.full_text(),
            author=person.person_id,
            platform_message_id=message.message_id,
            created_at=message.sent_at if message.sent_at is not None else now,
        )
        request = TurnRequest(
            platform=message.platform,
            event_id=message.event_id,
            session_key=key.to_string(),
            principal=principal_for(message, person),
            person_id=person.person_id,
            is_admin=person.is_admin,
            chat_ref=chat_to_text(message.chat),
            reply_to=message.message_id,
            message=prepare(row, now),
            interrupt_running=self._busy.interrupts,
            idle_after_s=self._idle(message.platform),
            ack_text=self._busy.ack_text,
        )
        outcome: Enqueued = await self._state.run_write(lambda c: enqueue_turn(c, request, now))
        if outcome.ended_idle and self._on_end is not None:
            self._on_end(person.person_id, outcome.ended_idle, message.platform)
        if not outcome.duplicate:
            self._signals.jobs.set()
            if outcome.behind_running:
                self._signals.outbox.set()
        return EnqueueResult(
            duplicate=outcome.duplicate,
            conversation_id=outcome.conversation_id,
            job_id=outcome.job_id,
            coalesced=outcome.coalesced,
            queued_behind_running=outcome.behind_running,
            ended_idle_conversation=outcome.ended_idle,
        )

    async def seen(self, message: InboundMessage) -> bool:
        """Fast pre-check of the inbound ledger (a read); the unique insert stays the real guard."""
        return await self._state.run_read(lambda c: seen(c, message.platform, message.event_id))

    async def record_event(self, message: InboundMessage, kind: str = "command") -> bool:
        """Ledger row only (commands, refusals); False when the event was already recorded."""
        now = time.time()
        return await self._state.run_write(
            lambda c: record_event(c, message.platform, message.event_id, kind=kind, now=now)
        )

    async def stop(self, key: SessionKey) -> bool:
        """Cancel the conversation's queued jobs and stop its running turn; False if nothing was running."""
        live = await self._state.live_conversation(key.to_string())
        if live is None:
            return False
        return await self.stop_conversation(live.id)

    async def stop_conversation(self, conversation_id: str) -> bool:
        now = time.time()
        state: QueueState = await self._state.run_write(lambda c: stop_conversation(c, conversation_id, now))
        return bool(state.running or state.queued)

    async def queue_state(self, conversation_id: str) -> QueueState:
        return await self._state.run_read(lambda c: queue_state(c, conversation_id))
