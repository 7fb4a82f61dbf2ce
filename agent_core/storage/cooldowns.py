"""The compression cooldown port: at most one cooldown per conversation, shared by every process.

Invariants every backend keeps: ``put_compression_cooldown`` replaces the conversation's record and, in
the same transaction, forgets (a bounded number of) records that can no longer matter — of an ended or
missing conversation, of a segment that is no longer its conversation's tip, and those whose ``until``
is more than ``FORGET_AFTER_S`` before the new record's — so storage holds about one record per live
conversation that is cooling down. Times in a record are the compressor's clock; a backend compares them
only with each other (the sweep), never with its own clock, so the record stays data, not a lease.
What a cooldown blocks is compression's policy (``agent_core.compression.cooldown``), not the backend's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

FORGET_AFTER_S = 86_400.0
"""A record whose time ran out this long before a newer record's is forgotten by that newer ``put``."""


@dataclass(frozen=True, slots=True)
class CompressionCooldown:
    """No automatic compression of ``segment_id`` before ``until`` and ``turns`` more user messages.

    ``after_message_id``: the newest message of the segment when the cooldown started; user messages of
    the same segment after it (in the segment's order, see ``agent_core.storage.messages``) count as new
    turns. ``notified``: the person has been told about a permanent failure already.
    """

    segment_id: str
    until: float
    after_message_id: int
    turns: int
    kind: str
    reason: str
    notified: bool = False


class CooldownRepository(Protocol):
    """Cooldown records by conversation id."""

    async def compression_cooldown(self, conversation_id: str) -> CompressionCooldown | None:
        """The conversation's cooldown, or None (also for a record that cannot be read back)."""
        ...

    async def put_compression_cooldown(self, conversation_id: str, cooldown: CompressionCooldown) -> None:
        """Replace the conversation's cooldown.

        One transaction: the new record, and forgetting records that can no longer matter (see above).
        """
        ...

    async def clear_compression_cooldown(self, conversation_id: str) -> None:
        """Forget the conversation's cooldown (a compression succeeded)."""
        ...
