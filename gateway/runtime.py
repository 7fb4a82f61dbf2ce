"""The composition root: builds every component from settings and enters them on one AsyncExitStack.

Shutdown is the reverse of start-up by construction. ``serve`` runs HTTP, the enabled adapters, the
delivery loop and an in-process worker pool until SIGTERM/SIGINT; ``run_worker`` runs a worker pool only,
against the same home. On a stop signal: HTTP stops taking messages, the worker pool drains (in-flight
turns get ``queue.drain_grace_s``, then go back to the queue), delivery gets ``delivery.shutdown_grace_s``
to send what is in flight, and the adapters disconnect last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

from agent_core.actor import Actor
from agent_core.agent import SegmentPrompts, Toolbox, TurnRunner
from agent_core.compression import Compressor
from agent_core.llm import ClosableLLMClient, OfflineClient, build_client
from agent_core.memory import MemoryStores
from agent_core.prompt import ensure_soul
from agent_core.providers import MemoryManager, MirroringAuditSink, build_manager
from agent_core.search import SessionSearch, session_search_tool
from agent_core.search.embedding import load_embedder
from agent_core.skills import SkillStore
from agent_core.tools import builtin_registry
from gateway.access import AccessControl, NewPersonBudget, RateLimiter
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.adapter_ownership import LeasedAdapter
from gateway.adapter_supervisor import SupervisedAdapter
from gateway.adapters_config import build_adapters
from gateway.api import ApiChannel, ServedModel
from gateway.config import Home, Settings
from gateway.contracts import Adapter
from gateway.delivery import (
    AdapterSettings,
    ChatBudgets,
    DeliveryLoop,
    LiveChannel,
    Outbox,
    StreamingAgent,
    StreamRegistry,
)
from gateway.http import create_app, serve_http
from gateway.http.admin import AdminBackend
from gateway.http.metrics import Metrics
from gateway.http.readiness import Probe, Readiness, adapters_probe, search_probe, state_probe
from gateway.identity import ClientKey, rekey_legacy_web_accounts
from gateway.inbound import BuiltinCommands, CommandCall, CommandServices, InboundPipeline, LinkHandler
from gateway.leased_adapters import leased, leases_held, owned_delivery, unleased
from gateway.logging_setup import configure_logging
from gateway.queue import BusyPolicy, Signals, TurnQueue, WorkerPool
from gateway.queue.turn_lane import TurnAgent
from gateway.startup_notes import startup_notes
from gateway.storage import Storage, open_storage
from gateway.webchat import STREAM_INTERVAL_S, BrowserChat
from gateway.webchat.person_services import PersonServices

_LOG = logging.getLogger("mnemogate.runtime")


@dataclass(frozen=True)
class Runtime:
    """The running components of one process."""

    home: Home
    settings: Settings
    memory: MemoryStores
    skills: SkillStore
    client: ClosableLLMClient
    agent: TurnRunner
    providers: MemoryManager
    search: SessionSearch
    storage: Storage
    """Every repository of the storage port, from the one backend this process opened (``open_storage``)."""
    signals: Signals = field(default_factory=Signals)

    async def readiness(self) -> dict[str, str]:
        """state.db and search: name -> "ok", "ok (…)" when degraded, or a short reason."""
        health = self.storage.health
        return await Readiness({"state_db": state_probe(health), "search": search_probe(health)})()

    def wakeups(self) -> contextlib.AbstractAsyncContextManager[None]:
        """While entered, work queued by other processes (other hosts on PostgreSQL) sets ``signals``."""
        return self.storage.wakeups.listen(jobs=self.signals.jobs, outbox=self.signals.outbox)


@dataclass(frozen=True)
class Gateway:
    """The gateway pieces of one process, over a Runtime; they hold no resources of their own."""

    queue: TurnQueue
    outbox: Outbox
    access: AccessControl
    pipeline: InboundPipeline


@contextlib.asynccontextmanager
async def open_runtime(
    home: Home, settings: Settings, *, client: ClosableLLMClient | None = None
) -> AsyncIterator[Runtime]:
    """Open state.db, memory, skills, the model client and the turn loop for ``home``.

    ``client`` replaces the configured model (benchmarks use a zero-latency scripted one).
    """
    home.ensure()
    await asyncio.to_thread(ensure_soul, home.root, settings.prompt.soul_file)
    semantic = await asyncio.to_thread(load_embedder, settings.search.semantic)
    async with contextlib.AsyncExitStack() as stack:
        storage = await stack.enter_async_context(
            open_storage(
                home.root,
                settings.storage,
                facts_file=settings.memory.provider.local.db_path,
                embedder=semantic.embedder,
            )
        )
        state = storage.agent
        model = await stack.enter_async_context(client or build_client(settings.model))
        auxiliary = await _auxiliary_client(stack, settings, model)
        # The offline model cannot summarise; search results then show the excerpts themselves.
        summaries = None if isinstance(auxiliary, OfflineClient) else auxiliary
        search = SessionSearch(
            storage.search,
            settings.search,
            summary_client=summaries,
            embedder=semantic.embedder,
            semantic_note=semantic.reason,
        )
        providers = await stack.enter_async_context(
            build_manager(
                settings.memory.provider,
                home=home.root,
                extractor=auxiliary,
                facts=storage.facts,
                recall=SessionSearch(storage.search, settings.search, embedder=semantic.embedder),
            )
        )
        audit = MirroringAuditSink(state, providers)
        memory = MemoryStores(home.root, settings.memory, audit=audit, documents=storage.documents)
        skills = SkillStore(home.root, texts=storage.skills)
        registry = builtin_registry(
            memory=memory, skills=skills, output_budget=settings.agent.tool_output_chars
        )
        registry.register(session_search_tool(search))
        toolbox = Toolbox(registry)
        prompts = SegmentPrompts(
            home=home.root,
            settings=settings.prompt,
            state=state,
            memory=memory,
            skills=skills,
            model=settings.model.model,
            tool_names=toolbox.names(),
        )
        compressor = Compressor(
            state=state,
            memory=memory,
            client=model,
            context_window=settings.model.context_window,
            settings=settings.compression,
            summariser=auxiliary,
            hooks=providers,
        )
        agent = TurnRunner(
            state=state,
            client=model,
            prompts=prompts,
            toolbox=toolbox,
            settings=settings.agent,
            recall=providers,
            compressor=compressor,
            observer=providers,
        )
        yield Runtime(home, settings, memory, skills, model, agent, providers, search, storage)


async def _auxiliary_client(
    stack: contextlib.AsyncExitStack, settings: Settings, main: ClosableLLMClient
) -> ClosableLLMClient:
    """The model for summaries and fact extraction: ``model.auxiliary`` when configured, else the main one."""
    if settings.model.auxiliary is None:
        return main
    return await stack.enter_async_context(build_client(settings.model.auxiliary))


def build_gateway(runtime: Runtime, *, count_inbound: Callable[[str, str], None] | None = None) -> Gateway:
    """The inbound pipeline with H10's access policy and rate limiter, the queue and the outbox."""
    settings = runtime.settings
    queue = TurnQueue(
        runtime.storage.queue,
        runtime.signals,
        BusyPolicy.named(settings.queue.busy_policy),
        settings.sessions.idle_after_s,
        on_conversation_end=runtime.providers.conversation_ended,
    )
    outbox = Outbox(runtime.storage.outbox, runtime.signals)
    access = AccessControl(settings.access, runtime.storage.identity, runtime.storage.pairing)

    async def link(call: CommandCall) -> str:
        return await access.accounts.handle_link(call.message, call.argument)

    services = command_services(runtime, queue, link=link)
    pipeline = InboundPipeline(
        queue=queue,
        outbox=outbox,
        access=access,
        limiter=RateLimiter(settings.rate_limit),
        commands=BuiltinCommands(services).table,
        sessions=settings.sessions,
        observer=count_inbound,
        conversations=runtime.storage.agent,
    )
    return Gateway(queue, outbox, access, pipeline)


def command_services(
    runtime: Runtime, queue: TurnQueue, *, link: LinkHandler | None = None
) -> CommandServices:
    """What the built-in commands act on; without ``link`` /link says it is not available (the terminal)."""

    async def compress(actor: Actor) -> str:
        outcome = await runtime.agent.force_compress(actor)
        if outcome.notice:
            return outcome.notice
        if outcome.status.value == "compressed":
            return f"Compressed: {outcome.messages_before} messages became {outcome.messages_after}."
        return f"Not compressed ({outcome.reason or outcome.status.value})."

    return CommandServices(
        state=runtime.storage.agent,
        queue=queue,
        memory=runtime.memory,
        model_name=runtime.settings.model.model,
        link=link,
        compress=compress,
        memory_health=lambda: _memory_health(runtime),
        conversation_ended=runtime.providers.conversation_ended,
    )


def worker_pool(runtime: Runtime, agent: TurnAgent | None = None) -> WorkerPool:
    """The worker pool over ``runtime``'s turn loop (or ``agent`` wrapping it, e.g. for streaming)."""
    return WorkerPool(
        queue=runtime.storage.queue,
        agent=agent or runtime.agent,
        signals=runtime.signals,
        settings=runtime.settings.queue,
    )


def configured_adapters(settings: Settings) -> dict[str, Adapter]:
    """The platform adapters enabled in ``adapters.<name>``; a missing token or SDK is one clear error."""
    return build_adapters(settings.adapters)


def supervised(adapters: Mapping[str, Adapter], options: Mapping[str, AdapterSettings]) -> dict[str, Adapter]:
    """Each adapter with its start retried while its platform is away and a dead connection restarted."""
    return {
        name: SupervisedAdapter(
            adapter,
            initial_s=options[name].start_retry_initial_s,
            max_s=options[name].start_retry_max_s,
            restart_after_s=options[name].restart_after_s,
        )
        for name, adapter in adapters.items()
    }


def streaming_agent(
    runtime: Runtime,
    adapters: Mapping[str, Adapter],
    delivery: DeliveryLoop,
    streams: StreamRegistry,
    web: BrowserChat | None = None,
    live: Mapping[str, LiveChannel] | None = None,
) -> StreamingAgent:
    """The turn loop with streamed replies on the adapters configured with ``streaming: true``, always on
    the web chat ``web`` (with its activity: thinking, the tool in use), and turns of the ``live`` channels
    (the API) followed by the requests waiting on them."""
    configured = runtime.settings.adapters
    streaming = {name for name, options in configured.items() if options.enabled and options.streaming}
    intervals = {name: options.streaming_interval_s for name, options in configured.items()}
    if web is not None:
        adapters, streaming = {**adapters, web.name: web}, {*streaming, web.name}
        intervals[web.name] = STREAM_INTERVAL_S
    return StreamingAgent(
        runtime.agent,
        queue=runtime.storage.queue,
        adapters=adapters,
        streaming=streaming,
        budgets=delivery.budgets,
        registry=streams,
        interval_s=intervals,
        live=live,
        activity={web.name: web} if web is not None else None,
    )


def web_people(runtime: Runtime) -> PersonServices:
    """What the web chat's person may read and change of their own (conversations, search, memory)."""
    storage = runtime.storage
    return PersonServices(
        platform="web",
        chats=storage.chats,
        identity=storage.identity,
        memory=runtime.memory,
        search=runtime.search,
        queue=storage.queue,
        conversation_ended=runtime.providers.conversation_ended,
    )


async def serve(home: Home, settings: Settings, host: str, port: int) -> None:
    """Run HTTP, adapters, delivery and an in-process worker pool until a stop signal."""
    configure_logging(settings.log, secrets=settings.secret_values())
    for note in startup_notes(settings):
        _LOG.log(logging.WARNING if note.warning else logging.INFO, note.text)
    stop = _stop_on_signals()
    async with open_runtime(home, settings) as runtime, contextlib.AsyncExitStack() as stack:
        metrics = Metrics(runtime.storage.admin, store_stats=runtime.storage.stats)
        if settings.memory.provider.name != "none":
            providers = runtime.providers
            metrics.watch_provider(settings.memory.provider.name, lambda: not providers.health().degraded)
        gateway = build_gateway(runtime, count_inbound=metrics.count_inbound)
        stack.push_async_callback(gateway.pipeline.drain)  # last out: slow commands finish or are cancelled
        web, api = BrowserChat(), ApiChannel()
        client_key = ClientKey.for_home(home.root)  # cookies and API tokens become account ids
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
            )
        )
        # Only this in-process pool streams: it runs beside the adapters; worker processes deliver normally.
        agent = streaming_agent(runtime, platforms, delivery, streams, web, live={api.name: api})
        pool = await stack.enter_async_context(worker_pool(runtime, agent))
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
                settings=settings.admin,
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
    async with open_runtime(home, settings) as runtime, runtime.wakeups(), worker_pool(runtime) as pool:
        _LOG.info("worker %s ready (home %s)", pool.holder, home.root)
        print(f"mnemogate worker {pool.holder} ready (home {home.root})", flush=True)
        await stop.wait()
        _LOG.info("worker %s stopping: draining %d turn(s)", pool.holder, pool.in_flight)


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


def _memory_health(runtime: Runtime) -> str:
    """One line for /status: the built-in memory and, when configured, the external provider's state."""
    name = runtime.settings.memory.provider.name
    if name == "none":
        return "built-in"
    return f"built-in + {name} ({runtime.providers.health().state.value})"


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
