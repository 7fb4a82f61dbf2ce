"""The local provider's fact store on every backend: facts are one person's only, stored once, ranked by the
query's words then by age, and no user text can break a query."""

from __future__ import annotations

import pytest

from agent_core.storage import Fact, FactStore
from gateway.storage import Storage

from .backends import BackendUnderTest


@pytest.fixture
async def facts(storage: Storage) -> FactStore:
    """The backend's fact store (SQLite: its own file beside state.db, as ``memory.provider.local``)."""
    await storage.facts.create()
    return storage.facts


async def test_a_fact_is_stored_once_per_person(facts: FactStore) -> None:
    assert await facts.add("ada", "Ada keeps bees", "memory:user")
    assert not await facts.add("ada", "Ada keeps bees", "turn")
    assert await facts.add("bob", "Ada keeps bees", "turn"), "another person may hold the same words"
    assert await facts.count("ada") == 1
    assert await facts.top("ada", "", 10) == [Fact("Ada keeps bees", "memory:user")]


async def test_one_persons_facts_never_reach_another(facts: FactStore) -> None:
    await facts.add("ada", "Ada's bank is Mondo", "memory:user")
    await facts.add("bob", "Bob's bank is Zenith", "memory:user")
    found = await facts.top("bob", "which bank? Mondo or Zenith?", 10)
    assert [f.content for f in found] == ["Bob's bank is Zenith"]
    assert await facts.top("carol", "bank Mondo Zenith", 10) == []
    assert await facts.remove("bob", "Ada's bank is Mondo") == 0
    assert await facts.count("ada") == 1


async def test_matches_come_first_then_the_newest_facts(facts: FactStore) -> None:
    for content in ("Ada likes tea", "Ada runs on Sundays", "Ada plays chess", "Ada keeps bees"):
        await facts.add("ada", content, "turn")
    found = [f.content for f in await facts.top("ada", "any chess tonight?", 3)]
    assert found[0] == "Ada plays chess"
    assert found[1:] == ["Ada keeps bees", "Ada runs on Sundays"], "then the newest, without repeats"
    assert len(await facts.top("ada", "", 2)) == 2


async def test_replace_and_remove_touch_only_the_named_fact(facts: FactStore) -> None:
    await facts.add("ada", "Ada drinks oolong", "memory:user")
    await facts.add("ada", "Ada lives in Leeds", "memory:user")
    await facts.replace("ada", "Ada drinks oolong", "Ada drinks sencha", "memory:user")
    assert await facts.remove("ada", "Ada lives in Leeds") == 1
    assert await facts.remove("ada", "Ada lives in Leeds") == 0
    assert [f.content for f in await facts.top("ada", "", 10)] == ["Ada drinks sencha"]


@pytest.mark.parametrize(
    "query",
    ['"', "AND OR NOT", "bees*", "(bees", "NEAR(a b)", "col:bees", "^", "\u00e9t\u00e9 \u8702\u871c", ""],
)
async def test_no_query_text_breaks_a_lookup(facts: FactStore, query: str) -> None:
    await facts.add("ada", "Ada keeps bees", "turn")
    assert [f.content for f in await facts.top("ada", query, 5)] == ["Ada keeps bees"]


async def test_facts_survive_a_new_store_on_the_same_backend(
    backend: BackendUnderTest, facts: FactStore
) -> None:
    await facts.add("ada", "Ada keeps bees", "turn")
    async with backend.open() as again:
        await again.facts.create()  # creating again is harmless
        assert await again.facts.count("ada") == 1


async def test_forgetting_a_person_deletes_their_facts_only(facts: FactStore) -> None:
    await facts.add("ada", "Ada's canary is ibex", "memory:user")
    await facts.add("ada", "Ada keeps bees", "turn")
    await facts.add("bob", "Bob's canary is yak", "memory:user")
    assert await facts.forget_person("ada") == 2
    assert await facts.count("ada") == 0
    assert await facts.top("ada", "canary ibex bees", 10) == []
    assert [f.content for f in await facts.top("bob", "canary", 10)] == ["Bob's canary is yak"]
    assert await facts.forget_person("ada") == 0
