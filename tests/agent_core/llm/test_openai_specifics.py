"""OpenAI-compatible specifics: usage with cached tokens, stream options, and the request shape."""

from __future__ import annotations

from agent_core.llm import ChatMessage, LLMRequest, ToolSpec, UsageEvent, build_client, complete
from agent_core.llm.fakes import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.agent_core.llm.conftest import settings_for

SYSTEM = "You are a local model behind Ollama."


async def test_usage_splits_cached_prompt_tokens(openai_fake: FakeOpenAIServer) -> None:
    openai_fake.script(
        FakeReply(
            text="ok",
            usage={
                "prompt_tokens": 120,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 100},
            },
        )
    )
    async with build_client(settings_for(openai_fake)) as client:
        result = await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),)))
    assert result.usage == UsageEvent(input_tokens=20, output_tokens=7, cache_read_tokens=100)
    assert result.usage.prompt_tokens == 120


async def test_usage_without_cache_details_still_counts(openai_fake: FakeOpenAIServer) -> None:
    openai_fake.script(FakeReply(text="ok", usage={"prompt_tokens": 50, "prompt_tokens_details": None}))
    async with build_client(settings_for(openai_fake)) as client:
        result = await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),)))
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (50, 0)


async def test_request_asks_for_streamed_usage_and_omits_empty_tools(openai_fake: FakeOpenAIServer) -> None:
    async with build_client(settings_for(openai_fake, max_tokens=321)) as client:
        await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),)))
        await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "hi"),), max_tokens=9))
    first, second = (r.body for r in openai_fake.requests)
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert "tools" not in first
    assert first["max_tokens"] == 321 and second["max_tokens"] == 9
    assert first["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]


async def test_second_turn_reports_cached_prefix_tokens(openai_fake: FakeOpenAIServer) -> None:
    tools = (ToolSpec("session_search", "Search past chats.", {"type": "object"}),)
    turn1 = (ChatMessage("user", "hello " * 50),)
    async with build_client(settings_for(openai_fake)) as client:
        first = await complete(client, LLMRequest(SYSTEM, turn1, tools))
        turn2 = (*turn1, ChatMessage("assistant", first.text), ChatMessage("user", "and again"))
        second = await complete(client, LLMRequest(SYSTEM, turn2, tools))
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens >= first.usage.prompt_tokens


async def test_tool_calls_without_ids_get_generated_ones(openai_fake: FakeOpenAIServer) -> None:
    # llama.cpp and older Ollama builds may omit ids; the loop still needs one per call.
    call = FakeToolCall("session_search", {"query": "tea"}, omit_id=True)
    openai_fake.script(FakeReply(text="", tool_calls=(call,)))
    async with build_client(settings_for(openai_fake)) as client:
        result = await complete(client, LLMRequest(SYSTEM, (ChatMessage("user", "search tea"),)))
    (parsed,) = result.tool_calls
    assert parsed.id.startswith("call_") and parsed.arguments == {"query": "tea"}
