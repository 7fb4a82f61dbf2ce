"""The composition root: builds every component from settings (``open_runtime`` enters the shared ones on
one AsyncExitStack, so shutdown is the reverse of start-up by construction); ``gateway.serving`` runs
``serve`` and ``worker`` on them until a stop signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

from agent_core.actor import Actor
from agent_core.agent import SegmentPrompts, Toolbox, TurnRunner
from agent_core.compression import Compressor
from agent_core.llm import ClosableLLMClient, OfflineClient, build_client
from agent_core.memory import MemoryStores
from agent_core.metering import UsageMeter, UsageRecorder
from agent_core.prompt import ensure_soul
from agent_core.providers import MemoryManager, MirroringAuditSink, build_manager
from agent_core.search import SessionSearch, session_search_tool
from agent_core.search.embedding import load_embedder
from agent_core.skills import SkillStore
from agent_core.tools import builtin_registry
from gateway.access import AccessControl, RateLimiter
from gateway.adapter_supervisor import SupervisedAdapter
from gateway.adapters_config import build_adapters
from gateway.budgets import BudgetPolicy
from gateway.config import Home, Settings
from gateway.contracts import Adapter
from gateway.delivery import (
    AdapterSettings,
    DeliveryLoop,
    LiveChannel,
    Outbox,
    StreamingAgent,
    StreamRegistry,
)
from gateway.http.readiness import Readiness, search_probe, state_probe
from gateway.inbound import BuiltinCommands, CommandCall, CommandServices, InboundPipeline, LinkHandler
from gateway.queue import BusyPolicy, Signals, TurnQueue, WorkerPool
from gateway.queue.turn_lane import TurnAgent
from gateway.schedules import Clock, ScheduleBook, ScheduleCommands, schedule_tool
from gateway.schedules.deployment import schedule_book
from gateway.storage import Storage, open_storage
from gateway.usage import UsageCalendar, usage_zone
from gateway.usage.personal import PersonalUsage
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
    schedules: ScheduleBook | None = None
    """Reminders and scheduled turns (None when ``schedules.enabled`` is false)."""

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
    home: Home, settings: Settings, *, client: ClosableLLMClient | None = None, clock: Clock | None = None
) -> AsyncIterator[Runtime]:
    """Open state.db, memory, skills, the model client and the turn loop for ``home``.

    ``client`` replaces the configured model (benchmarks use a zero-latency scripted one); ``clock``
    replaces the storage's clock for schedules (tests move a ``ManualClock``).
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
        meter = UsageMeter(settings.usage.price_table(settings.model))
        usage = UsageRecorder(state, meter)
        search = SessionSearch(
            storage.search,
            settings.search,
            summary_client=summaries,
            embedder=semantic.embedder,
            semantic_note=semantic.reason,
            usage=usage,
        )
        providers = await stack.enter_async_context(
            build_manager(
                settings.memory.provider,
                home=home.root,
                extractor=auxiliary,
                facts=storage.facts,
                recall=SessionSearch(storage.search, settings.search, embedder=semantic.embedder),
                usage=usage,
            )
        )
        audit = MirroringAuditSink(state, providers)
        memory = MemoryStores(home.root, settings.memory, audit=audit, documents=storage.documents)
        skills = SkillStore(home.root, texts=storage.skills)
        registry = builtin_registry(
            memory=memory, skills=skills, output_budget=settings.agent.tool_output_chars
        )
        registry.register(session_search_tool(search))
        signals = Signals()
        enabled = settings.schedules.enabled
        schedules = schedule_book(settings, storage, signals, clock=clock) if enabled else None
        if schedules is not None:
            registry.register(schedule_tool(schedules))
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
            meter=meter,
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
            meter=meter,
        )
        yield Runtime(
            home, settings, memory, skills, model, agent, providers, search, storage, signals, schedules
        )


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
        more=ScheduleCommands(runtime.schedules).commands if runtime.schedules is not None else (),
        usage=PersonalUsage(runtime.storage.usage, UsageCalendar(usage_zone(runtime.settings))),
    )


def worker_pool(runtime: Runtime, agent: TurnAgent | None = None) -> WorkerPool:
    """The worker pool over ``runtime``'s turn loop (or ``agent`` wrapping it, e.g. for streaming)."""
    return WorkerPool(
        queue=runtime.storage.queue,
        agent=agent or runtime.agent,
        signals=runtime.signals,
        settings=runtime.settings.queue,
        budget=budget_gate(runtime.settings),
    )


def budget_gate(settings: Settings) -> BudgetPolicy | None:
    """The budget every claim asks (None when no limit is configured: claims skip budgets entirely)."""
    return BudgetPolicy(settings.budgets) if settings.budgets.enabled else None


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


def _memory_health(runtime: Runtime) -> str:
    """One line for /status: the built-in memory and, when configured, the external provider's state."""
    name = runtime.settings.memory.provider.name
    if name == "none":
        return "built-in"
    return f"built-in + {name} ({runtime.providers.health().state.value})"
