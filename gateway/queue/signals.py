"""In-process wake-ups: set after a local write so local workers and the delivery loop react at once.

Other processes never see these; they poll state.db with a short adaptive interval instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Signals:
    """``jobs``: a job may be claimable; ``outbox``: a delivery may be waiting. Consumers clear them."""

    jobs: asyncio.Event = field(default_factory=asyncio.Event)
    outbox: asyncio.Event = field(default_factory=asyncio.Event)
