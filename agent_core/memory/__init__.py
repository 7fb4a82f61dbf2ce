"""Curated memory: MEMORY.md / USER.md per person (or shared) plus a global MEMORY.md, as plain files under
the home or as the storage backend's ``MemoryDocuments``.

Public surface: the async ``MemoryStores`` facade (and its blocking core ``SyncMemoryStore``), the file
backend ``FileMemoryDocuments``, settings, results, the frozen ``MemorySnapshot``, the per-turn
``FailureBreaker``, the audit sink protocol, the entry format helpers, export/import of the plain files,
and the package's exceptions.
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
from agent_core.memory.filestore import MAX_BACKUPS, FileMemoryDocuments
from agent_core.memory.layout import MemoryLayout, StoreLocation, Target, validate_person_id
from agent_core.memory.operations import MAX_FAILURES_PER_TURN, BatchOperation, EntryChange, FailureBreaker
from agent_core.memory.results import MemoryResult
from agent_core.memory.settings import MemorySettings
from agent_core.memory.snapshot import MemorySnapshot, StoreUsage, StoreView
from agent_core.memory.stores import MemoryStores
from agent_core.memory.sync_store import RepairReport, SyncMemoryStore, WriteOutcome
from agent_core.memory.transfer import ExportedDocument, ImportFile, export_documents, read_import

__all__ = [
    "DELIMITER",
    "MAX_BACKUPS",
    "MAX_FAILURES_PER_TURN",
    "BatchOperation",
    "DelimiterInEntryError",
    "EntryChange",
    "ExportedDocument",
    "FailureBreaker",
    "FileMemoryDocuments",
    "ImportFile",
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
    "export_documents",
    "parse_entries",
    "read_import",
    "serialise_entries",
    "validate_entry",
    "validate_person_id",
]
