"""When compression fires, how prompt size is measured, and what the person is told about an outcome."""

from __future__ import annotations

from pathlib import Path

from agent_core.compression import (
    CompressionOutcome,
    CompressionSettings,
    CompressionStatus,
    CompressionTrigger,
    PromptGauge,
    message_tokens,
    request_tokens,
)
from agent_core.llm import ChatMessage, LLMRequest, ScriptedClient, ScriptStep, ToolSpec, UsageEvent

from .harness import ChattyModel, compressing_agent


def test_threshold_and_tail_budget_follow_the_context_window() -> None:
    settings = CompressionSettings()
    assert settings.threshold_tokens(200_000) == 100_000
    assert settings.tail_budget_tokens(200_000) == 20_000
    trigger = CompressionTrigger(settings, 10_000)
    assert not trigger.due(4_999) and trigger.due(5_000)
    assert not CompressionTrigger(CompressionSettings(enabled=False), 10_000).due(9_999)


def test_one_estimator_covers_system_messages_and_tool_schemas() -> None:
    spec = ToolSpec("memory", "d" * 400, {"type": "object"})
    bare = LLMRequest(system="s" * 400, messages=(ChatMessage("user", "u" * 400),))
    with_tools = LLMRequest(system=bare.system, messages=bare.messages, tools=(spec,))
    assert request_tokens(bare) == 100 + message_tokens(bare.messages[0])
    assert request_tokens(with_tools) > request_tokens(bare) + 100


def test_the_gauge_prefers_the_providers_count_and_estimates_only_what_was_added() -> None:
    first = LLMRequest(system="s" * 40_000, messages=(ChatMessage("user", "hi"),))
    gauge = PromptGauge()
    assert gauge.tokens(first) == request_tokens(first)
    gauge.observe(
        UsageEvent(input_tokens=100, cache_read_tokens=5_000, cache_write_tokens=20).prompt_tokens, first
    )
    added = ChatMessage("assistant", "x" * 400)
    second = LLMRequest(system=first.system, messages=(*first.messages, added))
    assert gauge.tokens(second) == 5_120 + message_tokens(added)
    gauge.observe(0, second)  # a provider that reports nothing falls back to the estimate
    assert gauge.tokens(second) == request_tokens(second)


async def test_compression_model_calls_are_charged_to_the_compressed_segment(home: Path) -> None:
    usage = UsageEvent(input_tokens=700, output_tokens=90)
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=ScriptStep.reply("## Goal\nshort", usage=usage), name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        parent = await agent.state.get_segment(outcome.parent_segment_id)
        assert parent is not None
        assert (parent.usage.input_tokens, parent.usage.output_tokens) == (700, 90)
        assert outcome.describe().startswith(f"Compacted the conversation: {outcome.messages_before} → ")


def test_outcomes_read_as_one_plain_line() -> None:
    base = {"conversation_id": "cv", "segment_id": "sg", "parent_segment_id": "sg"}
    skipped = CompressionOutcome(
        CompressionStatus.SKIPPED, reason="too little conversation to compress", **base
    )
    assert skipped.describe() == "Nothing was compacted (too little conversation to compress)."
    failed = CompressionOutcome(CompressionStatus.ABORTED, reason="bad key", notice="Key rejected.", **base)
    assert failed.describe() == "Key rejected."
    assert not failed.switched
    assert CompressionOutcome(CompressionStatus.LOST_RACE, **base).switched
