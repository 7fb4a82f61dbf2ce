"""The audit sink the memory store reports every successful write to (implemented by the state store).

Invariant: the writer is always an ``Actor`` — the model's tool call, a memory flush, an operator at the CLI
or the admin API — so who wrote, for whom and in which conversation travel as one value to the audit row.
"""

from __future__ import annotations

from typing import Protocol

from agent_core.actor import Actor


class MemoryAuditSink(Protocol):
    """Receives one record per applied entry change; called only after the write is durable."""

    async def record_memory_audit(
        self,
        *,
        actor: Actor,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        """Persist one audit record: ``actor``'s person, conversation and label say who wrote, ``store`` is
        the target name (memory, user or global)."""
        ...
