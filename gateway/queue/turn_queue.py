"""The durable turn queue's gateway face: inbound message -> ledger row + user message + job, in one commit.

Invariant: ``enqueue`` returns only after its single write transaction committed, so an adapter that
acknowledges the platform after it returns never loses a message; a platform retry of the same event is
refused by the ledger's unique key (``EnqueueResult.duplicate``) and produces no second turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.contracts import InboundMessage
from gateway.sessions import SessionKey
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.queue import QueueState, TurnQueueRepository, TurnRequest

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


def principal_for(message: InboundMessage, actor: Actor) -> Principal:
    """What a conversation started by ``message`` records about who holds it and where (chat, thread)."""
    chat = message.chat
    return Principal.of(actor, chat_id=chat.chat_id, chat_type=chat.kind.value, thread_id=chat.thread_id)


ConversationEnded = Callable[[str, str, str], None]
"""Told (person id, conversation id, platform) when a conversation ends, e.g. to notify memory providers."""


class TurnQueue:
    """Writes turns through the queue repository; any worker process may run them."""

    def __init__(
        self,
        queue: TurnQueueRepository,
        signals: Signals,
        busy_policy: BusyPolicy,
        idle_policy: IdlePolicy | None = None,
        on_conversation_end: ConversationEnded | None = None,
    ) -> None:
        self._queue = queue
        self._signals = signals
        self._busy = busy_policy
        self._idle = idle_policy or (lambda platform: None)
        self._on_end = on_conversation_end

    async def enqueue(self, message: InboundMessage, key: SessionKey, actor: Actor) -> EnqueueResult:
        """ONE transaction: ledger row, conversation (created if needed), user message, job (coalesced)."""
        row = NewMessage(
            role="user",
            content=message.full_text(),
            author=actor.person_id,
            platform_message_id=message.message_id,
            api_content=message.model_text,
            created_at=message.sent_at,  # None: stamped by the backend's clock
        )
        request = TurnRequest(
            actor=actor,
            event_id=message.event_id,
            session_key=key.to_string(),
            principal=principal_for(message, actor),
            chat_ref=chat_to_text(message.chat),
            reply_to=message.message_id,
            message=row,
            idle_after_s=self._idle(message.platform),
        )
        outcome = await self._queue.enqueue(request, self._busy)
        if outcome.ended_idle and self._on_end is not None:
            self._on_end(actor.person_id, outcome.ended_idle, message.platform)
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
        return await self._queue.seen(message.platform, message.event_id)

    async def record_event(self, message: InboundMessage, kind: str = "command") -> bool:
        """Ledger row only (commands, refusals); False when the event was already recorded."""
        return await self._queue.record_event(message.platform, message.event_id, kind=kind)

    async def stop(self, key: SessionKey) -> bool:
        """Cancel the conversation's queued jobs and stop its running turn; False if nothing was running."""
        state = await self._queue.stop_live(key.to_string())
        return state is not None and bool(state.running or state.queued)

    async def stop_conversation(self, conversation_id: str) -> bool:
        state = await self._queue.stop(conversation_id)
        return bool(state.running or state.queued)

    async def queue_state(self, conversation_id: str) -> QueueState:
        return await self._queue.queue_state(conversation_id)
