"""Who pays for a compression: the turn's own calls, the memory flush and the summary are each logged against
the segment of the turn that caused them, with their model, their kind and their price."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.agent import TurnFinished
from agent_core.compression import CompressionStatus
from agent_core.llm import LLMRequest, ScriptedClient, ScriptStep, UsageEvent
from gateway.storage.sqlite.usage_reads import SqliteUsageReads
from gateway.storage.usage_reads import UsageGroup, UsageQuery

from .harness import ChattyModel, compressing_agent, outcomes

TURN_USAGE = UsageEvent(input_tokens=1_000, output_tokens=100)
SUMMARY_USAGE = UsageEvent(input_tokens=2_000, output_tokens=200)


class MeteredModel(ChattyModel):
    """The chatty main model, reporting its tokens on every call (turn steps and flushes alike)."""

    def __call__(self, request: LLMRequest) -> ScriptStep:
        return ScriptStep((*super().__call__(request).events, TURN_USAGE))


async def test_turn_flush_and_summary_calls_are_logged_with_their_kind_model_and_price(home: Path) -> None:
    client = ScriptedClient(default=MeteredModel(), name="anthropic:claude-sonnet-4-5")
    summary = ScriptStep.reply("## Goal\nshort", usage=SUMMARY_USAGE)
    summariser = ScriptedClient(default=summary, name="openai:gpt-4o-mini")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        events = await agent.say(conversation, "one more question about cats")
        assert isinstance(events[-1], TurnFinished)
        (compressed,) = [o for o in outcomes(events) if o.status is CompressionStatus.COMPRESSED]
        reads = SqliteUsageReads(agent.state)
        by_kind = await reads.usage_report(UsageQuery(since=0, group=UsageGroup.KIND))
        calls = {line.key: line for line in by_kind.lines}
        assert set(calls) == {"turn", "flush", "compression"}
        assert calls["turn"].calls == 1 and calls["flush"].calls == 1 and calls["compression"].calls == 1
        # Sonnet 4.5: $3 in / $15 out per million; gpt-4o-mini: $0.15 in / $0.60 out per million.
        assert calls["turn"].cost_usd == pytest.approx((1_000 * 3 + 100 * 15) / 1e6)
        assert calls["compression"].cost_usd == pytest.approx((2_000 * 0.15 + 200 * 0.6) / 1e6)
        by_model = await reads.usage_report(UsageQuery(since=0, group=UsageGroup.MODEL))
        assert {line.key: line.calls for line in by_model.lines} == {"claude-sonnet-4-5": 2, "gpt-4o-mini": 1}
        by_person = await reads.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
        assert [(line.key, line.calls, line.unpriced_calls) for line in by_person.lines] == [("ada", 3, 0)]
        # The flush and the summary are charged to the segment they compressed; the reply to the new tip.
        parent = await agent.state.get_segment(compressed.parent_segment_id)
        assert parent is not None and parent.usage.input_tokens == 1_000 + 2_000
