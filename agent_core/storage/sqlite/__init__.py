"""The SQLite backend of the agent's storage port: state.db (conversations, segments, messages, audit,
cooldowns), its search sidecar and the local provider's facts; every SQL statement and pragma they run.

Public surface: ``StateStore`` (implements ``agent_core.storage.AgentStorage``, ``SearchIndex`` and
``StoreHealth``), its settings, and the start-up helpers for a damaged file. Records and errors are the
port's: import them from ``agent_core.storage``.
"""

from .connection import wal_unsupported
from .fts_query import FtsIndexName
from .integrity import SetAside, set_aside_damaged
from .settings import StateSettings, TrigramScope
from .store import StateStore

__all__ = [
    "FtsIndexName",
    "SetAside",
    "StateSettings",
    "StateStore",
    "TrigramScope",
    "set_aside_damaged",
    "wal_unsupported",
]
