"""Mirroring built-in memory writes to the provider through the memory store's audit seam.

Invariant: the wrapped audit sink (state.db's ``memory_audit``) is written first and exactly as before;
the provider hears about a change only after it is durable and audited, in the background, so a slow
or failing provider never delays or fails a ``memory`` tool call.
"""

from __future__ import annotations

from agent_core.actor import Actor
from agent_core.memory import MemoryAuditSink

from .base import ProviderContext
from .manager import MemoryManager


class MirroringAuditSink:
    """A ``MemoryAuditSink`` that forwards to ``inner`` and mirrors add/replace/remove to the provider."""

    def __init__(self, inner: MemoryAuditSink | None, manager: MemoryManager) -> None:
        self._inner = inner
        self._manager = manager

    async def record_memory_audit(
        self,
        *,
        actor: Actor,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        if self._inner is not None:
            await self._inner.record_memory_audit(
                actor=actor, store=store, action=action, old_text=old_text, new_text=new_text
            )
        ctx = ProviderContext(person_id=actor.person_id, conversation_id=actor.conversation_id or "")
        self._manager.memory_written(ctx, action=action, target=store, content=new_text, old_text=old_text)
