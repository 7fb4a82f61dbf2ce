"""Anthropic prompt caching: system_and_3 breakpoints, byte-stable history, and cache reads on turn two."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.llm import (
    ChatMessage,
    LLMRequest,
    ToolCall,
    ToolSpec,
    UsageEvent,
    apply_system_and_3,
    build_client,
    complete,
    strip_cache_markers,
)
from agent_core.llm.anthropic_wire import build_anthropic_body
from agent_core.llm.fakes import FakeAnthropicServer, FakeReply
from tests.agent_core.llm.conftest import settings_for

SYSTEM = "You are the mnemogate agent. " * 40
TOOLS = (ToolSpec("memory", "Save facts.", {"type": "object", "properties": {"action": {"type": "string"}}}),)


def markers_in(message: dict[str, Any]) -> int:
    return sum("cache_control" in block for block in message["content"])


async def test_breakpoints_sit_on_the_system_prompt_and_the_last_three_messages(
    anthropic_fake: FakeAnthropicServer,
) -> None:
    history = tuple(
        ChatMessage("user" if i % 2 == 0 else "assistant", f"message number {i}") for i in range(7)
    )
    async with build_client(settings_for(anthropic_fake)) as client:
        await complete(client, LLMRequest(SYSTEM, history, TOOLS))
    body = anthropic_fake.requests[0].body
    system = body["system"]
    messages = body["messages"]
    assert isinstance(system, list) and isinstance(messages, list)
    assert system == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert [markers_in(m) for m in messages] == [0, 0, 0, 0, 1, 1, 1]
    assert all("cache_control" in m["content"][-1] for m in messages[-3:])


async def test_history_bytes_do_not_shift_and_turn_two_reads_the_cache(
    anthropic_fake: FakeAnthropicServer,
) -> None:
    # Whitespace-padded text is the case Hermes got wrong: marked and unmarked copies differed.
    call = ToolCall("toolu_1", "memory", {"action": "add", "content": "likes green tea"})
    anthropic_fake.script(
        FakeReply.call("memory", dict(call.arguments), id=call.id),
        FakeReply.say("Saved: likes green tea."),
        FakeReply.say("You like green tea."),
    )
    turn1 = [ChatMessage("user", "  remember that I like green tea  \n")]
    usages: list[UsageEvent] = []
    async with build_client(settings_for(anthropic_fake)) as client:
        first = await complete(client, LLMRequest(SYSTEM, tuple(turn1), TOOLS))
        turn1 += [
            ChatMessage("assistant", "", tool_calls=first.tool_calls),
            ChatMessage("tool", '{"success": true}\n', tool_call_id=call.id, name="memory"),
        ]
        second = await complete(client, LLMRequest(SYSTEM, tuple(turn1), TOOLS))
        turn2 = [*turn1, ChatMessage("assistant", second.text), ChatMessage("user", "what do I like? ")]
        third = await complete(client, LLMRequest(SYSTEM, tuple(turn2), TOOLS))
        usages = [first.usage, second.usage, third.usage]

    bodies = [r.body for r in anthropic_fake.requests]
    for earlier, later in itertools.pairwise(bodies):
        assert json.dumps(earlier["system"]) == json.dumps(later["system"])
        old = strip_cache_markers(earlier["messages"])
        new = strip_cache_markers(later["messages"])
        assert json.dumps(new[: len(old)]).encode() == json.dumps(old).encode()
    assert usages[0].cache_read_tokens == 0 and usages[0].cache_write_tokens > 0
    assert usages[1].cache_read_tokens >= usages[0].cache_write_tokens
    assert usages[2].cache_read_tokens > usages[1].cache_read_tokens


async def test_an_edited_history_byte_misses_the_cache(anthropic_fake: FakeAnthropicServer) -> None:
    base = [ChatMessage("user", "first question"), ChatMessage("assistant", "first answer")]
    async with build_client(settings_for(anthropic_fake)) as client:
        await complete(client, LLMRequest(SYSTEM, (*base, ChatMessage("user", "q2")), TOOLS))
        same = await complete(client, LLMRequest(SYSTEM, (*base, ChatMessage("user", "q2"), *base), TOOLS))
        edited = [ChatMessage("user", "first question!"), base[1]]
        changed = await complete(
            client, LLMRequest(SYSTEM, (*edited, ChatMessage("user", "q2"), *base), TOOLS)
        )
    assert same.usage.cache_read_tokens > changed.usage.cache_read_tokens > 0  # only tools+system still hit


async def test_usage_surfaces_all_four_anthropic_counters(anthropic_fake: FakeAnthropicServer) -> None:
    anthropic_fake.script(
        FakeReply(
            text="hi",
            usage={
                "input_tokens": 21,
                "output_tokens": 9,
                "cache_creation_input_tokens": 1500,
                "cache_read_input_tokens": 3000,
            },
        )
    )
    async with build_client(settings_for(anthropic_fake)) as client:
        result = await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),), TOOLS))
    assert result.usage == UsageEvent(
        input_tokens=21, output_tokens=9, cache_read_tokens=3000, cache_write_tokens=1500
    )
    assert result.usage.prompt_tokens == 4521


async def test_caching_can_be_switched_off(anthropic_fake: FakeAnthropicServer) -> None:
    async with build_client(settings_for(anthropic_fake, prompt_caching=False)) as client:
        await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),), TOOLS))
    assert "cache_control" not in json.dumps(anthropic_fake.requests[0].body)


# -- property: growing a well-formed conversation never rewrites what was already sent ------------

_texts = st.text(alphabet=st.sampled_from("ab \n\t§é"), max_size=6)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[ChatMessage], list[int]]:
    """Messages plus the cut points where the loop calls the model (after a user or tool message)."""
    messages: list[ChatMessage] = []
    cuts: list[int] = []
    for step in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["user", "user", "reply", "tools"]))
        if kind == "user" or not messages:
            messages.append(ChatMessage(draw(st.sampled_from(["user", "system"])), draw(_texts)))
        elif kind == "reply":
            messages.append(ChatMessage("assistant", draw(_texts)))
        else:
            calls = tuple(
                ToolCall(f"t{step}_{n}", "memory", {"n": n}) for n in range(draw(st.integers(1, 2)))
            )
            messages.append(ChatMessage("assistant", draw(_texts), tool_calls=calls))
            messages.extend(ChatMessage("tool", draw(_texts), tool_call_id=c.id) for c in calls)
        if messages[-1].role in ("user", "system", "tool"):
            cuts.append(len(messages))
    return messages, cuts


def flattened(messages: list[ChatMessage]) -> list[str]:
    body = build_anthropic_body(
        LLMRequest(SYSTEM, tuple(messages), TOOLS), model="m", max_tokens=5, caching=True
    )
    return [
        json.dumps([m["role"], strip_cache_markers(block)], sort_keys=True)
        for m in body["messages"]
        for block in m["content"]
    ]


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_each_request_is_a_block_prefix_of_the_next(case: tuple[list[ChatMessage], list[int]]) -> None:
    messages, cuts = case
    for earlier, later in itertools.pairwise(cuts):
        old, new = flattened(messages[:earlier]), flattened(messages[:later])
        assert new[: len(old)] == old


def test_marking_copies_blocks_and_honours_the_1h_ttl() -> None:
    system = [{"type": "text", "text": "s"}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "only one"}]}]
    marked_system, marked = apply_system_and_3(system, messages, ttl="1h")
    assert marked_system[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert marked[0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in system[0] and "cache_control" not in messages[0]["content"][0]
