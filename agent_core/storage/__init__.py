"""The agent's storage port: typed repositories with frozen records in and out, and no backend in sight.

Public surface: the repositories (``ConversationRepository``, ``MessageRepository``, ``CompressionChain``,
``MemoryAuditLog``, ``CooldownRepository``, ``Forgetting``, composed as ``AgentStorage``; the local provider's
``FactStore``), the records that cross them, and the storage errors. Backends live in subpackages named
for their engine (``agent_core.storage.sqlite``); nothing here imports one, speaks SQL or names a driver.
"""

from .agent_storage import AgentStorage
from .audit import MemoryAuditLog, MemoryAuditRecord
from .conversations import CompressionChain, ConversationRepository
from .cooldowns import FORGET_AFTER_S, CompressionCooldown, CooldownRepository
from .errors import (
    SearchIndexUnavailableError,
    StateDamagedError,
    StateError,
    StateUnavailableError,
    StoreClosedError,
    UnknownMessageError,
    UnknownSegmentError,
    WriteContentionError,
)
from .facts import Fact, FactStore
from .forgetting import FORGOTTEN, Forgetting, ForgottenConversations
from .health import SearchHealth, SearchState, StoreHealth
from .messages import MessageRepository, SegmentHistory
from .records import (
    AlreadyCompressed,
    Compressed,
    CompressionResult,
    ConversationRecord,
    EndReason,
    MessageRecord,
    ModelCall,
    NewMessage,
    NewSegment,
    Principal,
    SegmentRecord,
    StoreStats,
    TokenUsage,
    UsageKind,
)

__all__ = [
    "FORGET_AFTER_S",
    "FORGOTTEN",
    "AgentStorage",
    "AlreadyCompressed",
    "Compressed",
    "CompressionChain",
    "CompressionCooldown",
    "CompressionResult",
    "ConversationRecord",
    "ConversationRepository",
    "CooldownRepository",
    "EndReason",
    "Fact",
    "FactStore",
    "Forgetting",
    "ForgottenConversations",
    "MemoryAuditLog",
    "MemoryAuditRecord",
    "MessageRecord",
    "MessageRepository",
    "ModelCall",
    "NewMessage",
    "NewSegment",
    "Principal",
    "SearchHealth",
    "SearchIndexUnavailableError",
    "SearchState",
    "SegmentHistory",
    "SegmentRecord",
    "StateDamagedError",
    "StateError",
    "StateUnavailableError",
    "StoreClosedError",
    "StoreHealth",
    "StoreStats",
    "TokenUsage",
    "UnknownMessageError",
    "UnknownSegmentError",
    "UsageKind",
    "WriteContentionError",
]
