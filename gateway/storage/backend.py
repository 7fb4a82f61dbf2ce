"""``Storage``: every repository of the storage port from one opened backend, as the one type callers hold.

Invariants: all repositories of one ``Storage`` share one backend connection set, so a unit of work a
port method promises as one transaction is one transaction; nothing here names an engine, a driver or
SQL. A backend package (``gateway/storage/sqlite/``, next ``…/postgres/``) implements it structurally and
``gateway.storage.factory.open_storage`` picks the backend from ``storage.backend``.
"""

from __future__ import annotations

from typing import Protocol

from agent_core.storage.agent_storage import AgentStorage
from agent_core.storage.documents import MemoryDocuments, SkillTexts
from agent_core.storage.facts import FactStore
from agent_core.storage.health import StoreHealth
from agent_core.storage.records import StoreStats
from agent_core.storage.search_index import SearchIndex

from .adapter_leases import AdapterLeaseRepository
from .admin_reads import AdminReads
from .budgets import BudgetLedger
from .chat_conversations import ChatConversations
from .checkpoints import CheckpointRepository
from .client_keys import ClientKeyStore
from .console_reads import ConsoleReads
from .erasure import ErasureRepository
from .identity import IdentityRepository
from .imports import TranscriptImport
from .outbox import OutboxRepository
from .pairing import PairingRepository
from .person_data import PersonData
from .queue import InboundLedger, TurnQueueRepository
from .retention import RetentionRepository
from .schedules import ScheduleRepository
from .usage_reads import UsageReads
from .wakeups import Wakeups


class Storage(Protocol):
    """The agent's and the gateway's repositories over one opened backend, plus its health and counters."""

    @property
    def agent(self) -> AgentStorage:
        """Conversations, segments, messages, the compression chain, the memory audit and cooldowns."""
        ...

    @property
    def search(self) -> SearchIndex:
        """Full-text search over past conversations' messages."""
        ...

    @property
    def health(self) -> StoreHealth:
        """Whether the backend can read and write now, and whether search can answer (readiness)."""
        ...

    @property
    def queue(self) -> TurnQueueRepository:
        """Turn jobs and conversation leases (and the inbound ledger they are admitted through)."""
        ...

    @property
    def ledger(self) -> InboundLedger:
        """The inbound ledger alone: each platform event recorded once."""
        ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def identity(self) -> IdentityRepository: ...

    @property
    def pairing(self) -> PairingRepository: ...

    @property
    def checkpoints(self) -> CheckpointRepository: ...

    @property
    def adapter_leases(self) -> AdapterLeaseRepository:
        """Which process runs each polling or socket adapter (one at a time)."""
        ...

    @property
    def client_key(self) -> ClientKeyStore:
        """The key web chat cookies and API tokens are hashed with, the same for every process and host."""
        ...

    @property
    def wakeups(self) -> Wakeups:
        """Learning at once that another process queued a job or an outbox row (where the backend can)."""
        ...

    @property
    def admin(self) -> AdminReads: ...

    @property
    def chats(self) -> ChatConversations:
        """A chat's conversations as its person sees them: list, live window, rename, reopen."""
        ...

    @property
    def console(self) -> ConsoleReads:
        """What the admin console reads besides ``admin``: full transcripts, activity, usage, audit log."""
        ...

    @property
    def usage(self) -> UsageReads:
        """Model usage and cost over time, in total and by person, platform, model, kind or day."""
        ...

    @property
    def person_data(self) -> PersonData:
        """Person-scoped reads for an export: their usage, their words in others' conversations."""
        ...

    @property
    def schedules(self) -> ScheduleRepository:
        """Reminders and scheduled turns, their runs, and persons' time zones."""
        ...

    @property
    def budgets(self) -> BudgetLedger:
        """Spend per budget scope and the refusals budgets made (the claim itself enforces them)."""
        ...

    @property
    def imports(self) -> TranscriptImport: ...

    @property
    def retention(self) -> RetentionRepository:
        """Pruning what is past its retention age, the retention run's lease, what it removed, free space."""
        ...

    @property
    def erasure(self) -> ErasureRepository:
        """A person's footprint, and deleting the gateway's rows about them (erasure, retention)."""
        ...

    @property
    def documents(self) -> MemoryDocuments:
        """The curated memory documents (SQLite: the files under ``<home>/memories``; PostgreSQL: rows)."""
        ...

    @property
    def skills(self) -> SkillTexts:
        """The skills' SKILL.md texts (SQLite: ``<home>/skills``; PostgreSQL: rows)."""
        ...

    @property
    def facts(self) -> FactStore:
        """The ``local`` memory provider's per-person facts."""
        ...

    def stats(self) -> StoreStats:
        """This process's counters (write retries, commits, round trips, indexer activity)."""
        ...
