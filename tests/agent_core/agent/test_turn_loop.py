"""The turn loop as a user sees it: answers, tool steps, failures, and a transcript that stays valid."""

from __future__ import annotations

from pathlib import Path

from agent_core.actor import Actor
from agent_core.agent import AgentSettings, ReplyDelta, TurnFailed, TurnFinished
from agent_core.llm import (
    LLMServerError,
    ReasoningDelta,
    ScriptedClient,
    ScriptStep,
    TextDelta,
    ToolCall,
    UsageEvent,
)
from agent_core.storage import MessageRecord, NewMessage

from .harness import agent_harness


def assert_transcript_valid(messages: list[MessageRecord]) -> None:
    """Every tool_call has exactly one result right after its assistant row, and no result is orphaned."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            assert not open_calls, f"tool calls without results: {open_calls}"
            open_calls = {str(call["id"]) for call in message.tool_calls or ()}
        elif message.role == "tool":
            assert message.tool_call_id in open_calls, f"orphan tool result {message.tool_call_id}"
            open_calls.discard(str(message.tool_call_id))
        else:
            assert not open_calls, f"tool calls without results: {open_calls}"
    assert not open_calls


async def test_a_plain_question_gets_the_models_answer(home: Path) -> None:
    client = ScriptedClient([ScriptStep.reply("Hello Ada!", chunks=3)])
    async with agent_harness(home, client) as agent:
        conversation = await agent.conversation()
        events = await agent.say(conversation, "hi")
        assert "".join(e.text for e in events if isinstance(e, ReplyDelta)) == "Hello Ada!"
        final = events[-1]
        assert isinstance(final, TurnFinished)
        assert final.text == "Hello Ada!"
        roles = [(m.role, m.content) for m in await agent.messages(conversation)]
        assert roles == [("user", "hi"), ("assistant", "Hello Ada!")]


async def test_failing_and_unknown_tools_keep_the_transcript_valid(home: Path) -> None:
    client = ScriptedClient(
        [
            ScriptStep.tool_calls(
                ToolCall("c1", "memory", {"action": "remove", "target": "user", "old_text": "nothing here"}),
                ToolCall("c2", "teleport", {"to": "mars"}),
            ),
            ScriptStep.tool_call("memory", {"action": "add", "target": "user", "content": "Ada likes tea"}),
            ScriptStep.reply("Noted: you like tea."),
        ]
    )
    async with agent_harness(home, client) as agent:
        conversation = await agent.conversation()
        events = await agent.say(conversation, "remember I like tea")
        assert isinstance(events[-1], TurnFinished)
        assert events[-1].text == "Noted: you like tea."
        messages = await agent.messages(conversation)
        assert_transcript_valid(messages)
        results = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool"}
        assert "No entry matched" in results["c1"]
        assert "teleport" in results["c2"]
        # The model saw both error results before its next step.
        second_request = client.requests[1]
        tool_views = [m for m in second_request.messages if m.role == "tool"]
        assert [m.tool_call_id for m in tool_views] == ["c1", "c2"]
        view = await agent.memory.entries(person_id="ada", target="user")
        assert view.entries == ("Ada likes tea",)


async def test_a_model_that_always_fails_gets_a_clear_error_reply(home: Path) -> None:
    client = ScriptedClient(
        [], default=ScriptStep.fail(LLMServerError("the provider answered 500", status=500))
    )
    async with agent_harness(home, client) as agent:
        conversation = await agent.conversation()
        events = await agent.say(conversation, "hello?")
        final = events[-1]
        assert isinstance(final, TurnFailed)
        assert "couldn't get an answer" in final.text
        messages = await agent.messages(conversation)
        assert messages[-1].role == "assistant"
        assert messages[-1].content == final.text
        assert_transcript_valid(messages)
        # The next message is still answered once the model recovers.
        client.add(ScriptStep.reply("Back again."))
        events = await agent.say(conversation, "now?")
        assert isinstance(events[-1], TurnFinished)


async def test_thinking_never_reaches_the_reply(home: Path) -> None:
    client = ScriptedClient([ScriptStep((ReasoningDelta("2+2, carefully: 4"), TextDelta("Four.")))])
    async with agent_harness(home, client) as agent:
        conversation = await agent.conversation()
        events = await agent.say(conversation, "2+2?")
        final = events[-1]
        assert isinstance(final, TurnFinished)
        assert final.text == "Four."
        assert all("carefully" not in e.text for e in events if isinstance(e, ReplyDelta))
        stored = (await agent.messages(conversation))[-1]
        assert stored.content == "Four."
        assert stored.reasoning == "2+2, carefully: 4"


async def test_a_tool_loop_stops_at_the_iteration_limit(home: Path) -> None:
    looping = ScriptStep.tool_call("skills_list", {})
    client = ScriptedClient([], default=looping)
    async with agent_harness(home, client, settings=AgentSettings(max_iterations=3)) as agent:
        conversation = await agent.conversation()
        events = await agent.say(conversation, "list skills forever")
        assert isinstance(events[-1], TurnFinished)
        assert len(client.requests) == 3
        assert client.requests[-1].tools == ()
        assert_transcript_valid(await agent.messages(conversation))


async def test_messages_sent_while_idle_are_answered_together(home: Path) -> None:
    client = ScriptedClient([ScriptStep.reply("Both received.")])
    async with agent_harness(home, client) as agent:
        conversation = await agent.conversation()
        tip = await agent.state.resolve_tip(conversation)
        await agent.state.append_message(tip.id, NewMessage(role="user", content="first"))
        await agent.state.append_message(tip.id, NewMessage(role="user", content="second"))
        events = [e async for e in agent.runner.run(Actor("ada", conversation_id=conversation))]
        assert isinstance(events[-1], TurnFinished)
        assert [m.content for m in client.requests[0].messages] == ["first", "second"]


async def test_a_turn_cut_after_the_model_reported_usage_still_counts_its_tokens(home: Path) -> None:
    # "<memo" might open a recall fence, so the scrubber holds it until the stream ends: it reaches the
    # user after the usage did, and a /stop at that moment closes the turn before its rows are stored.
    usage = UsageEvent(input_tokens=120, output_tokens=7)
    client = ScriptedClient([ScriptStep.reply("partial answer <memo", usage=usage)])
    async with agent_harness(home, client) as h:
        conversation = await h.conversation()
        tip = await h.state.resolve_tip(conversation)
        await h.state.append_message(tip.id, NewMessage(role="user", content="hi", author="ada"))
        turn = h.runner.run(Actor("ada", conversation_id=conversation, platform="test"))
        async for event in turn:
            if isinstance(event, ReplyDelta) and event.text == "<memo":
                break
        await turn.aclose()  # type: ignore[attr-defined]
        segment = await h.state.get_segment(tip.id)
    assert segment is not None
    assert (segment.usage.input_tokens, segment.usage.output_tokens) == (120, 7)
