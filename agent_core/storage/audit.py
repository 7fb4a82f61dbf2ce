"""The memory audit port: one durable record per curated-memory change, and reading a person's records back.

Invariants: a record is written only after the memory change it describes is durable (the memory store
calls ``record_memory_audit`` then, with the writing ``Actor``); records are never edited; a record's
``actor`` is that Actor's label, saying who wrote (``agent``, ``memory-flush``, ``cli``, ``admin`` …),
``store`` which file (memory, user or global); a record's ``person_id`` stays optional (older rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_core.actor import Actor


@dataclass(frozen=True, slots=True)
class MemoryAuditRecord:
    """One recorded curated-memory write; ``at`` is epoch seconds."""

    id: int
    at: float
    person_id: str | None
    conversation_id: str | None
    actor: str
    store: str
    action: str
    old_text: str | None
    new_text: str | None


class MemoryAuditLog(Protocol):
    """Where curated-memory writes are recorded (also ``agent_core.memory.MemoryAuditSink``)."""

    async def record_memory_audit(
        self,
        *,
        actor: Actor,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        """Persist one audit record: the record's ``person_id``, ``conversation_id`` and ``actor`` are the
        actor's person, conversation and label; ``store`` is the target name (memory, user or global)."""
        ...

    async def memory_audit(self, person_id: str, *, limit: int = 100) -> list[MemoryAuditRecord]:
        """The person's records, newest first, at most ``limit`` (clamped to 1..500)."""
        ...
