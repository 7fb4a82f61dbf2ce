"""``AgentStorage``: everything the agent persists in state.db, as the one type its components take.

The turn loop, the compressor and the prompt builder annotate with this Protocol, never with a backend
class; the SQLite backend's ``StateStore`` implements it structurally (and a PostgreSQL backend will).
The local memory provider's facts are not part of it: they are a separate ``FactStore``.
"""

from __future__ import annotations

from typing import Protocol

from .audit import MemoryAuditLog
from .conversations import CompressionChain, ConversationRepository
from .cooldowns import CooldownRepository
from .forgetting import Forgetting
from .messages import MessageRepository


class AgentStorage(
    ConversationRepository,
    MessageRepository,
    CompressionChain,
    MemoryAuditLog,
    CooldownRepository,
    Forgetting,
    Protocol,
):
    """Conversations, segments, messages, the compression chain, the memory audit, cooldowns, and
    forgetting conversations."""
