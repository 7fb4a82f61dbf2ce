"""Provider configuration, start-up validation, and the compression hooks' filtering of internal text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agent_core.actor import Actor
from agent_core.compression import BANNER
from agent_core.llm import ChatMessage
from agent_core.providers import (
    HonchoProvider,
    LocalProvider,
    Mem0Provider,
    MemoryManager,
    MemoryProvider,
    ProviderContext,
    ProviderSettings,
    ProviderUnavailableError,
    SwitchReason,
    build_manager,
    build_provider,
)


def test_a_section_for_a_second_provider_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="only one external memory provider"):
        ProviderSettings.model_validate({"name": "honcho", "mem0": {"top_k": 3}})
    with pytest.raises(ValidationError):
        ProviderSettings.model_validate({"name": "zep"})


def test_the_catalog_builds_the_named_provider(home: Path) -> None:
    assert build_provider(ProviderSettings(), home=home) is None
    assert isinstance(build_provider(ProviderSettings(name="local"), home=home), LocalProvider)
    assert isinstance(build_provider(ProviderSettings(name="honcho"), home=home), HonchoProvider)
    assert isinstance(build_provider(ProviderSettings(name="mem0"), home=home), Mem0Provider)


@pytest.mark.parametrize(("name", "variable"), [("honcho", "HONCHO_API_KEY"), ("mem0", "MEM0_API_KEY")])
async def test_a_provider_without_its_key_fails_start_up(home: Path, name: str, variable: str) -> None:
    with pytest.raises(ProviderUnavailableError, match=variable):
        async with build_manager(ProviderSettings.model_validate({"name": name}), home=home):
            pass


def test_keys_from_the_environment_fill_in_missing_ones() -> None:
    settings = ProviderSettings(name="mem0").with_secrets(
        honcho_api_key=SecretStr("h"), mem0_api_key=SecretStr("m")
    )
    assert settings.mem0.api_key is not None and settings.mem0.api_key.get_secret_value() == "m"
    assert Mem0Provider(settings.mem0).unavailable_reason() is None


class RecordingProvider(MemoryProvider):
    name = "recording"

    def __init__(self) -> None:
        self.pre_compress: list[list[ChatMessage]] = []
        self.switches: list[tuple[str, str, str | None, SwitchReason]] = []
        self.synced: list[tuple[str, str]] = []

    def unavailable_reason(self) -> str | None:
        return None

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        return None

    async def sync_turn(self, ctx: ProviderContext, user: str, assistant: str) -> None:
        self.synced.append((user, assistant))

    async def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[ChatMessage]) -> str | None:
        self.pre_compress.append(list(messages))
        return "Ada prefers metric units"

    async def on_session_switch(
        self,
        ctx: ProviderContext,
        *,
        new_segment_id: str,
        parent_segment_id: str | None,
        reason: SwitchReason,
    ) -> None:
        self.switches.append((ctx.person_id, new_segment_id, parent_segment_id, reason))


async def test_compression_hooks_see_only_what_was_said_and_hear_the_switch() -> None:
    provider = RecordingProvider()
    caller = Actor("ada", conversation_id="c1")
    messages = [
        ChatMessage(role="user", content=f"{BANNER}\n## Goal\n..."),
        ChatMessage(role="user", content="convert 5 miles"),
        ChatMessage(role="assistant", content="8 km"),
        ChatMessage(role="tool", content="raw tool output", tool_call_id="t1"),
    ]
    async with MemoryManager([provider]) as manager:
        assert await manager.on_pre_compress(caller, messages) == "Ada prefers metric units"
        await manager.on_compressed(caller, "seg-1", "seg-2")
        manager.turn_completed(ProviderContext("ada", "c1"), f"{BANNER}\nsummary", "ok")
        assert await manager.drain(5.0)
    assert [m.content for m in provider.pre_compress[0]] == ["convert 5 miles", "8 km"]
    assert provider.switches == [("ada", "seg-2", "seg-1", "compression")]
    assert provider.synced == [], "a handoff summary is internal traffic, never synced as user content"


def test_config_yaml_names_the_provider_and_the_key_comes_from_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.config import ConfigError, load_settings

    config = home / "config.yaml"
    config.write_text(
        "memory:\n  provider:\n    name: honcho\n    honcho:\n      workspace_id: bees\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="HONCHO_API_KEY"):
        load_settings(config)
    monkeypatch.setenv("HONCHO_API_KEY", "hk-123")
    settings = load_settings(config)
    honcho = settings.memory.provider.honcho
    assert honcho.workspace_id == "bees"
    assert honcho.api_key is not None and honcho.api_key.get_secret_value() == "hk-123"
