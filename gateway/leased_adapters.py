"""Which of a process's platform adapters run under a lease, and the delivery loop each one brings along.

Invariants: exactly the adapters that hold a connection (``Adapter.holds_connection``: Telegram long
polling, Discord's gateway, Slack Socket Mode) are wrapped in a ``LeasedAdapter``, all with this process's
one holder id; webhook adapters (and the web chat and API channels) are served by every process as they
are. A leased adapter's outbox rows are sent only by the delivery loop its owner starts beside it, so a
standby never sends; a new owner's loop first takes over the rows its predecessor left claimed (it can send
no more), so a killed owner's replies in flight go out within the lease rather than after
``delivery.claim_s``; those loops share the process's chat budgets and stream registry with the shared loop,
which alone prunes delivered rows.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping

from gateway.adapter_ownership import LeasedAdapter, LeaseTerms
from gateway.contracts import Adapter
from gateway.delivery import AdapterSettings, ChatBudgets, DeliveryLoop, DeliverySettings, StreamRegistry
from gateway.queue import Signals
from gateway.queue.worker_pool import new_holder
from gateway.storage.adapter_leases import AdapterLeaseRepository
from gateway.storage.outbox import OutboxRepository


def leased(
    adapters: Mapping[str, Adapter],
    options: Mapping[str, AdapterSettings],
    leases: AdapterLeaseRepository,
    delivery: Callable[[Adapter], DeliveryLoop],
) -> dict[str, Adapter]:
    """``adapters`` with each one that holds a connection run under its lease (``adapters.<name>.lease_s``)
    and ``delivery`` beside it while this process owns it; the others unchanged."""
    holder, host = new_holder(), socket.gethostname()  # one holder id for all of this process's leases
    return {
        name: LeasedAdapter(
            adapter, leases, LeaseTerms(holder, host, options[name].lease_s), while_owned=delivery
        )
        if adapter.holds_connection
        else adapter
        for name, adapter in adapters.items()
    }


def owned_delivery(
    outbox: OutboxRepository,
    signals: Signals,
    settings: DeliverySettings,
    budgets: ChatBudgets,
    streams: StreamRegistry,
) -> Callable[[Adapter], DeliveryLoop]:
    """A delivery loop for one leased adapter alone, run while this process owns it."""
    own = settings.model_copy(update={"outbox_keep_days": 0.0})  # the shared loop prunes

    def delivery(adapter: Adapter) -> DeliveryLoop:
        return DeliveryLoop(
            outbox=outbox,
            adapters={adapter.name: adapter},
            signals=signals,
            settings=own,
            budgets=budgets,
            streams=streams,
            takes_over=True,
        )

    return delivery


def unleased(adapters: Mapping[str, Adapter]) -> dict[str, Adapter]:
    """The adapters every process serves (the shared delivery loop sends their rows)."""
    return {name: adapter for name, adapter in adapters.items() if not isinstance(adapter, LeasedAdapter)}


def leases_held(adapters: Mapping[str, Adapter]) -> Callable[[], dict[str, bool]]:
    """Which leased adapters this process owns at each call, by name (for ``/metrics``)."""
    owned = {name: adapter for name, adapter in adapters.items() if isinstance(adapter, LeasedAdapter)}
    return lambda: {name: adapter.holds_lease() for name, adapter in owned.items()}
