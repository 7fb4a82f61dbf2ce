"""Compression in the turn loop and through /compress: trigger, flush, hooks, the request after a switch."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_core.actor import Actor
from agent_core.agent import TurnFinished
from agent_core.compression import (
    BANNER,
    FLUSH_ACTOR,
    FLUSH_INSTRUCTION,
    CompressionSettings,
    CompressionStatus,
    request_tokens,
)
from agent_core.llm import (
    ChatMessage,
    LLMRequest,
    ScriptedClient,
    ScriptStep,
    ToolCall,
    ToolCallEvent,
    UsageEvent,
)
from agent_core.storage import NewMessage

from .harness import ChattyModel, banner_count, compressing_agent, outcomes, summary_step


async def test_compress_command_ignores_the_threshold_but_not_the_minimum_size(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        tiny = await agent.conversation("test:dm:tiny")
        await agent.fill(tiny, exchanges=1, size=20)
        outcome = await agent.runner.force_compress(agent.scope(tiny))
        assert outcome.status is CompressionStatus.SKIPPED
        assert outcome.reason == "too little conversation to compress"
        assert summariser.requests == []

        short = await agent.conversation("test:dm:short")
        await agent.fill(short, exchanges=8, size=300)
        outcome = await agent.runner.force_compress(agent.scope(short))
        assert not agent.compressor.due(outcome.tokens_before), "far below the threshold"
        assert outcome.status is CompressionStatus.COMPRESSED
        assert outcome.messages_after < outcome.messages_before
        assert len(await agent.state.lineage(short)) == 2


async def test_provider_reported_prompt_tokens_trigger_compression_mid_turn(home: Path) -> None:
    big_usage = UsageEvent(input_tokens=1_000, cache_read_tokens=2_500, cache_write_tokens=600)
    client = ScriptedClient(
        [ScriptStep((ToolCallEvent(ToolCall("look", "skills_list", {})), big_usage))],
        default=ChattyModel(),
    )
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=4, size=800)
        events = await agent.say(conversation, "which skills do you have?")
        first = client.requests[0]
        assert not agent.compressor.due(request_tokens(first)), "the estimate alone stays below the threshold"
        (outcome,) = outcomes(events)
        assert outcome.status is CompressionStatus.COMPRESSED
        final = events[-1]
        assert isinstance(final, TurnFinished) and final.segment_id == outcome.segment_id
        tip = await agent.state.resolve_tip(conversation)
        after = client.requests[-1]
        assert after.system == tip.system_prompt, "the turn continues with the new segment's frozen prompt"
        assert banner_count_in(after.messages) == 1
        users = [m for m in after.messages if m.role == "user"]
        assert users[-1].content == "which skills do you have?", "the summary is never the newest user turn"
        assert [m.role for m in after.messages[-3:]] == ["user", "assistant", "tool"], "active exchange kept"


def banner_count_in(messages: Sequence[ChatMessage]) -> int:
    return sum(m.content.count(BANNER) for m in messages)


async def test_the_flush_writes_only_this_persons_memory_and_leaves_no_trace_in_the_chat(home: Path) -> None:
    calls = (
        ToolCall("f1", "memory", {"action": "add", "target": "user", "content": "Ada prefers short answers"}),
        ToolCall("f2", "memory", {"action": "add", "target": "global", "content": "Everyone loves Ada"}),
        ToolCall("f3", "skill_manage", {"action": "delete", "name": "anything"}),
    )

    def model(request: LLMRequest) -> ScriptStep:
        if request.messages[-1].content == FLUSH_INSTRUCTION:
            return ScriptStep.tool_calls(*calls)
        return ScriptStep.reply("Sure.")

    client = ScriptedClient(default=model)
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        events = await agent.say(conversation, "hello again")
        (outcome,) = outcomes(events)
        assert outcome.flush is not None
        assert (outcome.flush.tool_calls, outcome.flush.saved) == (3, 1)
        assert (await agent.memory.entries(person_id="ada", target="user")).entries == (
            "Ada prefers short answers",
        )
        assert (await agent.memory.entries(person_id="ada", target="global")).entries == ()
        tip = await agent.state.resolve_tip(conversation)
        assert "Ada prefers short answers" in (tip.system_prompt or "")
        for message in await agent.state.conversation_messages(conversation):
            assert FLUSH_INSTRUCTION not in (message.content or "")
            assert message.tool_call_id not in ("f1", "f2", "f3")
        actors = [record.actor for record in await agent.state.memory_audit("ada")]
        assert actors == [FLUSH_ACTOR]


class RecordingHooks:
    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.switches: list[tuple[str, str]] = []

    async def on_pre_compress(self, caller: Actor, messages: Sequence[ChatMessage]) -> str | None:
        if self.fail:
            raise RuntimeError("provider down")
        return f"{caller.person_id} has a cat called Miso ({len(messages)} messages seen)"

    async def on_compressed(self, caller: Actor, parent_segment_id: str, segment_id: str) -> None:
        if self.fail:
            raise RuntimeError("provider down")
        self.switches.append((parent_segment_id, segment_id))


async def test_provider_hooks_feed_the_summary_and_hear_about_the_switch(home: Path) -> None:
    hooks = RecordingHooks()
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(home, client, summariser=summariser, hooks=hooks) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        assert (
            "<memory-provider-context>\nada has a cat called Miso"
            in summariser.requests[0].messages[0].content
        )
        assert hooks.switches == [(outcome.parent_segment_id, outcome.segment_id)]


async def test_a_failing_provider_never_blocks_compression(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(
        home, client, summariser=summariser, hooks=RecordingHooks(fail=True)
    ) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        assert outcome.status is CompressionStatus.COMPRESSED
        assert "memory-provider-context" not in summariser.requests[0].messages[0].content


async def test_recall_bytes_survive_on_unchanged_rows_only(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=summary_step, name="aux")
    settings = CompressionSettings(min_tail_messages=5)
    async with compressing_agent(home, client, summariser=summariser, settings=settings) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        tip = await agent.state.resolve_tip(conversation)
        fenced = "look it up\n\n<memory-context>\nrecalled\n</memory-context>"
        long_output = "first line of output\n" + "z" * 4_000
        await agent.state.append_messages(
            tip.id,
            [
                NewMessage(role="user", content="look it up", api_content=fenced, author="ada"),
                NewMessage(
                    role="assistant", content="", tool_calls=[{"id": "t1", "name": "web", "arguments": {}}]
                ),
                NewMessage(
                    role="tool", content=long_output, tool_call_id="t1", tool_name="web", api_content="x"
                ),
                NewMessage(role="assistant", content="Found it."),
                NewMessage(role="user", content="thanks", author="ada"),
            ],
        )
        outcome = await agent.runner.force_compress(agent.scope(conversation))
        assert outcome.status is CompressionStatus.COMPRESSED
        rows = await agent.tip_messages(conversation)
        kept = {m.content: m for m in rows}
        assert kept["look it up"].api_content == fenced, "an unchanged row replays its exact bytes"
        (note,) = [m for m in rows if m.role == "tool"]
        assert note.content is not None and note.content.startswith("[tool web output, 4021 chars")
        assert note.api_content is None, "a shortened row must not replay the old bytes"


async def test_disabled_compression_never_fires_on_its_own(home: Path) -> None:
    client = ScriptedClient(default=ChattyModel())
    summariser = ScriptedClient(default=summary_step, name="aux")
    settings = CompressionSettings(enabled=False)
    async with compressing_agent(home, client, summariser=summariser, settings=settings) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=10)
        assert outcomes(await agent.say(conversation, "hi")) == []
        assert (
            await agent.runner.force_compress(agent.scope(conversation))
        ).status is CompressionStatus.COMPRESSED
        assert banner_count(await agent.tip_messages(conversation)) == 1
