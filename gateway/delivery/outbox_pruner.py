"""Pruning of delivered outbox rows: the outbox keeps what still has to go out, not a copy of every reply.

Invariants: only rows delivered more than ``delivery.outbox_keep_days`` ago are deleted (0 keeps them all);
pending, sending and failed rows are never touched; each batch is one short write transaction of at most
``outbox_prune_batch`` rows and a pass stops after ``_MAX_BATCHES`` of them, so pruning a large backlog
interleaves with the hot path instead of holding the write lock. The transcripts (``messages``) are not
affected: a reply lives on there; what goes is the delivery record and, for command replies and the
gateway's notices (which exist only in the outbox), the text itself.
"""

from __future__ import annotations

import asyncio
import logging

from agent_core.storage.errors import StateError
from gateway.storage.outbox import OutboxRepository

from .settings import DeliverySettings

_LOG = logging.getLogger("mnemogate.delivery")
_MAX_BATCHES = 200
_DAY_S = 86_400.0


class OutboxPruner:
    """Deletes delivered rows past their keep time; ``run`` prunes every ``outbox_prune_every_s``."""

    def __init__(self, outbox: OutboxRepository, settings: DeliverySettings) -> None:
        self._outbox = outbox
        self._settings = settings
        self.pruned = 0

    @property
    def enabled(self) -> bool:
        return self._settings.outbox_keep_days > 0

    async def run(self) -> None:
        """Prune now and then every interval, until cancelled."""
        while True:
            await self.prune()
            await asyncio.sleep(self._settings.outbox_prune_every_s)

    async def prune(self) -> int:
        """One pass over the rows delivered before the keep time; returns how many were deleted."""
        if not self.enabled:
            return 0
        keep_s = self._settings.outbox_keep_days * _DAY_S
        batch = self._settings.outbox_prune_batch
        total = 0
        for _ in range(_MAX_BATCHES):
            try:
                deleted = await self._outbox.prune_delivered(older_than_s=keep_s, limit=batch)
            except StateError:
                _LOG.warning("could not prune delivered outbox rows; trying again later", exc_info=True)
                break
            total += deleted
            if deleted < batch:
                break
            await asyncio.sleep(0)  # let the writes queued meanwhile go first
        if total:
            self.pruned += total
            _LOG.info(
                "pruned %d outbox rows delivered over %g days ago", total, self._settings.outbox_keep_days
            )
        return total
