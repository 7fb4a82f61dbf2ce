"""Compression orchestration: cooldown → plan → memory flush → summary → atomic switch to a child segment.

Invariants (DESIGN §7, §12.3–4): nothing is written to the conversation unless the switch happens, and the
switch is ONE ``CompressionChain.compress`` transaction that a racing process cannot fork (the loser is told
the winner's tip), carrying over every parent message the plan did not read (named by id: no ordering of
ids is assumed); the child's system prompt is rebuilt from disk after the flush, so memories saved by the
flush are in it; an auth/quota failure of the summariser leaves the segment unchanged and produces one
notice per conversation until a compression succeeds; a failed or ineffective attempt starts a cooldown.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from agent_core.actor import Actor
from agent_core.llm import ChatMessage, LLMClient, ToolSpec
from agent_core.memory import MemoryStores
from agent_core.metering import UsageMeter
from agent_core.storage import (
    AgentStorage,
    AlreadyCompressed,
    CompressionCooldown,
    MessageRecord,
    NewSegment,
    SegmentRecord,
    TokenUsage,
    UsageKind,
)

from .cooldown import cooldown_blocks
from .errors import SummaryUnavailableError
from .estimate import messages_tokens, text_tokens, tools_tokens
from .fallback import fallback_summary
from .flush import MemoryFlush
from .hooks import CompressionHooks, announce_switch, provider_context
from .outcome import CompressionOutcome, CompressionStatus, FlushReport, SummarySource
from .plan import CompressionPlan, plan_compression
from .rows import Row
from .settings import CompressionSettings
from .summary import generate_summary, summary_request, wrap
from .trigger import CompressionTrigger

_LOG = logging.getLogger("mnemogate.compression")

PERMANENT_FAILURE_NOTICE = (
    "I couldn't compact this long conversation because the summary model is unavailable ({reason}). "
    "Nothing was lost, but replies may start failing as the conversation grows; an operator needs to fix "
    "the model account, or send /new to start a fresh conversation."
)
FALLBACK_NOTICE = (
    "Earlier messages were compacted with a basic automatic summary because the summary model failed "
    "({reason}); some details of older turns may be missing."
)


@dataclass(frozen=True)
class CompressionJob:
    """One request to compress a segment, from the turn loop or ``/compress``."""

    actor: Actor
    """Who the compression runs for: flush writes go to their memory, never anyone else's."""
    segment: SegmentRecord
    system: str
    """The segment's frozen system prompt (the flush reuses it, so the provider's prompt cache hits)."""
    rebuild_prompt: Callable[[], Awaitable[str]]
    """Builds the child's system prompt from disk (SOUL, context, skills, memory as it is now)."""
    tools: tuple[ToolSpec, ...] = field(default=())
    force: bool = False

    @property
    def conversation_id(self) -> str:
        return self.actor.conversation()


@dataclass(frozen=True)
class _Summary:
    body: str
    source: SummarySource
    notice: str | None = None


class Compressor:
    """Compresses conversations of one model; shared by every turn of a process (holds no per-turn state)."""

    def __init__(
        self,
        *,
        state: AgentStorage,
        memory: MemoryStores,
        client: LLMClient,
        context_window: int,
        settings: CompressionSettings | None = None,
        summariser: LLMClient | None = None,
        hooks: CompressionHooks | None = None,
        clock: Callable[[], float] = time.time,
        meter: UsageMeter | None = None,
    ) -> None:
        """``client`` is the main model (it runs the flush); ``summariser`` defaults to it; ``meter`` prices
        their calls for the usage log (default: the built-in price table)."""
        self.settings = settings or CompressionSettings()
        self.trigger = CompressionTrigger(self.settings, context_window)
        self._state = state
        self._summariser = summariser or client
        self._flush_client = client
        self._meter = meter or UsageMeter()
        self._flush = MemoryFlush(client, memory, self.settings)
        self._hooks = hooks
        self._clock = clock

    def due(self, prompt_tokens: int) -> bool:
        return self.trigger.due(prompt_tokens)

    async def compress(self, job: CompressionJob) -> CompressionOutcome:
        """Try to compress ``job.segment``; every result, failures included, comes back as an outcome."""
        segment, actor = job.segment, job.actor
        current = await self._state.tip_history(segment.id)
        if current.segment.id != segment.id:
            return self._outcome(
                job, CompressionStatus.LOST_RACE, "already compressed", segment_id=current.segment.id
            )
        records = list(current.messages)
        history = _history(records)
        before = text_tokens(job.system) + messages_tokens(history) + tools_tokens(job.tools)
        cooldown = await self._state.compression_cooldown(job.conversation_id)
        if not job.force:
            if not self.settings.enabled:
                return self._outcome(job, CompressionStatus.SKIPPED, "disabled", tokens=before)
            if cooldown is not None and cooldown_blocks(cooldown, segment.id, records, self._clock()):
                return self._outcome(job, CompressionStatus.SKIPPED, "cooling down", tokens=before)
        plan = plan_compression(
            records,
            settings=self.settings,
            context_window=self.trigger.context_window,
            minimal_tail=job.force,
        )
        if plan is None:
            return self._outcome(
                job, CompressionStatus.SKIPPED, "too little conversation to compress", before
            )
        flush = await self._run_flush(job, history)
        try:
            summary = await self._summarise(plan, actor, history, segment.id)
        except SummaryUnavailableError as exc:
            notify = cooldown is None or not cooldown.notified or cooldown.segment_id != segment.id
            await self._cool_down(job, records, "permanent", exc.reason, notified=True)
            notice = PERMANENT_FAILURE_NOTICE.format(reason=exc.reason) if notify else None
            return self._outcome(
                job, CompressionStatus.ABORTED, exc.reason, before, notice=notice, flush=flush
            )
        if text_tokens(wrap(summary.body)) >= plan.replaced_tokens():
            await self._cool_down(job, records, "ineffective", "the summary was not shorter than the turns")
            return self._outcome(job, CompressionStatus.ABORTED, "summary not shorter", before, flush=flush)
        return await self._switch(job, plan, summary, records, before, flush)

    async def _run_flush(self, job: CompressionJob, history: Sequence[ChatMessage]) -> FlushReport | None:
        if not self.settings.flush_enabled:
            return None
        report = await self._flush.run(system=job.system, history=history, actor=job.actor)
        await self._account(job.segment.id, self._flush_client, UsageKind.FLUSH, report.usage)
        return report

    async def _account(self, segment_id: str, client: LLMClient, kind: UsageKind, usage: TokenUsage) -> None:
        """Charge compression's own model calls to the segment they compressed (cost stays visible), as
        ``kind`` calls of ``client``'s model."""
        if usage != TokenUsage():
            await self._state.add_usage(segment_id, self._meter.call(client.name, kind, usage))

    async def _summarise(
        self,
        plan: CompressionPlan,
        actor: Actor,
        history: Sequence[ChatMessage],
        segment_id: str,
    ) -> _Summary:
        """The model's summary, or the deterministic fallback; raises only for a permanent failure."""
        settings = self.settings
        context = await provider_context(
            self._hooks,
            actor,
            history,
            timeout_s=settings.hook_timeout_s,
            max_chars=settings.provider_context_chars,
        )
        request = summary_request(
            plan.middle,
            previous=plan.previous_summary,
            provider_context=context,
            max_tokens=settings.summary_max_tokens,
            message_cap=settings.summary_message_chars,
        )
        try:
            body, usage = await generate_summary(self._summariser, request, settings.summary_timeout_s)
        except SummaryUnavailableError as exc:
            if exc.permanent:
                raise
            _LOG.warning("summary failed (%s); using the deterministic fallback", exc.reason)
            body = fallback_summary(
                plan.middle,
                previous=plan.previous_summary,
                reason=exc.reason,
                max_chars=settings.fallback_max_chars,
            )
            return _Summary(body, SummarySource.FALLBACK, FALLBACK_NOTICE.format(reason=exc.reason))
        await self._account(segment_id, self._summariser, UsageKind.COMPRESSION, usage)
        return _Summary(body, SummarySource.MODEL)

    async def _switch(
        self,
        job: CompressionJob,
        plan: CompressionPlan,
        summary: _Summary,
        records: Sequence[MessageRecord],
        before: int,
        flush: FlushReport | None,
    ) -> CompressionOutcome:
        segment = job.segment
        messages = plan.messages(summary.body)
        prompt = await job.rebuild_prompt()
        child = NewSegment(system_prompt=prompt, model=segment.model, title=segment.title)
        # Messages stored while the summary was written (a /compress racing the chat) move along too:
        # the chain carries over every parent message whose id is not among those the plan read.
        seen = frozenset(record.id for record in records)
        result = await self._state.compress(segment.id, child, messages, seen=seen)
        if isinstance(result, AlreadyCompressed):
            return self._outcome(
                job,
                CompressionStatus.LOST_RACE,
                "another process compressed first",
                before,
                segment_id=result.tip_session_id,
                flush=flush,
            )
        await self._state.clear_compression_cooldown(job.conversation_id)
        after_records = await self._state.segment_messages(result.child.id)
        after = text_tokens(prompt) + messages_tokens(_history(after_records)) + tools_tokens(job.tools)
        if self.trigger.due(after):
            # Still over the threshold: compressing again next turn would only churn.
            await self._cool_down(
                job, after_records, "ineffective", "still over the threshold", result.child.id
            )
        await announce_switch(
            self._hooks, job.actor, segment.id, result.child.id, timeout_s=self.settings.hook_timeout_s
        )
        _LOG.info(
            "compressed %s: %d -> %d messages, ~%d -> ~%d tokens (%s summary)",
            job.conversation_id,
            len(records),
            len(messages),
            before,
            after,
            summary.source.value,
        )
        return CompressionOutcome(
            status=CompressionStatus.COMPRESSED,
            conversation_id=job.conversation_id,
            segment_id=result.child.id,
            parent_segment_id=segment.id,
            reason="compressed",
            notice=summary.notice,
            tokens_before=before,
            tokens_after=after,
            messages_before=len(records),
            messages_after=len(messages),
            summary_source=summary.source,
            flush=flush,
        )

    async def _cool_down(
        self,
        job: CompressionJob,
        records: Sequence[MessageRecord],
        kind: str,
        reason: str,
        segment_id: str | None = None,
        *,
        notified: bool = False,
    ) -> None:
        settings = self.settings
        cooldown = CompressionCooldown(
            segment_id=segment_id or job.segment.id,
            until=self._clock() + settings.cooldown_seconds,
            after_message_id=max((r.id for r in records), default=0),
            turns=settings.cooldown_turns,
            kind=kind,
            reason=reason,
            notified=notified,
        )
        await self._state.put_compression_cooldown(job.conversation_id, cooldown)

    def _outcome(
        self,
        job: CompressionJob,
        status: CompressionStatus,
        reason: str,
        tokens: int = 0,
        *,
        segment_id: str | None = None,
        notice: str | None = None,
        flush: FlushReport | None = None,
    ) -> CompressionOutcome:
        return CompressionOutcome(
            status=status,
            conversation_id=job.conversation_id,
            segment_id=segment_id or job.segment.id,
            parent_segment_id=job.segment.id,
            reason=reason,
            notice=notice,
            tokens_before=tokens,
            tokens_after=tokens,
            flush=flush,
        )


def _history(records: Sequence[MessageRecord]) -> list[ChatMessage]:
    return [message for message in (Row.of(r).chat() for r in records) if message is not None]
