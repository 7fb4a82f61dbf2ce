"""The PostgreSQL backend assembled: one pool, both ladders migrated, and one object holding every repository.

Invariants: every repository of one ``PostgresStorage`` shares its ``PgDatabase`` (one pool), so a unit of
work one port method promises as one transaction is one ``run_write``; the local provider's facts live in
the same database (no file of their own); ``open_postgres_storage`` migrates under the advisory lock before
anything is handed out, so several hosts may start on one database at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from agent_core.storage.agent_storage import AgentStorage
from agent_core.storage.documents import MemoryDocuments, SkillTexts
from agent_core.storage.facts import FactStore
from agent_core.storage.health import StoreHealth
from agent_core.storage.postgres.engine import PgDatabase
from agent_core.storage.postgres.fact_store import PgFactStore
from agent_core.storage.postgres.health import PgHealth
from agent_core.storage.postgres.memory_documents import (
    PgDocumentPool,
    PgMemoryDocuments,
    PgSkillTexts,
    open_document_pool,
)
from agent_core.storage.postgres.schema import AGENT_LADDER, migrate
from agent_core.storage.postgres.search_index import PgSearchIndex
from agent_core.storage.postgres.settings import PostgresSettings
from agent_core.storage.postgres.store import PgAgentStore
from agent_core.storage.postgres.window_worker import PgWindowWorker
from agent_core.storage.records import StoreStats
from agent_core.storage.search_index import SearchIndex
from agent_core.storage.search_windows import Embedder
from gateway.storage.admin_reads import AdminReads
from gateway.storage.budgets import BudgetLedger
from gateway.storage.chat_conversations import ChatConversations
from gateway.storage.checkpoints import CheckpointRepository
from gateway.storage.console_reads import ConsoleReads
from gateway.storage.identity import IdentityRepository
from gateway.storage.imports import TranscriptImport
from gateway.storage.outbox import OutboxRepository
from gateway.storage.pairing import PairingRepository
from gateway.storage.person_data import PersonData
from gateway.storage.queue import InboundLedger, TurnQueueRepository
from gateway.storage.schedules import ScheduleRepository
from gateway.storage.usage_reads import UsageReads

from .adapter_leases import PgAdapterLeases
from .admin_reads import PgAdminReads
from .budgets import PgBudgetLedger
from .chat_conversations import PgChatConversations
from .checkpoints import PgCheckpoints
from .client_keys import PgClientKey
from .console_reads import PgConsoleReads
from .erasure import PgErasure
from .importer import PgTranscriptImport
from .outbox import PgOutbox
from .pairing import PgPairing
from .person_data import PgPersonData
from .persons import PgIdentity
from .queue import PgTurnQueue
from .retention import PgRetention
from .schedules import PgSchedules
from .schema import GATEWAY_LADDER
from .usage_reads import PgUsageReads
from .wakeups import PgWakeups

LADDERS = (AGENT_LADDER, GATEWAY_LADDER)


@contextlib.asynccontextmanager
async def open_postgres_storage(
    settings: PostgresSettings, *, embedder: Embedder | None = None
) -> AsyncIterator[PostgresStorage]:
    """The database ``settings`` names, migrated to this program's schema, with every repository on it.

    ``embedder``: the model that gives search windows their vectors in the background (None: none)."""
    async with PgDatabase(settings) as db, open_document_pool(db) as documents:
        await migrate(db, LADDERS)
        windows = PgWindowWorker(db, embedder)
        windows.start()
        try:
            yield PostgresStorage(db, documents, embedder=embedder)
        finally:
            await windows.stop()


class PostgresStorage:
    """Every repository of the storage port over one ``PgDatabase``."""

    def __init__(
        self, db: PgDatabase, documents: PgDocumentPool, *, embedder: Embedder | None = None
    ) -> None:
        """``documents``: the blocking pool memory documents and skills use (``open_document_pool``);
        ``embedder``: the model of semantic searches (None: lexical only)."""
        self.db = db
        self.documents: MemoryDocuments = PgMemoryDocuments(documents)
        self.skills: SkillTexts = PgSkillTexts(documents)
        search = PgSearchIndex(db, embedder)
        self.agent: AgentStorage = PgAgentStore(db)
        self.search: SearchIndex = search
        self.health: StoreHealth = PgHealth(db, search.health)
        self.facts: FactStore = PgFactStore(db)
        queue = PgTurnQueue(db)
        self.queue: TurnQueueRepository = queue
        self.ledger: InboundLedger = queue
        self.outbox: OutboxRepository = PgOutbox(db)
        self.identity: IdentityRepository = PgIdentity(db)
        self.pairing: PairingRepository = PgPairing(db)
        self.checkpoints: CheckpointRepository = PgCheckpoints(db)
        self.adapter_leases = PgAdapterLeases(db)
        self.client_key = PgClientKey(db)
        self.erasure = PgErasure(db)
        self.wakeups = PgWakeups(db)
        self.admin: AdminReads = PgAdminReads(db)
        self.chats: ChatConversations = PgChatConversations(db)
        self.console: ConsoleReads = PgConsoleReads(db)
        self.usage: UsageReads = PgUsageReads(db)
        self.person_data: PersonData = PgPersonData(db)
        self.imports: TranscriptImport = PgTranscriptImport(db)
        self.schedules: ScheduleRepository = PgSchedules(db)
        self.budgets: BudgetLedger = PgBudgetLedger(db)
        self.retention = PgRetention(db)

    def stats(self) -> StoreStats:
        """This process's counters; ``round_trips`` counts transactions (each several network hops)."""
        counters = self.db.counters
        return StoreStats(
            write_retries=counters.retries,
            write_commits=counters.commits,
            journal_mode="postgres",
            indexer_active=False,
            rows_indexed=0,
            index_rebuilds=0,
            backpressure_pauses=0,
            round_trips=counters.transactions,
        )
