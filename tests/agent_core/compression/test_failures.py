"""Summariser failures and cooldowns, as a person sees them: one notice and no change, or a fallback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from agent_core.agent import TurnFinished
from agent_core.compression import BANNER, CompressionSettings, CompressionStatus, SummarySource
from agent_core.llm import (
    LLMAuthError,
    LLMEvent,
    LLMQuotaError,
    LLMRequest,
    LLMServerError,
    ScriptedClient,
    ScriptStep,
)

from .harness import ChattyModel, FakeClock, banner_count, compressing_agent, outcomes


class HangingModel:
    """A summariser that never answers (a stalled provider connection)."""

    name = "hanging"

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        await asyncio.Event().wait()
        yield  # pragma: no cover - never reached; makes this an async generator


async def test_auth_failure_leaves_the_segment_unchanged_and_tells_the_person_once(home: Path) -> None:
    model = ChattyModel()
    client = ScriptedClient(default=model)
    summariser = ScriptedClient(default=ScriptStep.fail(LLMAuthError()), name="aux")
    clock = FakeClock()
    async with compressing_agent(home, client, summariser=summariser, clock=clock) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        before = await agent.tip_messages(conversation)

        events = await agent.say(conversation, "what did we say about cats?")
        (outcome,) = outcomes(events)
        assert outcome.status is CompressionStatus.ABORTED
        assert outcome.notice is not None and "couldn't compact" in outcome.notice
        assert "API key" in outcome.notice, "the notice says why"
        assert isinstance(events[-1], TurnFinished), "the person still gets an answer"
        after = await agent.tip_messages(conversation)
        assert len(await agent.state.lineage(conversation)) == 1
        assert [(m.id, m.content) for m in after[: len(before)]] == [(m.id, m.content) for m in before]
        assert [m.role for m in after[len(before) :]] == ["user", "assistant"]
        assert banner_count(after) == 0
        assert len(summariser.requests) == 1

        # The next turn is still over the threshold, but the cooldown stops a second attempt.
        events = await agent.say(conversation, "and dogs?")
        assert outcomes(events) == []
        assert len(summariser.requests) == 1
        assert len(model.flushes) == 1

        # Once the cooldown has passed it tries again — and does not repeat the notice.
        clock.now += CompressionSettings().cooldown_seconds + 1
        events = await agent.say(conversation, "and birds?")
        (again,) = outcomes(events)
        assert again.status is CompressionStatus.ABORTED
        assert again.notice is None, "the person is told once"
        assert len(summariser.requests) == 2


async def test_quota_failure_is_treated_like_auth(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=ScriptStep.fail(LLMQuotaError()), name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        assert outcome.status is CompressionStatus.ABORTED
        assert outcome.notice is not None and "credit" in outcome.notice
        assert len(await agent.state.lineage(conversation)) == 1


async def test_a_transient_summary_failure_compresses_with_the_fallback_summary(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=ScriptStep.fail(LLMServerError("provider answered 503")), name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        events = await agent.say(conversation, "summarise our chat so far")
        (outcome,) = outcomes(events)
        assert outcome.status is CompressionStatus.COMPRESSED
        assert outcome.summary_source is SummarySource.FALLBACK
        assert outcome.notice is not None and "basic automatic summary" in outcome.notice
        rows = await agent.tip_messages(conversation)
        (summary,) = [m for m in rows if (m.content or "").startswith(BANNER)]
        assert "summary model was unavailable" in (summary.content or "")
        assert "old question 2" in (summary.content or ""), "built from the compacted turns"
        assert rows[-2].content == "summarise our chat so far"
        assert isinstance(events[-1], TurnFinished)


async def test_a_hanging_summariser_is_cut_off_and_the_fallback_used(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    settings = CompressionSettings(summary_timeout_s=0.05)
    async with compressing_agent(home, client, summariser=HangingModel(), settings=settings) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await asyncio.wait_for(agent.runner.force_compress(agent.scope(conversation)), timeout=10)
        assert outcome.status is CompressionStatus.COMPRESSED
        assert outcome.summary_source is SummarySource.FALLBACK


async def test_a_summary_that_is_not_shorter_is_discarded_and_cools_down(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(
        default=ScriptStep.reply("## Goal\n" + "very long summary " * 3_000), name="aux"
    )
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        events = await agent.say(conversation, "go on")
        (outcome,) = outcomes(events)
        assert outcome.status is CompressionStatus.ABORTED
        assert outcome.reason == "summary not shorter"
        assert outcome.notice is None
        assert len(await agent.state.lineage(conversation)) == 1
        events = await agent.say(conversation, "go on again")
        assert outcomes(events) == []
        assert len(summariser.requests) == 1, "no second attempt on the next turn"


async def test_an_empty_summary_is_a_failure_not_an_empty_handoff(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=ScriptStep.reply("   "), name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        assert outcome.summary_source is SummarySource.FALLBACK
        rows = await agent.tip_messages(conversation)
        assert "old answer" in next(m.content or "" for m in rows if (m.content or "").startswith(BANNER))
