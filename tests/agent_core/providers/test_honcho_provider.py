"""The honcho provider with the real ``honcho-ai`` SDK against a fake Honcho API on loopback."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from agent_core.actor import Actor
from agent_core.llm import ScriptedClient, ScriptStep
from agent_core.providers import (
    HealthState,
    HonchoProvider,
    HonchoProviderSettings,
    MemoryManager,
    ProviderContext,
    ProviderSettings,
)
from agent_core.providers.fakes import FakeHonchoServer

from .harness import provider_harness

WS = "/v3/workspaces/mnemogate"


def honcho_manager(server: FakeHonchoServer) -> MemoryManager:
    settings = HonchoProviderSettings(api_key=SecretStr(server.api_key), base_url=server.base_url)
    return MemoryManager([HonchoProvider(settings)], settings=ProviderSettings(name="honcho"))


async def test_turns_are_synced_per_conversation_and_recall_is_the_persons_own(home: Path) -> None:
    async with FakeHonchoServer() as server:
        manager = honcho_manager(server)
        client = ScriptedClient(default=ScriptStep.reply("Lovely."))
        async with provider_harness(home, client, manager) as agent:
            ada, bob = (
                await agent.conversation("test:dm:ada", "ada"),
                await agent.conversation("test:dm:bob", "bob"),
            )
            for conversation, person, text in ((ada, "ada", "I grow tomatoes"), (bob, "bob", "I grow cacti")):
                await agent.say(conversation, text, person)
                manager.turn_completed(ProviderContext(person, conversation, "test"), text, "Lovely.")
            assert await manager.drain(5.0)

            await agent.say(ada, "what do I grow?", "ada")
            sent = client.requests[-1].messages[-1].content
            recalled = sent.split("<memory-context>")[1]
            assert "I grow tomatoes" in recalled and "cacti" not in recalled

    sessions = server.calls_to("POST", WS + "/sessions")
    assert {c.body["id"] for c in sessions} == {ada, bob}
    assert {c.body["id"]: set(c.body["peers"]) for c in sessions}[ada] == {"ada", "mnemogate-agent"}
    assert [(m["peer_id"], m["content"]) for m in server.messages_in(ada)] == [
        ("ada", "I grow tomatoes"),
        ("mnemogate-agent", "Lovely."),
    ]
    assert [m["peer_id"] for m in server.messages_in(bob)] == ["bob", "mnemogate-agent"]
    context = server.calls_to("GET", WS + f"/sessions/{ada}/context")[-1]
    assert context.query["peer_target"] == "ada" and context.query["search_query"] == "what do I grow?"
    assert all(c.headers["authorization"] == f"Bearer {server.api_key}" for c in server.calls)


async def test_a_hanging_honcho_times_out_opens_the_circuit_and_recovers(home: Path) -> None:
    clock = [0.0]
    async with FakeHonchoServer() as server:
        settings = HonchoProviderSettings(api_key=SecretStr(server.api_key), base_url=server.base_url)
        manager = MemoryManager(
            [HonchoProvider(settings)],
            settings=ProviderSettings(name="honcho", prefetch_timeout_s=0.3),
            clock=lambda: clock[0],
        )
        client = ScriptedClient(default=ScriptStep.reply("ok"))
        async with provider_harness(home, client, manager) as agent:
            conversation = await agent.conversation("test:dm:ada", "ada")
            server.hang()
            for n in range(3):
                await agent.say(conversation, f"hello {n}", "ada")
            assert manager.health().state is HealthState.OPEN
            calls = len(server.calls)
            await agent.say(conversation, "still there?", "ada")
            assert len(server.calls) == calls, "open circuit: Honcho is not called"

            server.heal()
            clock[0] += 60.0
            await agent.say(conversation, "back?", "ada")
            assert manager.health().state is HealthState.OK


async def test_honcho_down_at_start_up_starts_degraded_not_dead(home: Path) -> None:
    async with FakeHonchoServer() as server:
        server.fail_with(503)
        manager = honcho_manager(server)
        async with manager:
            assert await manager.recall(Actor(person_id="ada", conversation_id="c"), "hi") is None
            assert manager.health().degraded


async def test_forgetting_a_person_deletes_their_sessions_and_conclusions_about_them() -> None:
    async with FakeHonchoServer() as server:
        settings = HonchoProviderSettings(api_key=SecretStr(server.api_key), base_url=server.base_url)
        provider = HonchoProvider(settings)
        await provider.initialize()
        try:
            for person in ("ada", "bob"):
                ctx = ProviderContext(person, f"cv-{person}", "test")
                await provider.sync_turn(ctx, f"{person} hi", "ok")
                peer = provider.person_peer_id(person)
                server.add_conclusion(settings.agent_peer_id, peer, f"{person} likes tea")
                server.add_conclusion(peer, peer, f"{person} about themself")
            await provider.forget_person("ada", ["cv-ada"])
        finally:
            await provider.shutdown()
    assert set(server.sessions) == {"cv-bob"}
    assert {m["session_id"] for m in server.messages} == {"cv-bob"}
    assert [c["content"] for c in server.conclusions] == ["bob likes tea", "bob about themself"]
