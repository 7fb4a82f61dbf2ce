"""Prometheus metrics for one process, on a registry of its own (never the global one).

Turns, turn latency, queue depth, delivery failures and model tokens are read through ``AdminReads`` at
scrape time, so the work of every worker process is counted, not only this one's. Write retries are this
process's store counter (``store_stats``); memory-provider health and inbound outcomes are set by the
components that know them (``set_provider_health``, ``count_inbound``); adapter connection and last
inbound/send times are read from each watched adapter's ``health()`` at scrape time (``watch_adapters``);
who owns each leased adapter is read from the database at scrape time, so every host shows the same owner,
beside whether this process holds each lease (``watch_leases``). Cost and tokens per platform and model
(``mnemogate_cost_usd_total``, ``mnemogate_tokens_total``, ``mnemogate_unpriced_model_calls_total``) are
summed from the usage log at scrape time (``UsageReads``), so any one host reports every host's spend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from agent_core.storage import StoreStats
from gateway.contracts import Adapter, AdapterHealth
from gateway.retention import RetentionReport
from gateway.storage.adapter_leases import AdapterLeaseRepository, AdapterOwner
from gateway.storage.admin_reads import AdminReads, GatewayCounters
from gateway.storage.retention import RETENTION_KINDS, RetentionCounts, RetentionKind, RetentionRepository
from gateway.storage.usage_reads import PlatformModelUsage, UsageReads

from .budget_metrics import BudgetMetrics
from .usage_counters import UsageCounters

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, float("inf"))
_TURN_OUTCOMES = {"done": "ok", "failed": "failed"}
_PRUNED_TURNS: dict[str, RetentionKind] = {"done": "turn_jobs_done", "failed": "turn_jobs_failed"}


class _ScrapeCollector(Collector):
    """Yields the families computed from the last state.db read (refreshed before each scrape)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        counters = self._metrics.last_counters
        jobs = dict(counters.jobs_by_state) if counters else {}
        outbox = dict(counters.outbox_by_state) if counters else {}
        removed = self._metrics.last_retention_totals
        turns = CounterMetricFamily("mnemogate_turns", "Turns finished, by outcome", labels=["outcome"])
        for state, outcome in _TURN_OUTCOMES.items():  # rows retention removed still count
            turns.add_metric([outcome], jobs.get(state, 0) + removed.get(_PRUNED_TURNS[state]))
        yield turns
        depth = GaugeMetricFamily("mnemogate_queue_depth", "Turn jobs waiting or running", labels=["state"])
        for state in ("queued", "running"):
            depth.add_metric([state], jobs.get(state, 0))
        yield depth
        failures = CounterMetricFamily("mnemogate_delivery_failures", "Reply chunks given up on (outbox)")
        failures.add_metric([], outbox.get("failed", 0) + removed.get("outbox_given_up"))
        yield failures
        pending = GaugeMetricFamily("mnemogate_outbox_pending", "Reply chunks not yet delivered")
        pending.add_metric([], outbox.get("pending", 0) + outbox.get("sending", 0))
        yield pending
        tokens = CounterMetricFamily("mnemogate_model_tokens", "Model tokens, by kind", labels=["kind"])
        if counters is not None:
            for kind, value in (
                ("input", counters.input_tokens),
                ("output", counters.output_tokens),
                ("cache_read", counters.cache_read_tokens),
                ("cache_write", counters.cache_write_tokens),
            ):
                tokens.add_metric([kind], value)
        yield tokens
        retries = CounterMetricFamily("mnemogate_db_write_retries", "state.db writes retried on a lock")
        retries.add_metric([], self._metrics.write_retries())
        yield retries
        health = GaugeMetricFamily(
            "mnemogate_memory_provider_healthy", "1 when the memory provider answers", labels=["provider"]
        )
        for name, ok in self._metrics.provider_health():
            health.add_metric([name], 1.0 if ok else 0.0)
        yield health
        yield from _adapter_families(self._metrics.adapter_health())
        yield from _lease_families(self._metrics.last_owners, self._metrics.leases_held())
        yield from _usage_families(self._metrics.last_usage)
        yield _retention_family(removed)


def _usage_families(usage: Iterable[PlatformModelUsage]) -> Iterator[CounterMetricFamily]:
    cost = CounterMetricFamily(
        "mnemogate_cost_usd",
        "Model cost in USD at the configured prices (calls of unpriced models add nothing)",
        labels=["platform", "model"],
    )
    tokens = CounterMetricFamily(
        "mnemogate_tokens", "Model tokens, by platform, model and kind", labels=["platform", "model", "kind"]
    )
    unpriced = CounterMetricFamily(
        "mnemogate_unpriced_model_calls",
        "Model calls whose model has no price (their cost is unknown)",
        labels=["platform", "model"],
    )
    for cell in usage:
        platform, model, line = cell.platform or "", cell.model or "", cell.line
        cost.add_metric([platform, model], line.cost_usd)
        unpriced.add_metric([platform, model], line.unpriced_calls)
        for kind, value in (
            ("input", line.input_tokens),
            ("output", line.output_tokens),
            ("cache_read", line.cache_read_tokens),
            ("cache_write", line.cache_write_tokens),
        ):
            tokens.add_metric([platform, model, kind], value)
    yield cost
    yield tokens
    yield unpriced


def _retention_family(removed: RetentionCounts) -> CounterMetricFamily:
    family = CounterMetricFamily(
        "mnemogate_retention_removed", "Rows retention removed (every host's), by kind", labels=["kind"]
    )
    for kind in RETENTION_KINDS:
        family.add_metric([kind], removed.get(kind))
    return family


def _adapter_families(adapters: Iterable[tuple[str, AdapterHealth]]) -> Iterator[GaugeMetricFamily]:
    connected = GaugeMetricFamily(
        "mnemogate_adapter_connected", "1 while the platform adapter is connected", labels=["platform"]
    )
    inbound = GaugeMetricFamily(
        "mnemogate_adapter_last_inbound_timestamp_seconds",
        "Unix time of the last message received from the platform",
        labels=["platform"],
    )
    sent = GaugeMetricFamily(
        "mnemogate_adapter_last_send_timestamp_seconds",
        "Unix time of the last successful send to the platform",
        labels=["platform"],
    )
    for platform, health in adapters:
        connected.add_metric([platform], 1.0 if health.connected else 0.0)
        if health.last_inbound_at is not None:
            inbound.add_metric([platform], health.last_inbound_at)
        if health.last_send_at is not None:
            sent.add_metric([platform], health.last_send_at)
    yield connected
    yield inbound
    yield sent


def _lease_families(owners: Sequence[AdapterOwner], held: Mapping[str, bool]) -> Iterator[GaugeMetricFamily]:
    owner = GaugeMetricFamily(
        "mnemogate_adapter_owner",
        "1 while the host holds the adapter's lease (0: its last holder, lease ended)",
        labels=["adapter", "host"],
    )
    generation = GaugeMetricFamily(
        "mnemogate_adapter_lease_generation",
        "How many times the adapter's lease changed holder (plus one)",
        labels=["adapter"],
    )
    for lease in owners:
        owner.add_metric([lease.adapter, lease.host], 1.0 if lease.live else 0.0)
        generation.add_metric([lease.adapter], lease.generation)
    mine = GaugeMetricFamily(
        "mnemogate_adapter_lease_held",
        "1 while this process holds the adapter's lease and runs it",
        labels=["adapter"],
    )
    for adapter, is_held in sorted(held.items()):
        mine.add_metric([adapter], 1.0 if is_held else 0.0)
    yield owner
    yield generation
    yield mine


class Metrics:
    """The metrics of one process; ``render()`` refreshes the database figures and returns the text.

    Without ``reads`` the database families read zero; without ``store_stats`` so do write retries; without
    ``usage`` the cost families are empty.
    """

    def __init__(
        self,
        reads: AdminReads | None = None,
        *,
        store_stats: Callable[[], StoreStats] | None = None,
        usage: UsageReads | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._reads = reads
        self._usage = None if usage is None else UsageCounters(usage)
        self.last_usage: tuple[PlatformModelUsage, ...] = ()
        self._store_stats = store_stats
        self._providers: dict[str, bool] = {"builtin": True}
        self._provider_probes: dict[str, Callable[[], bool]] = {}
        self._adapters: dict[str, Adapter] = {}
        self._leases: AdapterLeaseRepository | None = None
        self._held: Callable[[], Mapping[str, bool]] = dict
        self.last_owners: list[AdapterOwner] = []
        self._latest_finished = 0.0
        self.last_counters: GatewayCounters | None = None
        self._budgets: BudgetMetrics | None = None
        self._retention: RetentionRepository | None = None
        self.last_retention_totals = RetentionCounts()
        self._retention_last_run = Gauge(
            "mnemogate_retention_last_run_timestamp_seconds",
            "Unix time this process last finished a retention run",
            registry=self.registry,
        )
        self._retention_seconds = Gauge(
            "mnemogate_retention_last_run_seconds",
            "How long this process's last retention run took",
            registry=self.registry,
        )
        self._latency = Histogram(
            "mnemogate_turn_latency_seconds",
            "Seconds from a turn job's enqueue to its completion",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._inbound = Counter(
            "mnemogate_inbound_messages",
            "Inbound messages, by platform and outcome",
            ["platform", "outcome"],
            registry=self.registry,
        )
        self.registry.register(_ScrapeCollector(self))

    def count_inbound(self, platform: str, outcome: str) -> None:
        """Count one inbound message (outcome: accepted, duplicate, denied, rate_limited, command)."""
        self._inbound.labels(platform=platform, outcome=outcome).inc()

    def set_provider_health(self, provider: str, ok: bool) -> None:
        self._providers[provider] = ok

    def watch_provider(self, provider: str, is_ok: Callable[[], bool]) -> None:
        """Read ``provider``'s health from ``is_ok`` at every scrape."""
        self._provider_probes[provider] = is_ok

    def provider_health(self) -> Iterable[tuple[str, bool]]:
        current = dict(self._providers)
        current.update({name: probe() for name, probe in self._provider_probes.items()})
        return sorted(current.items())

    def watch_adapters(self, adapters: Mapping[str, Adapter]) -> None:
        """Report these adapters' health (by platform name) at every scrape."""
        self._adapters.update(adapters)

    def adapter_health(self) -> list[tuple[str, AdapterHealth]]:
        found: list[tuple[str, AdapterHealth]] = []
        for platform, adapter in sorted(self._adapters.items()):
            try:
                found.append((platform, adapter.health()))
            except Exception as exc:  # the adapter boundary: a broken health() reads as disconnected
                found.append((platform, AdapterHealth(connected=False, detail=f"health failed: {exc!r}")))
        return found

    def watch_leases(self, leases: AdapterLeaseRepository, held: Callable[[], Mapping[str, bool]]) -> None:
        """Report every adapter lease's owner (read from ``leases`` at each scrape) and, from ``held``,
        which ones this process holds."""
        self._leases, self._held = leases, held

    def leases_held(self) -> Mapping[str, bool]:
        return self._held()

    def watch_budgets(self, budgets: BudgetMetrics) -> None:
        """Report budget refusals and spend against the limits (read from the database at each scrape)."""
        self._budgets = budgets
        self.registry.register(budgets)

    def watch_retention(self, retention: RetentionRepository) -> None:
        """Report what retention removed (read from ``retention`` at each scrape); finished turns and given-up
        replies then keep counting the rows it removed."""
        self._retention = retention

    def observe_retention(self, report: RetentionReport) -> None:
        """Record a retention run this process finished."""
        self._retention_last_run.set_to_current_time()
        self._retention_seconds.set(report.seconds)

    def write_retries(self) -> int:
        return self._store_stats().write_retries if self._store_stats is not None else 0

    async def refresh(self) -> None:
        """Read counters, newly finished turns and adapter owners from the database."""
        if self._leases is not None:
            self.last_owners = await self._leases.owners()
        if self._budgets is not None:
            await self._budgets.refresh()
        if self._usage is not None:
            self.last_usage = await self._usage.read()
        if self._retention is not None:
            self.last_retention_totals = await self._retention.removed_totals()
        if self._reads is None:
            return
        self.last_counters = await self._reads.gateway_counters()
        for turn in await self._reads.finished_turns(self._latest_finished):
            self._latency.observe(turn.seconds)
            self._latest_finished = max(self._latest_finished, turn.finished_at)

    async def render(self) -> bytes:
        await self.refresh()
        return generate_latest(self.registry)
