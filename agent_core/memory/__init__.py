"""Curated memory: MEMORY.md / USER.md per person (or shared) plus a global MEMORY.md, as plain files.

Public surface: the async ``MemoryStores`` facade (and its blocking core ``SyncMemoryStore``), settings,
results, the frozen ``MemorySnapshot``, the per-turn ``FailureBreaker``, the audit sink protocol, the
entry format helpers and the package's exceptions.
"""

from agent_core.memory.audit import MemoryAuditSink
from agent_core.memory.entries import DELIMITER, parse_entries, serialise_entries, validate_entry
from agent_core.memory.errors import (
    DelimiterInEntryError,
    InvalidPersonIdError,
    InvalidTargetError,
    MemoryFileDriftError,
    MemoryIOError,
    MemoryStoreError,
)
from agent_core.memory.filestore import MAX_BACKUPS
from agent_core.memory.layout import MemoryLayout, StoreLocation, Target, validate_person_id
from agent_core.memory.operations import MAX_FAILURES_PER_TURN, BatchOperation, EntryChange, FailureBreaker
from agent_core.memory.results import MemoryResult
from agent_core.memory.settings import MemorySettings
from agent_core.memory.snapshot import MemorySnapshot, StoreUsage, StoreView
from agent_core.memory.stores import MemoryStores
from agent_core.memory.sync_store import RepairReport, SyncMemoryStore, WriteOutcome

__all__ = [
    "DELIMITER",
    "MAX_BACKUPS",
    "MAX_FAILURES_PER_TURN",
    "BatchOperation",
    "DelimiterInEntryError",
    "EntryChange",
    "FailureBreaker",
    "InvalidPersonIdError",
    "InvalidTargetError",
    "MemoryAuditSink",
    "MemoryFileDriftError",
    "MemoryIOError",
    "MemoryLayout",
    "MemoryResult",
    "MemorySettings",
    "MemorySnapshot",
    "MemoryStoreError",
    "MemoryStores",
    "RepairReport",
    "StoreLocation",
    "StoreUsage",
    "StoreView",
    "SyncMemoryStore",
    "Target",
    "WriteOutcome",
    "parse_entries",
    "serialise_entries",
    "validate_entry",
    "validate_person_id",
]
