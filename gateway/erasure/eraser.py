"""``PersonEraser``: the one erasure of a person, shared by ``mnemogate erase``, the admin API and console.

Order, and why: the footprint is read first (the person's conversations, accounts and direct chats) and an
unknown person is refused before anything changes; then the configured external memory provider is cleared,
while the person's conversation ids are still known (Honcho keys sessions by them) — if it cannot be,
``ProviderNotClearedError`` is raised and NOTHING else has changed, so the erase can simply run again (or be
run with ``skip_provider``, when the provider is gone for good); then the gateway's rows of those
conversations, the conversations themselves with their search entries (``forget_conversations``), their
turns left in conversations of others (``forget_authored_turns``), the memory documents, the local
provider's facts (through the storage, whichever provider is configured now), the memory audit's texts,
and last the person's own rows and accounts — so a failure part-way leaves a
person who still exists and can be erased again (every step is idempotent). One audit record (who, whom,
when, counts; never content) is written at the end. Backups are not rewritten (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import logging
import time

from agent_core.actor import Actor
from agent_core.providers import MemoryProvider
from gateway.storage import PersonFootprint, Storage

from .report import ErasureReport, ProviderNotClearedError, UnknownPersonError

_LOG = logging.getLogger("gateway.erasure")
AUDIT_STORE = "person"
AUDIT_ACTION = "erase"


class PersonEraser:
    """Erases one person from ``storage`` and from ``provider`` (the configured memory provider, if any,
    initialised by the caller)."""

    def __init__(self, storage: Storage, provider: MemoryProvider | None = None) -> None:
        self._storage = storage
        self._provider = provider

    async def footprint(self, person_id: str) -> PersonFootprint:
        """What is stored about the person (to confirm before erasing); ``UnknownPersonError`` if nothing."""
        found = await self._storage.erasure.footprint(person_id)
        if not found.exists:
            raise UnknownPersonError(person_id)
        return found

    async def erase(self, person_id: str, *, erased_by: str, skip_provider: bool = False) -> ErasureReport:
        """Erase the person; ``erased_by`` is the audit label of who asked (``admin:cli``, …).

        Raises ``UnknownPersonError`` when nothing is stored about ``person_id``, and
        ``ProviderNotClearedError`` (nothing erased) when the memory provider fails, unless ``skip_provider``.
        """
        storage = self._storage
        found = await self.footprint(person_id)
        await storage.facts.create()
        facts = await storage.facts.count(person_id)
        if not skip_provider:
            await self._clear_provider(person_id, found.conversation_ids)
        gateway_rows = await storage.erasure.forget_conversation_rows(found.conversation_ids)
        agent_rows = await storage.agent.forget_conversations(found.conversation_ids)
        shared = await storage.agent.forget_authored_turns(person_id)
        documents = await asyncio.to_thread(storage.documents.forget_person, person_id)
        await storage.facts.forget_person(person_id)
        blanked = await storage.agent.forget_memory_audit_texts(person_id)
        person_rows = await storage.erasure.erase_person_rows(found)
        provider = self._provider.name if self._provider is not None else None
        report = ErasureReport(
            person_id=person_id,
            erased_by=erased_by,
            at=time.time(),
            conversations=agent_rows.conversations,
            segments=agent_rows.segments,
            messages=agent_rows.messages,
            shared_messages=shared,
            usage_rows_unlinked=agent_rows.usage_rows_unlinked,
            outbox_rows=gateway_rows.outbox,
            held_messages=gateway_rows.held_messages,
            turn_jobs=gateway_rows.jobs,
            schedules=gateway_rows.schedules + person_rows.schedules,
            memory_documents=documents,
            facts=facts,
            audit_texts_blanked=blanked,
            accounts=person_rows.accounts,
            link_codes=person_rows.link_codes,
            pairing_requests=person_rows.pairing_requests,
            checkpoints=person_rows.checkpoints,
            provider=provider,
            provider_skipped=skip_provider and provider is not None,
        )
        await storage.agent.record_memory_audit(
            actor=Actor(person_id=person_id, label=erased_by),
            store=AUDIT_STORE,
            action=AUDIT_ACTION,
            old_text=None,
            new_text=report.summary(),
        )
        _LOG.info("erased person %s (%s): %s", person_id, erased_by, report.summary())
        return report

    async def _clear_provider(self, person_id: str, conversation_ids: tuple[str, ...]) -> None:
        provider = self._provider
        if provider is None:
            return
        try:
            await provider.forget_person(person_id, conversation_ids)
        except Exception as exc:  # a provider failure of any kind stops the erasure before anything changed
            _LOG.warning(
                "memory provider %s could not erase person %s", provider.name, person_id, exc_info=True
            )
            raise ProviderNotClearedError(provider.name, f"{type(exc).__name__}: {exc}") from exc
