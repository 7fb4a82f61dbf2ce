"""The eraser and the external memory providers, on both backends, with the real SDKs against the fake Mem0
and Honcho servers: the person's provider data goes with everything else; a provider that fails stops the
erasure before anything changed (so it can run again), and skipping it erases the rest."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from agent_core.providers import (
    HonchoProvider,
    HonchoProviderSettings,
    Mem0Provider,
    Mem0ProviderSettings,
    ProviderContext,
)
from agent_core.providers.fakes import FakeHonchoServer, FakeMem0Server
from agent_core.storage import ModelCall, NewMessage, Principal
from gateway.erasure import PersonEraser, ProviderNotClearedError
from gateway.storage import Storage
from gateway.storage.usage_reads import UsageQuery


async def a_person(storage: Storage, account: str) -> tuple[str, str]:
    person = await storage.identity.ensure_account("test", account, account.title())
    principal = Principal(person_id=person, platform="test", user_id=account, chat_id=account, chat_type="dm")
    record = await storage.agent.ensure_conversation(f"test:-:dm:{account}:-:-", principal)
    await storage.agent.append_message(record.tip_session_id, NewMessage("user", f"{account} says hi"))
    await storage.agent.add_usage(record.tip_session_id, ModelCall(100, 10, cost_usd=0.5, model="m"))
    return person, record.id


async def test_mem0_memories_of_the_person_are_deleted_with_everything_else(storage: Storage) -> None:
    ada, ada_talk = await a_person(storage, "ada")
    bob, _ = await a_person(storage, "bob")
    async with FakeMem0Server() as server:
        provider = Mem0Provider(Mem0ProviderSettings(api_key=SecretStr(server.api_key), host=server.host))
        await provider.initialize()
        try:
            for person, talk in ((ada, ada_talk), (bob, "other")):
                await provider.sync_turn(ProviderContext(person, talk, "test"), "my canary is here", "ok")
            report = await PersonEraser(storage, provider).erase(ada, erased_by="admin:test")
        finally:
            await provider.shutdown()
    assert (report.provider, report.provider_skipped, report.complete) == ("mem0", False, True)
    assert [m["user_id"] for m in server.memories] == [bob]
    assert await storage.agent.get_conversation(ada_talk) is None
    # The spend still adds up, but no usage row names the erased person any more.
    everyone = await storage.usage.usage_report(UsageQuery(since=0.0))
    assert (everyone.total.calls, everyone.total.cost_usd) == (2, 1.0)
    assert (await storage.usage.usage_report(UsageQuery(since=0.0, person_id=ada))).total.calls == 0
    assert (await storage.usage.usage_report(UsageQuery(since=0.0, person_id=bob))).total.calls == 1


async def test_a_failing_provider_stops_the_erasure_before_anything_changed(storage: Storage) -> None:
    ada, ada_talk = await a_person(storage, "ada")
    async with FakeMem0Server() as server:
        provider = Mem0Provider(Mem0ProviderSettings(api_key=SecretStr(server.api_key), host=server.host))
        await provider.initialize()
        try:
            await provider.sync_turn(ProviderContext(ada, ada_talk, "test"), "my canary is here", "ok")
            server.fail_with(503)
            eraser = PersonEraser(storage, provider)
            with pytest.raises(ProviderNotClearedError, match="nothing was erased"):
                await eraser.erase(ada, erased_by="admin:test")
            assert await storage.agent.get_conversation(ada_talk) is not None
            assert await storage.identity.account_person("test", "ada") == ada
            report = await eraser.erase(ada, erased_by="admin:test", skip_provider=True)
        finally:
            await provider.shutdown()
    assert (report.provider, report.provider_skipped, report.complete) == ("mem0", True, False)
    assert await storage.agent.get_conversation(ada_talk) is None
    assert [m["user_id"] for m in server.memories] == [ada], "skipped: the provider keeps its data"


async def test_honcho_sessions_of_the_persons_conversations_are_deleted(storage: Storage) -> None:
    ada, ada_talk = await a_person(storage, "ada")
    bob, bob_talk = await a_person(storage, "bob")
    async with FakeHonchoServer() as server:
        settings = HonchoProviderSettings(api_key=SecretStr(server.api_key), base_url=server.base_url)
        provider = HonchoProvider(settings)
        await provider.initialize()
        try:
            for person, talk in ((ada, ada_talk), (bob, bob_talk)):
                await provider.sync_turn(ProviderContext(person, talk, "test"), f"{person} canary", "ok")
                server.add_conclusion(
                    settings.agent_peer_id, provider.person_peer_id(person), f"{person} fact"
                )
                peer = provider.person_peer_id(person)
                server.peer_cards[server.card_key(peer)] = [f"{person} card"]
                server.peer_cards[server.card_key(settings.agent_peer_id, peer)] = [f"{person} seen"]
            report = await PersonEraser(storage, provider).erase(ada, erased_by="admin:test")
        finally:
            await provider.shutdown()
    assert report.provider == "honcho" and report.complete
    assert set(server.sessions) == {bob_talk}
    assert [c["content"] for c in server.conclusions] == [f"{bob} fact"]
    cards = {key: card for key, card in server.peer_cards.items() if card}
    assert sorted(cards.values()) == [[f"{bob} card"], [f"{bob} seen"]], "the person's peer cards are empty"
