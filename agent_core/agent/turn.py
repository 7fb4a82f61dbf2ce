"""The turn loop: answer a conversation's pending user messages with the model and the tools.

Invariants (DESIGN §12): the segment's frozen system prompt is sent byte for byte on every call;
persisted rows hold only what was said and done (recall lives in the request view and ``api_content``);
each step's rows are written in one transaction as it happens, an assistant tool-call row together with
all of its results, so no tool_call is ever stored without its result; a model failure becomes a
persisted, clear error reply — never silence. With a compressor, the prompt size is checked before every
model call (provider-reported tokens of the previous call when known, else the one estimator); after a
compression the turn continues on the new tip with that segment's own frozen system prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from agent_core.actor import Actor
from agent_core.agent.events import ReplyDelta, ToolFinished, ToolStarted, TurnEvent, TurnFailed, TurnFinished
from agent_core.agent.fence import has_recall, with_recall
from agent_core.agent.prompts import SegmentPrompts
from agent_core.agent.recall import RecallSource, TurnObserver, screened_recall
from agent_core.agent.settings import AgentSettings
from agent_core.agent.toolbox import Toolbox
from agent_core.agent.transcript import assistant_row, pending_user_messages, request_view, tool_row
from agent_core.compression import (
    CompressionJob,
    CompressionOutcome,
    CompressionStatus,
    Compressor,
    PromptGauge,
)
from agent_core.llm import (
    ChatMessage,
    LLMClient,
    LLMError,
    LLMRequest,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
)
from agent_core.metering import UsageMeter
from agent_core.providers.scrubber import RecallScrubber
from agent_core.storage import (
    AgentStorage,
    MessageRecord,
    ModelCall,
    NewMessage,
    SegmentRecord,
    TokenUsage,
    UsageKind,
)

_LOG = logging.getLogger("mnemogate.agent")
_EMPTY_REPLY = "(The model returned an empty reply.)"

AgentEvent = TurnEvent | CompressionOutcome
"""What ``TurnRunner.run`` yields: the turn's events, plus a ``CompressionOutcome`` when it compressed."""


@dataclass
class _Step:
    text: str = ""
    reasoning: str = ""
    calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    usage: TokenUsage | None = None
    """The call's reported usage, stored with the step's rows (one write, not two)."""


class TurnRunner:
    """Runs turns for any conversation; holds no per-conversation state between turns."""

    def __init__(
        self,
        *,
        state: AgentStorage,
        client: LLMClient,
        prompts: SegmentPrompts,
        toolbox: Toolbox,
        settings: AgentSettings,
        recall: RecallSource | None = None,
        compressor: Compressor | None = None,
        observer: TurnObserver | None = None,
        meter: UsageMeter | None = None,
    ) -> None:
        """``meter`` prices each model call for the usage log (default: the built-in price table)."""
        self._state = state
        self._meter = meter or UsageMeter()
        self._client = client
        self._prompts = prompts
        self._toolbox = toolbox
        self._settings = settings
        self._recall = recall
        self._compressor = compressor
        self._observer = observer

    async def run(self, actor: Actor) -> AsyncIterator[AgentEvent]:
        """Answer the conversation's pending user messages; yields progress, then one final event."""
        segment, system, records = await self._open(actor)
        pending = pending_user_messages(records)
        if pending:
            records = await self._attach_recall(actor, records, pending[-1])
        history = list(request_view(records))
        toolbox = self._toolbox.for_turn(actor)
        gauge = PromptGauge()
        compressions = 0
        for iteration in range(self._settings.max_iterations):
            last_call = iteration == self._settings.max_iterations - 1
            tools = () if last_call else toolbox.specs()
            request = LLMRequest(system=system, messages=tuple(history), tools=tools)
            compressor = self._due_compressor(gauge.tokens(request), compressions)
            if compressor is not None:
                compressions += 1
                compression = await self._compress(
                    compressor, actor, segment, system, toolbox.specs(), force=False
                )
                if compression.status is not CompressionStatus.SKIPPED:
                    yield compression
                if compression.switched:
                    segment, system, records = await self._open(actor)
                    history = list(request_view(records))
                    gauge.reset()
                    request = LLMRequest(system=system, messages=tuple(history), tools=tools)
            step = _Step()
            try:
                async for event in self._call_model(request, segment, step):
                    yield event
            except LLMError as exc:
                yield await self._fail(segment, exc, self._step_call(step))
                return
            except (GeneratorExit, asyncio.CancelledError):
                # Cut mid-stream (/stop, an interrupt, a drain): the tokens were spent all the same.
                if step.usage is not None:
                    await asyncio.shield(self._state.add_usage(segment.id, self._priced(step.usage)))
                raise
            gauge.observe(step.prompt_tokens, request)
            if not step.calls or last_call:
                text = step.text or _EMPTY_REPLY
                (message_id,) = await self._persist(
                    segment,
                    [assistant_row(text, (), step.reasoning, self._client.name)],
                    self._step_call(step),
                )
                if self._observer is not None and pending:
                    user_text = "\n".join(m.content or "" for m in pending)
                    self._observer.observe_turn(actor, user_text, text)
                yield TurnFinished(text=text, message_id=message_id, segment_id=segment.id)
                return
            if step.usage is not None:
                # Tools may run long (and be stopped): the spent tokens are counted before they run.
                await self._state.add_usage(segment.id, self._priced(step.usage))
            results: list[tuple[ToolCall, str]] = []
            for call in step.calls:
                yield ToolStarted(name=call.name, call_id=call.id)
                outcome = await toolbox.call(call)
                results.append((call, outcome.content))
                yield ToolFinished(name=call.name, call_id=call.id, is_error=outcome.is_error)
            rows = [assistant_row(step.text, step.calls, step.reasoning, self._client.name)]
            rows += [tool_row(call, content) for call, content in results]
            await self._persist(segment, rows)
            history.append(ChatMessage(role="assistant", content=step.text, tool_calls=step.calls))
            history += [
                ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name)
                for call, content in results
            ]

    async def _call_model(
        self, request: LLMRequest, segment: SegmentRecord, step: _Step
    ) -> AsyncIterator[TurnEvent]:
        calls: list[ToolCall] = []
        scrubber = RecallScrubber()  # an echoed recall fence never reaches the user nor the stored reply
        async for event in self._client.stream(request):
            if isinstance(event, TextDelta):
                visible = scrubber.feed(event.text)
                if visible:
                    step.text += visible
                    yield ReplyDelta(visible)
            elif isinstance(event, ReasoningDelta):
                step.reasoning += event.text
            elif isinstance(event, ToolCallEvent):
                calls.append(event.call)
            elif isinstance(event, UsageEvent):
                step.prompt_tokens = event.prompt_tokens
                reported = TokenUsage(
                    input_tokens=event.input_tokens,
                    output_tokens=event.output_tokens,
                    cache_read_tokens=event.cache_read_tokens,
                    cache_write_tokens=event.cache_write_tokens,
                )
                step.usage = reported if step.usage is None else step.usage + reported
        tail = scrubber.flush()
        if tail:
            step.text += tail
            yield ReplyDelta(tail)
        step.calls = tuple(calls)

    async def force_compress(self, actor: Actor) -> CompressionOutcome:
        """``/compress``: compress the conversation now, ignoring the threshold and cooldowns.

        The minimum-size check still applies; the outcome says what happened and carries any notice.
        """
        segment, system, _ = await self._open(actor)
        if self._compressor is None:
            return CompressionOutcome(
                status=CompressionStatus.SKIPPED,
                conversation_id=actor.conversation(),
                segment_id=segment.id,
                parent_segment_id=segment.id,
                reason="compression is not configured",
            )
        tools = self._toolbox.for_turn(actor).specs()
        return await self._compress(self._compressor, actor, segment, system, tools, force=True)

    def _due_compressor(self, prompt_tokens: int, attempts: int) -> Compressor | None:
        """The compressor, if a prompt of ``prompt_tokens`` must be compressed before it is sent."""
        compressor = self._compressor
        if compressor is None or attempts >= compressor.settings.max_attempts_per_turn:
            return None
        return compressor if compressor.due(prompt_tokens) else None

    async def _compress(
        self,
        compressor: Compressor,
        actor: Actor,
        segment: SegmentRecord,
        system: str,
        tools: tuple[ToolSpec, ...],
        *,
        force: bool,
    ) -> CompressionOutcome:
        async def rebuild_prompt() -> str:
            return (await self._prompts.build(actor)).text

        job = CompressionJob(
            actor=actor,
            segment=segment,
            system=system,
            rebuild_prompt=rebuild_prompt,
            tools=tools,
            force=force,
        )
        return await compressor.compress(job)

    async def _open(self, actor: Actor) -> tuple[SegmentRecord, str, list[MessageRecord]]:
        """The conversation's tip, its frozen system prompt and its messages (tip and messages: one read)."""
        history = await self._state.tip_history(actor.conversation())
        system = await self._prompts.for_segment(history.segment, actor)
        return history.segment, system, list(history.messages)

    async def _attach_recall(
        self, actor: Actor, records: list[MessageRecord], current: MessageRecord
    ) -> list[MessageRecord]:
        """Fence provider recall onto the current user message's request bytes (stored as api_content).

        Those bytes may already hold the client's context (the API stores it on arrival); recall goes after
        it, once: a re-run of the turn finds it there and sends the same bytes again.
        """
        if self._recall is None or has_recall(current.api_content):
            return records
        recall = screened_recall(await self._recall.recall(actor, current.content or ""))
        if not recall:
            return records
        composed = with_recall(current.api_content or current.content or "", recall)
        await self._state.set_api_content(current.id, composed)
        return [replace(r, api_content=composed) if r.id == current.id else r for r in records]

    def _priced(self, usage: TokenUsage) -> ModelCall:
        """A step's usage as the usage log records it: the turn's model, kind ``turn``, priced."""
        return self._meter.call(self._client.name, UsageKind.TURN, usage)

    def _step_call(self, step: _Step) -> ModelCall | None:
        return None if step.usage is None else self._priced(step.usage)

    async def _fail(self, segment: SegmentRecord, exc: LLMError, usage: ModelCall | None) -> TurnFailed:
        _LOG.warning("model call failed: %s", exc)
        text = f"Sorry — I couldn't get an answer from the model ({exc}). Please try again in a moment."
        (message_id,) = await self._persist(segment, [assistant_row(text, (), "", "mnemogate")], usage)
        return TurnFailed(text=text, message_id=message_id, segment_id=segment.id, reason=type(exc).__name__)

    async def _persist(
        self, segment: SegmentRecord, rows: Sequence[NewMessage], usage: ModelCall | None = None
    ) -> list[int]:
        return await self._state.append_messages(segment.id, rows, usage)
