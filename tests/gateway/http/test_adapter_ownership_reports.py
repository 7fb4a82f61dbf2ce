"""Who owns which leased adapter, as ``/metrics`` and ``/readyz`` report it: the owner per adapter and host
from the database (the same on every host), whether this process holds each lease, and a standby counted
as ready (it is not a failure: another process runs the connection)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from gateway.contracts import AdapterHealth
from gateway.http import Metrics
from gateway.http.readiness import adapters_probe
from gateway.storage.adapter_leases import AdapterOwner, LeaseState
from tests.gateway.delivery.recording_adapter import RecordingAdapter


class _Leases:
    """Stored leases answered from fixed rows (the backends' are contract-tested)."""

    def __init__(self, owners: list[AdapterOwner]) -> None:
        self.rows = owners

    async def claim(self, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
        raise AssertionError("a scrape never claims")

    async def release(self, adapter: str, holder: str) -> bool:
        raise AssertionError("a scrape never releases")

    async def owners(self) -> list[AdapterOwner]:
        return self.rows


def _owner(adapter: str, host: str, expires_in_s: float, generation: int) -> AdapterOwner:
    return AdapterOwner(adapter, f"{host}:1:x", host, 100.0, 200.0, expires_in_s, generation)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_metrics_name_each_adapters_owner_host_and_whether_this_process_holds_it() -> None:
    leases = _Leases([_owner("discord", "host-c", -3.0, 4), _owner("telegram", "host-a", 9.0, 2)])
    metrics = Metrics()
    metrics.watch_leases(leases, lambda: {"telegram": False, "discord": False})
    samples = _samples((await metrics.render()).decode())
    owner = "mnemogate_adapter_owner"
    assert samples[(owner, (("adapter", "telegram"), ("host", "host-a")))] == 1.0
    assert samples[(owner, (("adapter", "discord"), ("host", "host-c")))] == 0.0  # expired: nobody owns it
    assert samples[("mnemogate_adapter_lease_generation", (("adapter", "telegram"),))] == 2.0
    assert samples[("mnemogate_adapter_lease_held", (("adapter", "telegram"),))] == 0.0
    leases.rows = [_owner("telegram", "host-b", 15.0, 3)]  # read again at every scrape
    metrics.watch_leases(leases, lambda: {"telegram": True})
    samples = _samples((await metrics.render()).decode())
    assert samples[(owner, (("adapter", "telegram"), ("host", "host-b")))] == 1.0
    assert (owner, (("adapter", "telegram"), ("host", "host-a"))) not in samples
    assert samples[("mnemogate_adapter_lease_held", (("adapter", "telegram"),))] == 1.0


class _Standing(RecordingAdapter):
    def __init__(self, name: str, health: AdapterHealth) -> None:
        super().__init__(name)
        self._health = health

    def health(self) -> AdapterHealth:
        return self._health


async def test_a_standby_adapter_is_ready_and_a_disconnected_owner_is_not() -> None:
    standby = _Standing("telegram", AdapterHealth(connected=False, standby=True, detail="standby (owner a)"))
    down = _Standing("discord", AdapterHealth(connected=False, detail="gateway closed"))
    assert await adapters_probe([standby])() == "ok"
    assert await adapters_probe([standby, down])() == "not connected: discord (gateway closed)"
