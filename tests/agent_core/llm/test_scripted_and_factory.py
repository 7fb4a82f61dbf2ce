"""The scripted client used by other packages' tests, the settings model and the client factory."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from agent_core.llm import (
    ChatMessage,
    LLMConfigError,
    LLMRateLimitError,
    LLMRequest,
    ModelSettings,
    OfflineClient,
    Provider,
    ScriptedClient,
    ScriptExhaustedError,
    ScriptStep,
    StopEvent,
    TextDelta,
    ToolCall,
    UsageEvent,
    build_client,
    complete,
)
from agent_core.llm.client import LLMClient

REQUEST = LLMRequest("system", (ChatMessage("user", "hi"),))


async def test_scripted_client_plays_steps_in_order_and_records_requests() -> None:
    client = ScriptedClient(
        [
            ScriptStep.tool_call("memory", {"action": "read", "target": "user"}, id="c1"),
            ScriptStep.reply("All done.", chunks=3, usage=UsageEvent(input_tokens=10, output_tokens=2)),
            lambda request: ScriptStep.reply(f"you sent {len(request.messages)} messages"),
        ]
    )
    first = await complete(client, REQUEST)
    assert first.tool_calls == (ToolCall("c1", "memory", {"action": "read", "target": "user"}),)
    assert first.stop_reason == "tool_use"
    events = [event async for event in client.stream(REQUEST)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["All", " do", "ne."]
    assert events[-2:] == [UsageEvent(input_tokens=10, output_tokens=2), StopEvent("end_turn")]
    assert (await complete(client, REQUEST)).text == "you sent 1 messages"
    assert client.requests == [REQUEST, REQUEST, REQUEST]
    assert client.remaining == 0


async def test_scripted_failure_raises_after_optional_partial_text() -> None:
    client = ScriptedClient([ScriptStep.fail(LLMRateLimitError(), after_text="par")])
    seen: list[str] = []
    with pytest.raises(LLMRateLimitError):
        async for event in client.stream(REQUEST):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert seen == ["par"]


async def test_running_out_of_steps_is_loud_unless_a_default_is_set() -> None:
    with pytest.raises(ScriptExhaustedError):
        await complete(ScriptedClient([]), REQUEST)
    client = ScriptedClient([], default=ScriptStep.reply("default"))
    assert (await complete(client, REQUEST)).text == "default"
    assert isinstance(client, LLMClient)


def test_settings_validate_and_are_frozen() -> None:
    key = SecretStr("sk-very-secret")
    settings = ModelSettings(provider="openai", model="llama3", api_key=key, base_url="http://h:11434/v1/")
    assert settings.base_url == "http://h:11434/v1"
    assert "sk-very-secret" not in repr(settings)
    with pytest.raises(ValidationError):
        ModelSettings(base_url="ftp://nope")
    with pytest.raises(ValidationError):
        ModelSettings(provider="gemini")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ModelSettings(unknown_field=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        settings.model = "other"


def test_auxiliary_settings_default_to_the_main_model() -> None:
    main = ModelSettings(provider="anthropic", model="big", api_key=SecretStr("k"))
    assert main.auxiliary_settings() is main
    cheap = ModelSettings(provider="anthropic", model="small", api_key=SecretStr("k"))
    assert main.model_copy(update={"auxiliary": cheap}).auxiliary_settings().model == "small"
    assert main.resolved_base_url() == "https://api.anthropic.com"


async def test_factory_builds_what_it_is_told() -> None:
    async with build_client(ModelSettings()) as offline:
        assert isinstance(offline, OfflineClient)
    providers: tuple[Provider, ...] = ("anthropic", "openai")
    for provider in providers:
        with pytest.raises(LLMConfigError, match="api_key"):
            build_client(ModelSettings(provider=provider, model="m"))
        with pytest.raises(LLMConfigError):
            build_client(ModelSettings(provider=provider, model="m", api_key=SecretStr("  ")))
        async with build_client(
            ModelSettings(provider=provider, model="m", api_key=SecretStr("k"))
        ) as client:
            assert client.name == f"{provider}:m"
