"""The cooldown policy after a failed or ineffective compression; the records live behind the storage port.

Invariants: a cooldown belongs to one segment (a compression by anyone ends it); it blocks automatic
compression until BOTH its time and its count of new user turns have passed, so a broken summariser or a
summary that does not shrink the context cannot fire on every turn; ``notified`` survives later failures,
so a person hears about a permanent summariser failure once, not once per attempt. Storage (and forgetting
records that can no longer matter) is ``agent_core.storage.CooldownRepository``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.storage import CompressionCooldown, MessageRecord


def cooldown_blocks(
    cooldown: CompressionCooldown, segment_id: str, records: Sequence[MessageRecord], now: float
) -> bool:
    """Whether ``cooldown`` still stops an automatic compression of ``segment_id`` (holding ``records``)."""
    if segment_id != cooldown.segment_id:
        return False
    new_turns = sum(1 for r in records if r.role == "user" and r.id > cooldown.after_message_id)
    return now < cooldown.until or new_turns < cooldown.turns
