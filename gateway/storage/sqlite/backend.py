"""The SQLite backend assembled: state.db opened with both ladders, and one object holding every repository.

Invariants: every repository of one ``SqliteStorage`` shares its ``StateStore`` (one writer thread, one
reader pool), so a unit of work that one port method promises as one transaction is one ``run_write``;
``SqliteStorage`` is a ``gateway.storage.Storage`` (``open_storage`` in gateway/storage/factory.py opens
it); the local provider's facts are the one exception to "one file": they keep their own SQLite file.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.memory.filestore import FileMemoryDocuments
from agent_core.skills.skill_files import SkillFiles
from agent_core.storage.agent_storage import AgentStorage
from agent_core.storage.documents import MemoryDocuments, SkillTexts
from agent_core.storage.facts import FactStore
from agent_core.storage.health import StoreHealth
from agent_core.storage.records import StoreStats
from agent_core.storage.search_index import SearchIndex
from agent_core.storage.search_windows import Embedder
from agent_core.storage.sqlite import StateSettings, StateStore
from agent_core.storage.sqlite.fact_store import SqliteFactStore
from gateway.storage.queue import InboundLedger
from gateway.storage.wakeups import NoWakeups

from .adapter_leases import SqliteAdapterLeases
from .admin_reads import SqliteAdminReads
from .budgets import SqliteBudgetLedger
from .chat_conversations import SqliteChatConversations
from .checkpoints import SqliteCheckpoints
from .client_key_file import KEY_FILENAME, ClientKeyFile
from .console_reads import SqliteConsoleReads
from .erasure import SqliteErasure
from .importer import SqliteTranscriptImport
from .jobs import SqliteTurnQueue
from .outbox import SqliteOutbox
from .pairing import SqlitePairing
from .person_data import SqlitePersonData
from .persons import SqliteIdentity
from .retention import SqliteRetention
from .schedules import SqliteSchedules
from .schema import GATEWAY_LADDER
from .usage_reads import SqliteUsageReads


def open_state_store(
    home: Path, settings: StateSettings | None = None, *, embedder: Embedder | None = None
) -> StateStore:
    """A (not yet opened) store of ``home``'s state.db with the gateway's tables beside the agent's.

    ``embedder``: the model that gives search windows their vectors (None: lexical search only)."""
    return StateStore(home, settings, ladders=(GATEWAY_LADDER,), embedder=embedder)


DEFAULT_FACTS_FILE = "providers/local.db"
"""The local provider's fact file, relative to the home (``memory.provider.local.db_path`` by default)."""


class SqliteStorage:
    """Every repository of the storage port over one opened ``StateStore`` (which is itself the agent's).

    ``state`` stays public for SQLite-only callers (backups, pragmas, the backend's own tests); everything
    else takes the port through ``gateway.storage.Storage``.
    """

    def __init__(
        self, state: StateStore, *, facts: FactStore | None = None, home: Path | None = None
    ) -> None:
        """``facts``: the local provider's store; by default ``providers/local.db`` beside state.db.
        ``home``: where memory documents, skills and the client key are files (``memories/``, ``skills/``,
        ``client_ids.key``); by default state.db's directory."""
        self.state = state
        root = home if home is not None else state.paths.db.parent
        self.documents: MemoryDocuments = FileMemoryDocuments(root / "memories")
        self.skills: SkillTexts = SkillFiles(root / "skills")
        self.client_key = ClientKeyFile(root / KEY_FILENAME)
        self.agent: AgentStorage = state
        self.search: SearchIndex = state
        self.health: StoreHealth = state
        self.facts: FactStore = facts or SqliteFactStore(state.paths.db.parent / DEFAULT_FACTS_FILE)
        self.queue = SqliteTurnQueue(state)
        self.ledger: InboundLedger = self.queue
        self.outbox = SqliteOutbox(state)
        self.identity = SqliteIdentity(state)
        self.pairing = SqlitePairing(state)
        self.checkpoints = SqliteCheckpoints(state)
        self.adapter_leases = SqliteAdapterLeases(state)
        self.wakeups = NoWakeups()  # one host: waiters poll state.db
        self.admin = SqliteAdminReads(state)
        self.chats = SqliteChatConversations(state)
        self.console = SqliteConsoleReads(state)
        self.usage = SqliteUsageReads(state)
        self.person_data = SqlitePersonData(state)
        self.imports = SqliteTranscriptImport(state)
        self.schedules = SqliteSchedules(state)
        self.budgets = SqliteBudgetLedger(state)
        self.retention = SqliteRetention(state)
        self.erasure = SqliteErasure(state)

    def stats(self) -> StoreStats:
        """This process's state.db counters (write retries, commits, round trips, indexer activity)."""
        return self.state.stats()
