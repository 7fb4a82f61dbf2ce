"""``bench gateway --hosts H`` failover: how long a leased adapter is unowned after its owner is killed -9.

Invariants: every bench host process runs one ``LeasedAdapter`` (an idle embedded channel named
``bench-leased``, host label ``bench-host-<n>``) under ``lease_s``, exactly as ``serve`` runs Telegram long
polling; the measuring process only reads ``AdapterLeaseRepository.owners`` (the database's own clock
decides expiry), kills the owner's process with SIGKILL and reports the time until another host holds a
live lease. The figure is bounded by ``lease_s`` (a standby claims when the owner's lease ends).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from multiprocessing.process import BaseProcess
from pathlib import Path

from gateway.adapter_ownership import LeasedAdapter, LeaseTerms
from gateway.contracts import InboundMessage, InboundOutcome
from gateway.queue.worker_pool import new_holder
from gateway.storage.adapter_leases import AdapterLeaseRepository, AdapterOwner
from gateway.webchat import WebChatAdapter

ADAPTER = "bench-leased"
_POLL_S = 0.02
_HOST_PREFIX = "bench-host-"


async def _ignore(message: InboundMessage) -> InboundOutcome | None:
    return None


@asynccontextmanager
async def leased_adapter(leases: AdapterLeaseRepository, host: int, lease_s: float) -> AsyncIterator[None]:
    """Run this bench host's lease on ``ADAPTER`` (owner or standby) for the duration of the block."""
    terms = LeaseTerms(new_holder(), f"{_HOST_PREFIX}{host}", lease_s)
    async with LeasedAdapter(WebChatAdapter(ADAPTER), leases, terms) as adapter:
        await adapter.start(_ignore)
        yield


async def measure(leases: AdapterLeaseRepository, hosts: Sequence[BaseProcess]) -> dict[str, float | int]:
    """Kill -9 the owning host's process; seconds until another host owns the adapter."""
    owner = await _live_owner(leases, None, 60.0)
    victim = hosts[int(owner.host.removeprefix(_HOST_PREFIX))]
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    successor = await _live_owner(leases, owner.holder, 120.0)
    return {
        "failover_s": round(time.monotonic() - killed_at, 3),
        "failover_lease_remaining_s_at_kill": round(owner.expires_in_s, 3),
        "failover_generation": successor.generation,
    }


async def _live_owner(
    leases: AdapterLeaseRepository, other_than: str | None, within_s: float
) -> AdapterOwner:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for owner in await leases.owners():
            if owner.adapter == ADAPTER and owner.live and owner.holder != other_than:
                return owner
        await asyncio.sleep(_POLL_S)  # polling the database with a deadline
    raise RuntimeError(f"no host took {ADAPTER} over within {within_s:.0f} s")


def host_home(workdir: Path, host: int) -> Path:
    """Each bench host's own home (nothing shared on disk between hosts)."""
    return workdir / f"host-{host}"
