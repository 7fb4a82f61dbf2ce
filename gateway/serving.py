"""The two long-running processes: ``serve`` (HTTP, adapters, delivery and an in-process worker pool) and
``worker`` (a worker pool only), each run until a stop signal on components from ``gateway.runtime``.

Invariants: everything is entered on one AsyncExitStack, so shutdown is the reverse of start-up: HTTP stops
taking messages, the worker pool drains (in-flight turns get ``queue.drain_grace_s``, then go back to the
queue), delivery gets ``delivery.shutdown_grace_s`` to send what is in flight, and the adapters disconnect
last; a second stop signal ends the process at once (nothing durable is lost: a running turn goes back to
the queue when its lease ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from agent_core.providers import MemoryManager
from gateway.access import NewPersonBudget
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.adapter_ownership import LeasedAdapter
from gateway.api import ApiChannel, ServedModel
from gateway.budgets import BudgetPolicy
from gateway.config import Home, Settings
from gateway.contracts import Adapter
from gateway.delivery import (
    ChatBudgets,
    DeliveryLoop,
    StreamRegistry,
)
from gateway.erasure import PersonEraser
from gateway.export import PersonExporter
from gateway.http import create_app, serve_http
from gateway.http.admin import AdminBackend
from gateway.http.budget_metrics import BudgetMetrics
from gateway.http.metrics import Metrics
from gateway.http.readiness import Probe, Readiness, adapters_probe, search_probe, state_probe
from gateway.identity import ClientKey, rekey_legacy_web_accounts
from gateway.leased_adapters import leased, leases_held, owned_delivery, unleased
from gateway.logging_setup import configure_logging
from gateway.queue import WorkerPool
from gateway.retention.deployment import retention_runner
from gateway.runtime import (
    build_gateway,
    configured_adapters,
    open_runtime,
    streaming_agent,
    supervised,
    web_people,
    worker_pool,
)
from gateway.schedules.deployment import scheduler
from gateway.startup_notes import startup_notes
from gateway.storage import ReplyRouting
from gateway.webchat import BrowserChat

_LOG = logging.getLogger("mnemogate.runtime")


async def serve(home: Home, settings: Settings, host: str, port: int) -> None:
    """Run HTTP, adapters, delivery and an in-process worker pool until a stop signal."""
    configure_logging(settings.log, secrets=settings.secret_values())
    for note in startup_notes(settings):
        _LOG.log(logging.WARNING if note.warning else logging.INFO, note.text)
    stop = _stop_on_signals()
    async with open_runtime(home, settings) as runtime, contextlib.AsyncExitStack() as stack:
        metrics = Metrics(
            runtime.storage.admin, store_stats=runtime.storage.stats, usage=runtime.storage.usage
        )
        if settings.memory.provider.name != "none":
            providers = runtime.providers
            metrics.watch_provider(settings.memory.provider.name, lambda: not providers.health().degraded)
        gateway = build_gateway(runtime, count_inbound=metrics.count_inbound)
        stack.push_async_callback(gateway.pipeline.drain)  # last out: slow commands finish or are cancelled
        web, api = BrowserChat(), ApiChannel()
        # Cookies and API tokens become account ids, the same on every host of the deployment.
        client_key = await ClientKey.for_deployment(runtime.storage.client_key)
        await rekey_legacy_web_accounts(runtime.storage.identity, client_key)
        await stack.enter_async_context(runtime.wakeups())  # other hosts' jobs and replies wake us
        streams, budgets = StreamRegistry(), ChatBudgets(settings.delivery.rate_for)
        # A polling or socket adapter runs where its lease is held, its delivery loop beside it.
        platforms = leased(
            supervised(configured_adapters(settings), settings.adapters),
            settings.adapters,
            runtime.storage.adapter_leases,
            owned_delivery(gateway.outbox.repository, runtime.signals, settings.delivery, budgets, streams),
        )
        adapters: dict[str, Adapter] = {"web": web, "api": api, **platforms}
        metrics.watch_adapters(platforms)
        metrics.watch_leases(runtime.storage.adapter_leases, leases_held(platforms))
        metrics.watch_budgets(BudgetMetrics(BudgetPolicy(settings.budgets), runtime.storage.budgets))
        # Exit runs in reverse: HTTP stops taking messages, the pool drains, delivery sends what the
        # drained turns queued, and only then do the adapters disconnect (a leased one stops its own
        # delivery first, then releases its lease).
        for name, adapter in adapters.items():
            await stack.enter_async_context(adapter)
            adapter.use_checkpoints(StateCheckpoints(runtime.storage.checkpoints, name))
            await adapter.start(gateway.pipeline.handle)
        delivery = await stack.enter_async_context(
            DeliveryLoop(
                outbox=gateway.outbox.repository,
                adapters=unleased(adapters),
                signals=runtime.signals,
                settings=settings.delivery,
                budgets=budgets,
                streams=streams,
                routing=waiting_here([web, api], settings.delivery.reply_grace_s),
            )
        )
        # Only this in-process pool streams: it runs beside the adapters; worker processes deliver normally.
        agent = streaming_agent(runtime, platforms, delivery, streams, web, live={api.name: api})
        pool = await stack.enter_async_context(worker_pool(runtime, agent))
        await stack.enter_async_context(scheduler(settings, runtime.storage, runtime.signals))
        # Retention runs in the background (one run at a time across hosts), never on the append path.
        metrics.watch_retention(runtime.storage.retention)
        await stack.enter_async_context(
            retention_runner(settings, runtime.storage, on_report=metrics.observe_retention)
        )
        readiness = Readiness(
            {
                "state_db": state_probe(runtime.storage.health),
                "search": search_probe(runtime.storage.health),
                "adapters": adapters_probe(list(adapters.values())),
                **{f"adapter:{name}": adapter_detail_probe(adapter) for name, adapter in platforms.items()},
                "workers": _pool_probe(pool),
                "memory_provider": _provider_probe(runtime.providers),
            }
        )
        app = create_app(
            readiness,
            http=settings.http,
            webchat=web,
            api_channel=api,
            api_model=ServedModel.of(settings.model),
            metrics=metrics,
            admin=AdminBackend(
                runtime.storage.admin,
                runtime.storage.agent,
                runtime.memory,
                runtime.search,
                pairing=gateway.access.pairing,
                console=runtime.storage.console,
                skills=runtime.skills,
                leases=runtime.storage.adapter_leases,
                schedules=runtime.schedules,
                budgets=runtime.storage.budgets,
                export=PersonExporter.configured(runtime.storage, home.root, settings),
                settings=settings.admin,
                usage=runtime.storage.usage,
                usage_timezone=settings.usage.timezone,
                eraser=PersonEraser(runtime.storage, runtime.providers.provider),
            ),
            reads=runtime.storage.admin,
            transcripts=runtime.storage.agent,
            adapter_routes=[route for adapter in platforms.values() for route in adapter.http_routes()],
            client_key=client_key,
            new_web_persons=NewPersonBudget(
                runtime.storage.identity, settings.rate_limit.new_persons_budget()
            ),
            people=web_people(runtime),
        )
        await stack.enter_async_context(serve_http(app, host, port))
        # First out: web chat streams and long polls end before HTTP waits for open connections (the
        # page reconnects to the next server by itself); API callers keep their channel for the grace.
        stack.push_async_callback(web.feed.close)
        _LOG.info("mnemogate listening on http://%s:%d (home %s)", host, port, home.root)
        print(f"mnemogate listening on http://{host}:{port} (home {home.root})", flush=True)
        await stop.wait()
        _LOG.info("stopping: draining turns")


async def run_worker(home: Home, settings: Settings) -> None:
    """A worker process: claims and runs turns from the shared home until SIGTERM, then drains."""
    configure_logging(settings.log, secrets=settings.secret_values())
    stop = _stop_on_signals()
    async with (
        open_runtime(home, settings) as runtime,
        runtime.wakeups(),
        worker_pool(runtime) as pool,
        scheduler(settings, runtime.storage, runtime.signals),
    ):
        _LOG.info("worker %s ready (home %s)", pool.holder, home.root)
        print(f"mnemogate worker {pool.holder} ready (home {home.root})", flush=True)
        await stop.wait()
        _LOG.info("worker %s stopping: draining %d turn(s)", pool.holder, pool.in_flight)


class WaitedOnChannel(Protocol):
    """An embedded channel whose callers wait on this process for their answers (web chat, API)."""

    name: str

    def awaited_replies(self) -> frozenset[str]: ...


def waiting_here(channels: Sequence[WaitedOnChannel], grace_s: float) -> Callable[[], ReplyRouting]:
    """The replies to claim at once: those the channels' callers wait for in this process (a browser's
    stream, an API request); others' wait ``grace_s`` for the process that took their message."""
    platforms = frozenset(channel.name for channel in channels)

    def routing() -> ReplyRouting:
        awaited = frozenset().union(*(channel.awaited_replies() for channel in channels))
        return ReplyRouting(platforms, awaited, grace_s)

    return routing


def _stop_on_signals() -> asyncio.Event:
    """Set by the first SIGTERM/SIGINT (a drain); a second one ends the process at once.

    Exiting mid-drain loses nothing durable: a turn that was running goes back to the queue when its
    lease expires, and a reply not yet sent stays in the outbox.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def received(signum: int) -> None:
        name = signal.Signals(signum).name
        if not stop.is_set():
            _LOG.info("%s received: stopping (a second signal exits at once)", name)
            stop.set()
            return
        _LOG.warning("second %s: exiting without waiting for the drain", name)
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, received, sig)
    return stop


def _provider_probe(providers: MemoryManager) -> Probe:
    async def probe() -> str:
        # A failing provider degrades recall but never blocks turns, so it does not fail readiness.
        health = providers.health()
        return "ok" if health.state.value in ("ok", "disabled") else f"ok (memory {health.state.value})"

    return probe


def adapter_detail_probe(adapter: Adapter) -> Probe:
    """One platform's connection with its last inbound and send ages, for ``/readyz`` details."""

    async def probe() -> str:
        health = adapter.health()
        if health.standby:  # another process runs it; this one takes over when its lease ends
            return f"ok ({health.detail})"
        if not health.connected:
            return f"disconnected: {health.detail or 'no detail'}"
        now = time.time()
        parts = [health.detail] if health.detail else []
        if health.last_inbound_at is not None:
            parts.append(f"last inbound {now - health.last_inbound_at:.0f} s ago")
        if health.last_send_at is not None:
            parts.append(f"last send {now - health.last_send_at:.0f} s ago")
        if isinstance(adapter, LeasedAdapter):
            parts.append(adapter.ownership().describe())
        return f"ok ({'; '.join(parts)})" if parts else "ok"

    return probe


def _pool_probe(pool: WorkerPool) -> Probe:
    async def probe() -> str:
        return "ok" if pool.alive else "worker pool stopped"

    return probe
