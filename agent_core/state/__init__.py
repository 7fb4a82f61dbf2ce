"""state.db: conversations, their segments and messages, gateway ledgers, and the full-text search index.

Public surface: ``StateStore`` (async facade), its settings, records and errors.
"""

from .connection import wal_unsupported
from .errors import (
    SearchIndexUnavailableError,
    StateError,
    StateUnavailableError,
    StoreClosedError,
    UnknownMessageError,
    UnknownSegmentError,
    WriteContentionError,
)
from .fts_query import FtsIndexName
from .records import (
    AlreadyCompressed,
    Compressed,
    CompressionResult,
    ConversationRecord,
    EndReason,
    FtsHit,
    MessageRecord,
    NewMessage,
    NewSegment,
    Principal,
    SegmentRecord,
    StoreStats,
    TokenUsage,
)
from .settings import StateSettings, TrigramScope
from .store import StateStore

__all__ = [
    "AlreadyCompressed",
    "Compressed",
    "CompressionResult",
    "ConversationRecord",
    "EndReason",
    "FtsHit",
    "FtsIndexName",
    "MessageRecord",
    "NewMessage",
    "NewSegment",
    "Principal",
    "SearchIndexUnavailableError",
    "SegmentRecord",
    "StateError",
    "StateSettings",
    "StateStore",
    "StateUnavailableError",
    "StoreClosedError",
    "StoreStats",
    "TokenUsage",
    "TrigramScope",
    "UnknownMessageError",
    "UnknownSegmentError",
    "WriteContentionError",
    "wal_unsupported",
]
