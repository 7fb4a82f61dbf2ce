"""The audit sink the memory store reports every successful write to (implemented by the state store)."""

from __future__ import annotations

from typing import Protocol


class MemoryAuditSink(Protocol):
    """Receives one record per applied entry change; called only after the write is durable."""

    async def record_memory_audit(
        self,
        *,
        person_id: str | None,
        conversation_id: str | None,
        actor: str,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        """Persist one audit record (``store`` is the target name: memory, user or global)."""
        ...
