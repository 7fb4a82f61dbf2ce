"""state.db: conversations, their segments and messages, gateway ledgers, and the full-text search index.

Public surface: ``StateStore`` (async facade), its settings, records and errors.
"""

from ..errors import (
    SearchIndexUnavailableError,
    StateDamagedError,
    StateError,
    StateUnavailableError,
    StoreClosedError,
    UnknownMessageError,
    UnknownSegmentError,
    WriteContentionError,
)
from ..health import SearchHealth, SearchState
from ..records import (
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
from .connection import wal_unsupported
from .fts_query import FtsIndexName
from .integrity import SetAside, set_aside_damaged
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
    "SearchHealth",
    "SearchIndexUnavailableError",
    "SearchState",
    "SegmentRecord",
    "SetAside",
    "StateDamagedError",
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
    "set_aside_damaged",
    "wal_unsupported",
]
