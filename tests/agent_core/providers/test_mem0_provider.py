"""The mem0 provider with the real ``mem0ai`` client against a fake Mem0 platform API on loopback."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from agent_core.llm import ScriptedClient, ScriptStep
from agent_core.providers import (
    Mem0Provider,
    Mem0ProviderSettings,
    MemoryManager,
    ProviderContext,
    ProviderSettings,
)
from agent_core.providers.fakes import FakeMem0Server

from .harness import provider_harness


async def test_adds_are_scoped_by_user_and_search_never_crosses_people(home: Path) -> None:
    async with FakeMem0Server() as server:
        settings = Mem0ProviderSettings(api_key=SecretStr(server.api_key), host=server.host)
        manager = MemoryManager([Mem0Provider(settings)], settings=ProviderSettings(name="mem0"))
        client = ScriptedClient(default=ScriptStep.reply("Great."))
        async with provider_harness(home, client, manager) as agent:
            ada, bob = (
                await agent.conversation("test:dm:ada", "ada"),
                await agent.conversation("test:dm:bob", "bob"),
            )
            for conversation, person, text in ((ada, "ada", "my dog is Rex"), (bob, "bob", "my dog is Fido")):
                await agent.say(conversation, text, person)
                manager.turn_completed(ProviderContext(person, conversation, "test"), text, "Great.")
            assert await manager.drain(5.0)

            await agent.say(bob, "what is my dog called?", "bob")
            recalled = client.requests[-1].messages[-1].content.split("<memory-context>")[1]
            assert "Fido" in recalled and "Rex" not in recalled

    adds = server.calls_to("POST", "/v3/memories/add")
    assert [(c.body["user_id"], c.body["metadata"]["conversation_id"]) for c in adds] == [
        ("ada", ada),
        ("bob", bob),
    ]
    assert adds[0].body["messages"] == [
        {"role": "user", "content": "my dog is Rex"},
        {"role": "assistant", "content": "Great."},
    ]
    searches = server.calls_to("POST", "/v3/memories/search")
    assert searches and all(c.body["filters"] == {"user_id": c.body["filters"]["user_id"]} for c in searches)
    assert searches[-1].body["filters"]["user_id"] == "bob"
    assert server.calls_to("GET", "/v1/ping"), "the client checks its key at start-up"
    assert all(c.headers["authorization"] == f"Token {server.api_key}" for c in server.calls)


async def test_forgetting_a_person_deletes_all_their_memories_and_nobody_elses() -> None:
    async with FakeMem0Server() as server:
        provider = Mem0Provider(Mem0ProviderSettings(api_key=SecretStr(server.api_key), host=server.host))
        await provider.initialize()
        try:
            for person, text in (("ada", "ada's canary"), ("bob", "bob's fact")):
                await provider.sync_turn(ProviderContext(person, f"cv-{person}", "test"), text, "ok")
            await provider.forget_person("ada", ["cv-ada"])
        finally:
            await provider.shutdown()
    assert [m["user_id"] for m in server.memories] == ["bob"]
    (delete,) = server.calls_to("DELETE", "/v1/memories")
    assert delete.query == {"user_id": "ada"}
