"""The fake provider servers themselves: the prefix-cache model, routing, recording and waiting."""

from __future__ import annotations

import httpx
import pytest

from agent_core.llm.fakes import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    FakeReply,
    FakeServerError,
    PrefixCache,
    anthropic_cache_items,
)


def test_prefix_cache_reads_only_an_identical_breakpoint_prefix() -> None:
    cache = PrefixCache()
    first = cache.observe("m", ["a" * 40, "b" * 40], [1])
    assert (first.cache_read_tokens, first.cache_write_tokens) == (
        0,
        first.input_tokens + first.cache_write_tokens,
    )
    again = cache.observe("m", ["a" * 40, "b" * 40, "c" * 40], [2])
    assert again.cache_read_tokens == first.cache_write_tokens
    changed = cache.observe("m", ["a" * 40, "B" * 40, "c" * 40], [2])
    assert changed.cache_read_tokens == 0
    other_model = cache.observe("other", ["a" * 40, "b" * 40], [1])
    assert other_model.cache_read_tokens == 0


def test_prefix_cache_looks_back_at_most_lookback_blocks() -> None:
    cache = PrefixCache(lookback=2)
    cache.observe("m", ["x"], [0])
    near = cache.observe("m", ["x", "y"], [1])
    assert near.cache_read_tokens > 0
    far = PrefixCache(lookback=2)
    far.observe("m", ["x"], [0])
    assert far.observe("m", ["x", "y", "z"], [2]).cache_read_tokens == 0


def test_cache_items_ignore_markers_and_follow_tools_system_messages_order() -> None:
    marked = {
        "tools": [{"name": "t"}],
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    items, marks = anthropic_cache_items(marked)
    assert marks == [1]
    unmarked_items, _ = anthropic_cache_items({**marked, "system": "s"})
    assert items == unmarked_items
    assert [item[0] for item in items] == ["tool", "system", "message"]  # type: ignore[index]


async def test_unknown_paths_get_a_provider_shaped_404_and_are_recorded() -> None:
    async with FakeAnthropicServer() as anthropic, FakeOpenAIServer() as openai:
        async with httpx.AsyncClient() as http:
            a = await http.post(f"{anthropic.origin}/v1/complete", json={})
            o = await http.get(f"{openai.base_url}/models")
        assert a.status_code == 404 and a.json()["error"]["type"] == "not_found_error"
        assert o.status_code == 404 and "error" in o.json()
        assert [r.path for r in anthropic.requests] == ["/v1/complete"]
        assert anthropic.pending_replies == 0


async def test_waiting_for_requests_has_a_deadline() -> None:
    async with FakeOpenAIServer() as fake:
        with pytest.raises(FakeServerError):
            await fake.wait_for_requests(1, timeout_s=0.05)


async def test_non_streaming_requests_get_whole_json_messages() -> None:
    # The benches may call without streaming; the fakes answer in each API's non-streamed shape.
    async with FakeAnthropicServer() as anthropic, FakeOpenAIServer() as openai:
        anthropic.script(FakeReply.call("memory", {"action": "read"}, id="toolu_9", text="Checking."))
        openai.script(FakeReply.say("plain"))
        async with httpx.AsyncClient() as http:
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
            a = (await http.post(f"{anthropic.base_url}/v1/messages", json=body)).json()
            o = (await http.post(f"{openai.base_url}/chat/completions", json=body)).json()
    assert [b["type"] for b in a["content"]] == ["text", "tool_use"]
    assert a["content"][1]["input"] == {"action": "read"} and a["stop_reason"] == "tool_use"
    assert a["usage"]["cache_creation_input_tokens"] == 0  # no breakpoints, nothing written
    assert o["choices"][0]["message"]["content"] == "plain"
    assert o["usage"]["prompt_tokens"] > 0
