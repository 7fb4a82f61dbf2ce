"""The outbox's gateway face: queue a notice or command reply for a chat, exactly once per key.

Invariant: a delivery that was added wakes this process's delivery loop (``signals.outbox``); one whose key
was queued before adds nothing and wakes nothing.
"""

from __future__ import annotations

from gateway.contracts import ChatRef
from gateway.queue.signals import Signals
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import OutboxEntry, OutboxRepository, OutboxStatus


class Outbox:
    def __init__(self, repository: OutboxRepository, signals: Signals) -> None:
        self.repository = repository
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
        request_text: str | None = None,
    ) -> bool:
        """Queue ``text`` for ``chat``; False when this key was queued before (nothing is added).

        ``request_text``: for a command's reply, the command as written (chat windows show both)."""
        added = await self.repository.add(
            OutboxEntry(
                conversation_id=conversation_id or "",
                platform=chat.platform,
                chat_ref=chat_to_text(chat),
                text=text,
                idempotency_key=idempotency_key,
                kind=kind,
                reply_to=reply_to,
                request_text=request_text,
            )
        )
        if added:
            self._signals.outbox.set()
        return added

    async def for_conversation(self, conversation_id: str) -> list[OutboxStatus]:
        return await self.repository.for_conversation(conversation_id)
