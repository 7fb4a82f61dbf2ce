"""The outbox's gateway face: queue a notice or command reply for a chat, exactly once per key."""

from __future__ import annotations

import time

from agent_core.storage.sqlite import StateStore
from gateway.contracts import ChatRef
from gateway.queue.signals import Signals
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.sqlite.outbox import OutboxStatus, add_outbox, conversation_outbox


class Outbox:
    def __init__(self, state: StateStore, signals: Signals) -> None:
        self._state = state
        self._signals = signals

    async def notify(
        self,
        chat: ChatRef,
        text: str,
        *,
        idempotency_key: str,
        conversation_id: str | None = None,
        kind: str = "notice",
        reply_to: str | None = None,
    ) -> bool:
        """Queue ``text`` for ``chat``; False when this key was queued before (nothing is added)."""
        now = time.time()
        added = await self._state.run_write(
            lambda c: add_outbox(
                c,
                conversation_id=conversation_id or "",
                platform=chat.platform,
                chat_ref=chat_to_text(chat),
                text=text,
                idempotency_key=idempotency_key,
                kind=kind,
                now=now,
                reply_to=reply_to,
            )
        )
        if added:
            self._signals.outbox.set()
        return added

    async def for_conversation(self, conversation_id: str) -> list[OutboxStatus]:
        return await self._state.run_read(lambda c: conversation_outbox(c, conversation_id))
