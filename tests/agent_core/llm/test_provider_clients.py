"""Both hosted-provider clients, through the real SDKs, against loopback fakes of their wire protocols."""

from __future__ import annotations

import socket
import time

import pytest

from agent_core.llm import (
    ChatMessage,
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMEvent,
    LLMQuotaError,
    LLMRateLimitError,
    LLMRequest,
    LLMServerError,
    LLMTimeoutError,
    ModelSettings,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    UsageEvent,
    build_client,
    complete,
)
from agent_core.llm.fakes import FakeAnthropicServer, FakeProviderServer, FakeReply, FakeToolCall
from tests.agent_core.llm.conftest import FAST_RETRIES, settings_for

SYSTEM = "You are mnemogate's test agent.\n\n  Trailing spaces and newlines stay exactly as given.  \n"
MEMORY_TOOL = ToolSpec(
    "memory",
    "Save durable facts.",
    {"type": "object", "properties": {"action": {"type": "string"}, "content": {"type": "string"}}},
)


def ask(text: str = "Hi there") -> LLMRequest:
    return LLMRequest(system=SYSTEM, messages=(ChatMessage("user", text),), tools=(MEMORY_TOOL,))


async def collect(fake: FakeProviderServer, request: LLMRequest, **overrides: object) -> list[LLMEvent]:
    events: list[LLMEvent] = []
    async with build_client(settings_for(fake, **overrides)) as client:
        async for event in client.stream(request):
            events.append(event)
    return events


def sent_system(fake: FakeProviderServer, index: int = 0) -> object:
    body = fake.requests[index].body
    if isinstance(fake, FakeAnthropicServer):
        return body["system"][0]["text"]  # type: ignore[index]
    return body["messages"][0]["content"]  # type: ignore[index]


async def test_plain_text_reply_and_system_prompt_sent_byte_for_byte(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.say("Hello from the fake model."))
    async with build_client(settings_for(fake)) as client:
        result = await complete(client, ask())
    assert result.text == "Hello from the fake model."
    assert result.stop_reason == "end_turn"
    assert result.tool_calls == ()
    assert len(fake.requests) == 1
    assert sent_system(fake) == SYSTEM


async def test_streamed_deltas_arrive_in_order_then_usage_then_stop(fake: FakeProviderServer) -> None:
    text = "one two three four five six seven eight"
    fake.script(FakeReply(text=text, chunks=4, chunk_delay_s=0.01))
    events = await collect(fake, ask())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 4
    assert "".join(deltas) == text
    assert isinstance(events[-2], UsageEvent)
    assert events[-1] == StopEvent("end_turn")


async def test_tool_call_is_parsed_and_its_result_goes_back_in_provider_shape(
    fake: FakeProviderServer,
) -> None:
    arguments = {"action": "add", "target": "user", "content": "User likes green tea"}
    fake.script(FakeReply.call("memory", arguments, id="call_42"), FakeReply.say("Saved."))
    async with build_client(settings_for(fake)) as client:
        first = await complete(client, ask("remember that I like green tea"))
        assert first.tool_calls == (ToolCall("call_42", "memory", arguments),)
        assert first.stop_reason == "tool_use"
        follow_up = LLMRequest(
            system=SYSTEM,
            messages=(
                ChatMessage("user", "remember that I like green tea"),
                ChatMessage("assistant", "", tool_calls=first.tool_calls),
                ChatMessage("tool", '{"success": true}', tool_call_id="call_42", name="memory"),
            ),
            tools=(MEMORY_TOOL,),
        )
        second = await complete(client, follow_up)
    assert second.text == "Saved."
    messages = fake.requests[1].body["messages"]
    assert isinstance(messages, list)
    if isinstance(fake, FakeAnthropicServer):
        assert messages[1]["content"][0]["type"] == "tool_use"
        assert messages[1]["content"][0]["input"] == arguments
        result_block = messages[2]["content"][0]
        assert (result_block["type"], result_block["tool_use_id"]) == ("tool_result", "call_42")
    else:
        assert messages[2]["tool_calls"][0]["function"]["arguments"] == (
            '{"action":"add","content":"User likes green tea","target":"user"}'
        )
        assert messages[3] == {"role": "tool", "tool_call_id": "call_42", "content": '{"success": true}'}


async def test_broken_tool_arguments_are_kept_and_flagged(fake: FakeProviderServer) -> None:
    fake.script(
        FakeReply(text="", tool_calls=(FakeToolCall("memory", id="c1", raw_arguments='{"action": "ad'),))
    )
    events = await collect(fake, ask())
    (call,) = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert call.arguments == {}
    assert call.raw_arguments == '{"action": "ad'
    assert call.arguments_error is not None and "not valid JSON" in call.arguments_error


async def test_reasoning_never_becomes_reply_text(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.say("The answer is 4.", reasoning="2+2... carry nothing... 4"))
    async with build_client(settings_for(fake)) as client:
        result = await complete(client, ask())
    assert result.text == "The answer is 4."
    assert result.reasoning == "2+2... carry nothing... 4"


async def test_429_waits_the_retry_after_then_succeeds(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.error(429, retry_after=0.3), FakeReply.say("after the wait"))
    async with build_client(settings_for(fake)) as client:
        result = await complete(client, ask())
    assert result.text == "after the wait"
    first, second = fake.requests
    # backoff alone would be ~0.02 s; only honouring retry-after makes the gap this long
    assert second.at - first.at >= 0.3


async def test_retry_after_longer_than_the_budget_fails_at_once(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.error(429, retry_after=30), FakeReply.say("never"))
    started = time.monotonic()
    with pytest.raises(LLMRateLimitError):
        await collect(fake, ask(), retry_budget_s=1.0)
    assert time.monotonic() - started < 1.0
    assert len(fake.requests) == 1


async def test_500_is_retried_then_succeeds(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.error(500), FakeReply.say("recovered"))
    async with build_client(settings_for(fake)) as client:
        result = await complete(client, ask())
    assert result.text == "recovered"
    assert len(fake.requests) == 2


async def test_persistent_500_stops_at_our_cap_without_sdk_retries(fake: FakeProviderServer) -> None:
    fake.script(*[FakeReply.error(500)] * 10)
    with pytest.raises(LLMServerError) as caught:
        await collect(fake, ask(), max_attempts=3)
    assert len(fake.requests) == 3
    assert fake.pending_replies == 7
    assert "\n" not in str(caught.value)


async def test_timeout_gives_timeout_error_after_the_cap(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.slow(5.0), FakeReply.slow(5.0), FakeReply.say("unused"))
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError):
        await collect(fake, ask(), timeout_s=0.3, max_attempts=2)
    assert time.monotonic() - started < 3.0
    assert len(fake.requests) == 2


async def test_401_is_an_auth_error_at_once(fake: FakeProviderServer) -> None:
    fake.api_key = "sk-the-right-key"
    with pytest.raises(LLMAuthError) as caught:
        await collect(fake, ask())
    assert len(fake.requests) == 1
    assert "sk-test" not in str(caught.value)
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_out_of_credit_is_a_quota_error_and_not_retried(fake: FakeProviderServer) -> None:
    if isinstance(fake, FakeAnthropicServer):
        reply = FakeReply.error(400, message="Your credit balance is too low to access the Anthropic API.")
    else:
        reply = FakeReply.error(
            429, error_type="insufficient_quota", message="You exceeded your current quota."
        )
    fake.script(reply, FakeReply.say("unused"))
    with pytest.raises(LLMQuotaError):
        await collect(fake, ask())
    assert len(fake.requests) == 1


async def test_bad_request_is_not_retried(fake: FakeProviderServer) -> None:
    fake.script(FakeReply.error(400, message="messages: field required"), FakeReply.say("unused"))
    with pytest.raises(LLMBadRequestError) as caught:
        await collect(fake, ask())
    assert len(fake.requests) == 1
    assert caught.value.detail == "messages: field required"


async def test_error_mid_stream_is_not_retried_so_text_is_never_repeated(fake: FakeProviderServer) -> None:
    kind = "overloaded_error" if isinstance(fake, FakeAnthropicServer) else "server_error"
    fake.script(FakeReply(text="partial answer", chunks=2, stream_error_type=kind), FakeReply.say("again"))
    seen: list[str] = []
    with pytest.raises(LLMServerError):
        async with build_client(settings_for(fake)) as client:
            async for event in client.stream(ask()):
                if isinstance(event, TextDelta):
                    seen.append(event.text)
    assert "".join(seen) == "partial answer"
    assert len(fake.requests) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_unreachable_provider_is_a_connection_error_after_the_cap(provider: str) -> None:
    with socket.socket() as closed:  # bound but never listening: connections are refused at once
        closed.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{closed.getsockname()[1]}"
        settings = ModelSettings.model_validate(
            {**FAST_RETRIES, "provider": provider, "model": "m", "api_key": "k", "base_url": base}
        )
        async with build_client(settings) as client:
            with pytest.raises(LLMConnectionError):
                await complete(client, ask())
