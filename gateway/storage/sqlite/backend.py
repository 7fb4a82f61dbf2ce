"""The SQLite backend assembled: state.db opened with both ladders, and one object holding every repository.

Invariants: every repository of one ``SqliteStorage`` shares its ``StateStore`` (one writer thread, one
reader pool), so a unit of work that one port method promises as one transaction is one ``run_write``.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.storage.agent_storage import AgentStorage
from agent_core.storage.search_index import SearchIndex
from agent_core.storage.sqlite import StateSettings, StateStore
from gateway.storage.queue import InboundLedger

from .admin_reads import SqliteAdminReads
from .checkpoints import SqliteCheckpoints
from .importer import SqliteTranscriptImport
from .jobs import SqliteTurnQueue
from .outbox import SqliteOutbox
from .pairing import SqlitePairing
from .persons import SqliteIdentity
from .schema import GATEWAY_LADDER


def open_state_store(home: Path, settings: StateSettings | None = None) -> StateStore:
    """A (not yet opened) store of ``home``'s state.db with the gateway's tables beside the agent's."""
    return StateStore(home, settings, ladders=(GATEWAY_LADDER,))


class SqliteStorage:
    """Every repository of the storage port over one opened ``StateStore`` (which is itself the agent's)."""

    def __init__(self, state: StateStore) -> None:
        self.state = state
        self.agent: AgentStorage = state
        self.search: SearchIndex = state
        self.queue = SqliteTurnQueue(state)
        self.ledger: InboundLedger = self.queue
        self.outbox = SqliteOutbox(state)
        self.identity = SqliteIdentity(state)
        self.pairing = SqlitePairing(state)
        self.checkpoints = SqliteCheckpoints(state)
        self.admin = SqliteAdminReads(state)
        self.imports = SqliteTranscriptImport(state)
