"""The gateway's storage port: the repositories of the gateway's own data (queue, ledger, outbox, identity,
pairing, adapter checkpoints and leases, wake-ups, admin reads, chat windows), defined here and implemented
by each backend package beside it.

``Storage`` gathers them with the agent's repositories over one opened backend; ``open_storage`` (factory.py)
is the one place that picks the backend from ``storage.backend``.
"""

from .adapter_leases import AdapterLeaseRepository, AdapterOwner, LeaseState
from .admin_reads import (
    MAX_PAGE,
    AdminReads,
    ChatHistory,
    ConversationRow,
    FinishedTurn,
    GatewayCounters,
    MessageRow,
    MessageTally,
    Page,
    PersonRow,
    QueuedReply,
    TokenTotals,
)
from .backend import Storage
from .chat_conversations import (
    SWITCHED,
    ChatConversation,
    ChatConversations,
    ChatWindow,
    CommandNotice,
    Reopened,
)
from .checkpoints import CheckpointRepository
from .client_keys import ClientKeyStore, ClientKeyUnusableError
from .erasure import ConversationRowsForgotten, ErasureRepository, PersonFootprint, PersonRowsErased
from .factory import open_storage
from .identity import AccountRecord, IdentityRepository, IssuedLinkCode, RedeemStatus, Redemption
from .imports import IMPORTED_END_REASON, ImportReport, LineError, TranscriptImport
from .outbox import (
    NOTICE_KINDS,
    ChatNotice,
    ChunkReceipt,
    OutboxEntry,
    OutboxItem,
    OutboxRepository,
    OutboxState,
    OutboxStatus,
    ReplyRouting,
)
from .pairing import PairingDecision, PairingRepository, PairingRequest, PairingState, PairingTicket
from .person_data import PersonData, UsageRecord
from .queue import (
    Admission,
    AdmissionRule,
    ClaimedJob,
    ConversationQueue,
    Enqueued,
    InboundLedger,
    Interrupt,
    JobRecord,
    JobReply,
    LeaseRecord,
    Placement,
    QueuedJob,
    QueueState,
    ReplyTarget,
    TipTail,
    TurnQueueRepository,
    TurnRequest,
)
from .wakeups import NoWakeups, Wakeups

__all__ = [
    "IMPORTED_END_REASON",
    "MAX_PAGE",
    "NOTICE_KINDS",
    "SWITCHED",
    "AccountRecord",
    "AdapterLeaseRepository",
    "AdapterOwner",
    "AdminReads",
    "Admission",
    "AdmissionRule",
    "ChatConversation",
    "ChatConversations",
    "ChatHistory",
    "ChatNotice",
    "ChatWindow",
    "CheckpointRepository",
    "ChunkReceipt",
    "ClaimedJob",
    "ClientKeyStore",
    "ClientKeyUnusableError",
    "CommandNotice",
    "ConversationQueue",
    "ConversationRow",
    "ConversationRowsForgotten",
    "Enqueued",
    "ErasureRepository",
    "FinishedTurn",
    "GatewayCounters",
    "IdentityRepository",
    "ImportReport",
    "InboundLedger",
    "Interrupt",
    "IssuedLinkCode",
    "JobRecord",
    "JobReply",
    "LeaseRecord",
    "LeaseState",
    "LineError",
    "MessageRow",
    "MessageTally",
    "NoWakeups",
    "OutboxEntry",
    "OutboxItem",
    "OutboxRepository",
    "OutboxState",
    "OutboxStatus",
    "Page",
    "PairingDecision",
    "PairingRepository",
    "PairingRequest",
    "PairingState",
    "PairingTicket",
    "PersonData",
    "PersonFootprint",
    "PersonRow",
    "PersonRowsErased",
    "Placement",
    "QueueState",
    "QueuedJob",
    "QueuedReply",
    "RedeemStatus",
    "Redemption",
    "Reopened",
    "ReplyRouting",
    "ReplyTarget",
    "Storage",
    "TipTail",
    "TokenTotals",
    "TranscriptImport",
    "TurnQueueRepository",
    "TurnRequest",
    "UsageRecord",
    "Wakeups",
    "open_storage",
]
