"""The adapter-checkpoint port: a forward-only position per (platform, key), e.g. a channel's last message.

Invariant every backend keeps: a stored position never decreases — advancing to a lower or equal
position changes nothing — so hand-offs finishing out of order cannot move a checkpoint backwards.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol


class CheckpointRepository(Protocol):
    """Adapter checkpoints, kept by a storage backend; each call is its own durable write or read."""

    async def load(self, platform: str) -> Mapping[str, int]:
        """Every key of ``platform`` with its position."""
        ...

    async def advance(self, platform: str, key: str, position: int) -> bool:
        """Record ``position`` unless a higher or equal one is stored; True when it moved forward."""
        ...

    async def forget(self, platform: str, keys: Collection[str]) -> int:
        """Delete these keys of ``platform`` (unknown keys are ignored); how many went."""
        ...
