"""A failing provider never fails a turn: timeouts, the circuit breaker, health, and recovery."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.actor import Actor
from agent_core.agent import TurnFinished
from agent_core.llm import ScriptedClient, ScriptStep
from agent_core.providers import (
    BreakerSettings,
    HealthState,
    MemoryManager,
    MemoryProvider,
    ProviderConfigError,
    ProviderContext,
    ProviderSettings,
    ProviderUnavailableError,
)

from .harness import provider_harness


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FlakyProvider(MemoryProvider):
    """A provider plugin that hangs or raises on every call until healed."""

    name = "flaky"

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.prefetches = 0
        self._release = asyncio.Event()

    def unavailable_reason(self) -> str | None:
        return None

    def heal(self) -> None:
        self.mode = "ok"
        self._release.set()

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        self.prefetches += 1
        if self.mode == "hang":
            await self._release.wait()
        if self.mode == "raise":
            raise ConnectionError("provider is down")
        return f"{ctx.person_id} likes green tea"


def settings(timeout_s: float = 0.2) -> ProviderSettings:
    return ProviderSettings(
        prefetch_timeout_s=timeout_s, breaker=BreakerSettings(failure_threshold=2, reset_after_s=30.0)
    )


@pytest.mark.parametrize("mode", ["hang", "raise"])
async def test_turns_complete_the_breaker_opens_and_the_provider_recovers(home: Path, mode: str) -> None:
    clock = ManualClock()
    provider = FlakyProvider(mode)
    manager = MemoryManager([provider], settings=settings(), clock=clock)
    client = ScriptedClient(default=ScriptStep.reply("ok"))
    loop = asyncio.get_running_loop()
    async with provider_harness(home, client, manager) as agent:
        conversation = await agent.conversation("test:dm:ada", "ada")
        for turn in range(2):
            started = loop.time()
            events = await agent.say(conversation, f"hello {turn}", "ada")
            assert isinstance(events[-1], TurnFinished)
            assert loop.time() - started < 2.0, "a failing provider delayed the turn past its timeout"
        assert manager.health().state is HealthState.OPEN
        assert manager.health().degraded and manager.health().consecutive_failures == 2

        events = await agent.say(conversation, "hello again", "ada")
        assert isinstance(events[-1], TurnFinished)
        assert provider.prefetches == 2, "an open circuit must not call the provider"
        assert all("<memory-context>" not in m.content for r in client.requests for m in r.messages)

        provider.heal()
        clock.now += 31.0
        await agent.say(conversation, "and now?", "ada")
        assert provider.prefetches == 3
        assert "ada likes green tea" in client.requests[-1].messages[-1].content
        assert manager.health().state is HealthState.OK


async def test_one_failure_shows_degraded_and_a_success_clears_it(home: Path) -> None:
    provider = FlakyProvider("raise")
    manager = MemoryManager([provider], settings=settings(), clock=ManualClock())
    async with manager:
        scope_ctx = ProviderContext("ada", "c1")
        assert manager.health().state is HealthState.OK
        scope = Actor(person_id="ada", conversation_id=scope_ctx.conversation_id)
        assert await manager.recall(scope, "hi") is None
        health = manager.health()
        assert health.state is HealthState.DEGRADED and "provider is down" in (health.last_error or "")
        provider.heal()
        assert await manager.recall(scope, "hi") == "ada likes green tea"
        assert manager.health().state is HealthState.OK


async def test_a_failed_half_open_probe_reopens_for_a_full_delay(home: Path) -> None:
    clock = ManualClock()
    provider = FlakyProvider("raise")
    manager = MemoryManager([provider], settings=settings(), clock=clock)
    scope = Actor(person_id="ada", conversation_id="c1")
    async with manager:
        for _ in range(2):
            await manager.recall(scope, "hi")
        clock.now += 31.0
        await manager.recall(scope, "hi")  # the probe fails
        assert provider.prefetches == 3 and manager.health().state is HealthState.OPEN
        clock.now += 29.0
        await manager.recall(scope, "hi")
        assert provider.prefetches == 3, "re-opened circuit must wait a full delay again"


async def test_two_external_providers_are_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="only one external memory provider"):
        MemoryManager([FlakyProvider("ok"), FlakyProvider("ok")])


async def test_an_unavailable_provider_fails_start_up_loudly() -> None:
    class Keyless(FlakyProvider):
        def unavailable_reason(self) -> str | None:
            return "HONCHO_API_KEY is not set"

    with pytest.raises(ProviderUnavailableError, match="HONCHO_API_KEY is not set"):
        async with MemoryManager([Keyless("ok")]):
            pass


async def test_no_provider_means_no_recall_and_health_disabled(home: Path) -> None:
    client = ScriptedClient([ScriptStep.reply("hi")])
    manager = MemoryManager()
    async with provider_harness(home, client, manager) as agent:
        conversation = await agent.conversation("test:dm:ada", "ada")
        await agent.say(conversation, "hello", "ada")
        assert client.requests[0].messages[-1].content == "hello"
        assert manager.health().state is HealthState.DISABLED


class HangingSync(FlakyProvider):
    async def sync_turn(self, ctx: ProviderContext, user: str, assistant: str) -> None:
        await asyncio.Event().wait()


async def test_a_hanging_sync_runs_in_the_background_and_is_bounded() -> None:
    provider = HangingSync("ok")
    manager = MemoryManager(
        [provider], settings=ProviderSettings(call_timeout_s=0.2, drain_timeout_s=2.0), clock=ManualClock()
    )
    async with manager:
        manager.turn_completed(ProviderContext("ada", "c1"), "I like figs", "Noted.")
        assert manager.health().state is HealthState.OK, "turn_completed must not wait for the provider"
        assert await manager.drain(2.0), "the background sync must give up at its timeout"
        health = manager.health()
        assert health.state is HealthState.DEGRADED and "sync_turn: timed out" in (health.last_error or "")
        assert health.to_dict()["degraded"] is True
