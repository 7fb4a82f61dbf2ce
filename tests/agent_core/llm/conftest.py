"""Shared fixtures: loopback fake providers and settings that point the real SDKs at them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from pydantic import SecretStr

from agent_core.llm import ModelSettings
from agent_core.llm.fakes import FakeAnthropicServer, FakeOpenAIServer, FakeProviderServer

SDK_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)

FAST_RETRIES = {"max_attempts": 3, "backoff_initial_s": 0.02, "backoff_max_s": 0.1, "retry_budget_s": 10.0}

SettingsFor = Callable[..., ModelSettings]


@pytest.fixture(autouse=True)
def _clean_sdk_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDKs read these even when given explicit arguments; a developer's shell must not leak in.
    for name in SDK_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def settings_for(fake: FakeProviderServer, **overrides: object) -> ModelSettings:
    provider = "anthropic" if isinstance(fake, FakeAnthropicServer) else "openai"
    values: dict[str, object] = {
        "provider": provider,
        "model": "claude-test-1" if provider == "anthropic" else "gpt-test-1",
        "api_key": SecretStr("sk-test"),
        "base_url": fake.base_url,
        "timeout_s": 5.0,
        **FAST_RETRIES,
        **overrides,
    }
    return ModelSettings.model_validate(values)


@pytest.fixture(params=["anthropic", "openai"])
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeProviderServer]:
    server: FakeProviderServer = FakeAnthropicServer() if request.param == "anthropic" else FakeOpenAIServer()
    async with server:
        yield server


@pytest.fixture
async def anthropic_fake() -> AsyncIterator[FakeAnthropicServer]:
    async with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
async def openai_fake() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server
