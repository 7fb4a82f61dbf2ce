"""The async memory facade for the gateway and the agent: document work in threads, audit, per-turn breaker.

Invariants: no document I/O runs on the event loop (every call goes through ``asyncio.to_thread``, whether
the documents are files or a database's rows reached over a blocking pool); a write
acts as an ``Actor`` — its person owns the store written (an admin may also write the global one), and it
is what the audit records as the writer; the audit sink hears about each applied change only after the
write is durable; the breaker, when given, sees every write result so a fourth consolidation failure in
one turn comes back terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agent_core.actor import Actor
from agent_core.memory.audit import MemoryAuditSink
from agent_core.memory.layout import StoreLocation, Target
from agent_core.memory.operations import BatchOperation, FailureBreaker
from agent_core.memory.results import MemoryResult
from agent_core.memory.settings import MemorySettings
from agent_core.memory.snapshot import MemorySnapshot, StoreView
from agent_core.memory.sync_store import RepairReport, SyncMemoryStore, WriteOutcome
from agent_core.storage.documents import MemoryDocuments


class MemoryStores:
    """Async access to every curated store of one deployment."""

    def __init__(
        self,
        home: Path,
        settings: MemorySettings,
        audit: MemoryAuditSink | None = None,
        *,
        documents: MemoryDocuments | None = None,
    ) -> None:
        """``documents``: the storage backend's (``Storage.documents``); default: the files under ``home``."""
        self._sync = SyncMemoryStore(home, settings, documents)
        self._audit = audit

    @property
    def sync(self) -> SyncMemoryStore:
        """The blocking core, for code already running in a worker thread."""
        return self._sync

    async def add(
        self, actor: Actor, *, target: Target | str, content: str, breaker: FailureBreaker | None = None
    ) -> MemoryResult:
        """Add one entry to ``actor``'s store (or the global one, for an admin)."""
        outcome = await asyncio.to_thread(
            self._sync.add,
            person_id=actor.person_id,
            target=target,
            content=content,
            is_admin=actor.is_admin,
        )
        return await self._finish(outcome, actor, breaker)

    async def replace(
        self,
        actor: Actor,
        *,
        target: Target | str,
        old_text: str,
        content: str,
        breaker: FailureBreaker | None = None,
    ) -> MemoryResult:
        """Replace the one entry containing ``old_text``."""
        outcome = await asyncio.to_thread(
            self._sync.replace,
            person_id=actor.person_id,
            target=target,
            old_text=old_text,
            content=content,
            is_admin=actor.is_admin,
        )
        return await self._finish(outcome, actor, breaker)

    async def remove(
        self, actor: Actor, *, target: Target | str, old_text: str, breaker: FailureBreaker | None = None
    ) -> MemoryResult:
        """Remove the one entry containing ``old_text``."""
        outcome = await asyncio.to_thread(
            self._sync.remove,
            person_id=actor.person_id,
            target=target,
            old_text=old_text,
            is_admin=actor.is_admin,
        )
        return await self._finish(outcome, actor, breaker)

    async def batch(
        self,
        actor: Actor,
        *,
        target: Target | str,
        operations: Sequence[BatchOperation],
        breaker: FailureBreaker | None = None,
    ) -> MemoryResult:
        """Apply ``operations`` atomically."""
        outcome = await asyncio.to_thread(
            self._sync.batch,
            person_id=actor.person_id,
            target=target,
            operations=operations,
            is_admin=actor.is_admin,
        )
        return await self._finish(outcome, actor, breaker)

    async def set_entries(
        self, actor: Actor, location: StoreLocation, entries: Sequence[str]
    ) -> MemoryResult:
        """Make one store hold exactly ``entries`` (``memory import``), audited as ``actor``."""
        outcome = await asyncio.to_thread(self._sync.set_entries, location, entries, is_admin=actor.is_admin)
        return await self._finish(outcome, actor, None)

    async def entries(self, *, person_id: str | None, target: Target | str) -> StoreView:
        """Live entries and usage of one store (what tool results and the CLI show)."""
        return await asyncio.to_thread(self._sync.view, person_id=person_id, target=target)

    async def show(self, *, person_id: str | None) -> tuple[StoreView, ...]:
        """Live entries and usage of every store visible to ``person_id`` (global, memory, user)."""
        return await asyncio.to_thread(self._sync.views, person_id=person_id)

    async def snapshot(self, *, person_id: str | None, is_admin: bool = False) -> MemorySnapshot:
        """Render the frozen prompt block for a new segment."""
        return await asyncio.to_thread(self._sync.snapshot, person_id=person_id, is_admin=is_admin)

    async def repair(self, *, person_id: str | None, target: Target | str) -> RepairReport:
        """Operator action: back up and canonicalise a hand-edited or undecodable file."""
        return await asyncio.to_thread(self._sync.repair, person_id=person_id, target=target)

    async def _finish(
        self, outcome: WriteOutcome, actor: Actor, breaker: FailureBreaker | None
    ) -> MemoryResult:
        if self._audit is not None:
            for change in outcome.changes:
                await self._audit.record_memory_audit(
                    actor=actor,
                    store=outcome.target,
                    action=change.action,
                    old_text=change.old_text,
                    new_text=change.new_text,
                )
        return breaker.record(outcome.result) if breaker is not None else outcome.result
