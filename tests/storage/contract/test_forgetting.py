"""Forgetting conversations on every backend: a forgotten conversation is gone with its segments, messages,
search entries and cooldown, its usage still counts, and every other conversation is untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.search import plan_query
from agent_core.storage import (
    AgentStorage,
    CompressionCooldown,
    ForgottenConversations,
    ModelCall,
    NewMessage,
    NewSegment,
    Principal,
)
from agent_core.storage.search_index import SearchIndex, SearchRequest, SearchScope

if TYPE_CHECKING:
    from gateway.storage import Storage

ANA = Principal(person_id="ana", platform="web", display_name="Ana")
BOB = Principal(person_id="bob", platform="web", display_name="Bob")
ADMIN = SearchScope.all_conversations()


async def found(search: SearchIndex, text: str) -> set[str]:
    """The conversations an admin's search for ``text`` finds, once everything is indexed."""
    assert await search.wait_indexed(10)
    snapshot = await search.search_messages(SearchRequest(plan_query(text), ADMIN, 20))
    return {hit.message.conversation_id for hit in snapshot.hits}


async def chat(store: AgentStorage, key: str, who: Principal, canary: str) -> str:
    """A conversation of two segments (a compression with a summary) holding ``canary`` in every role."""
    conversation = await store.ensure_conversation(key, who, NewSegment(f"prompt about {canary}", "m1"))
    root = conversation.tip_session_id
    await store.append_messages(
        root,
        [
            NewMessage("user", f"remember {canary} please", author=who.person_id),
            NewMessage("assistant", f"noted {canary}"),
        ],
        ModelCall(100, 10, cost_usd=0.25),
    )
    await store.compress(root, NewSegment(f"prompt v2 {canary}"), [NewMessage("user", f"[summary] {canary}")])
    tip = (await store.resolve_tip(conversation.id)).id
    await store.append_messages(
        tip, [NewMessage("tool", f"tool output {canary}", tool_call_id="c1", tool_name="lookup")]
    )
    await store.put_compression_cooldown(
        conversation.id, CompressionCooldown(tip, 10.0, after_message_id=1, turns=1, kind="k", reason="r")
    )
    return conversation.id


async def test_a_forgotten_conversation_is_gone_with_everything_derived_from_it(storage: Storage) -> None:
    store, search = storage.agent, storage.search
    ana = await chat(store, "web:dm:ana", ANA, "zebracanary")
    bob = await chat(store, "web:dm:bob", BOB, "yakcanary")
    ana_segments = [s.id for s in await store.segments(ana)]
    assert await found(search, "zebracanary") == {ana}
    before = await storage.console.usage_since(0.0)

    forgotten = await store.forget_conversations([ana, "no-such-conversation"])

    assert forgotten == ForgottenConversations(conversations=1, segments=2, messages=4, usage_rows_unlinked=1)
    assert await store.get_conversation(ana) is None
    assert await store.segments(ana) == []
    assert await store.conversation_messages(ana) == []
    assert [await store.get_segment(s) for s in ana_segments] == [None, None]
    assert await store.compression_cooldown(ana) is None
    assert await found(search, "zebracanary") == set()
    assert await found(search, "remember please") == {bob}
    # The other conversation is whole.
    assert await found(search, "yakcanary") == {bob}
    assert len(await store.conversation_messages(bob)) == 4
    assert await store.compression_cooldown(bob) is not None
    # Usage keeps its numbers: the totals do not move.
    assert await storage.console.usage_since(0.0) == before


async def test_forgetting_is_idempotent_and_nothing_is_a_no_op(storage: Storage) -> None:
    store = storage.agent
    ana = await chat(store, "web:dm:ana", ANA, "zebracanary")
    assert await store.forget_conversations([]) == ForgottenConversations()
    await store.forget_conversations([ana])
    assert await store.forget_conversations([ana]) == ForgottenConversations()


async def test_a_new_conversation_starts_fresh_on_the_key_of_a_forgotten_one(storage: Storage) -> None:
    store, search = storage.agent, storage.search
    ana = await chat(store, "web:dm:ana", ANA, "zebracanary")
    await store.forget_conversations([ana])
    again = await store.ensure_conversation("web:dm:ana", ANA)
    assert again.id != ana
    await store.append_messages(again.tip_session_id, [NewMessage("user", "fresh start walrus")])
    assert await found(search, "walrus") == {again.id}
    assert await store.conversation_messages(again.id) != []


async def test_memory_audit_texts_of_one_person_are_blanked(storage: Storage) -> None:
    store = storage.agent
    ana = Actor(person_id="ana", platform="web", account_id="1", display_name="Ana")
    bob = Actor(person_id="bob", platform="web", account_id="2", display_name="Bob")
    await store.record_memory_audit(
        actor=ana, store="user", action="add", old_text=None, new_text="ana secret"
    )
    await store.record_memory_audit(actor=bob, store="user", action="add", old_text=None, new_text="bob fact")
    assert await store.forget_memory_audit_texts("ana") == 1
    (record,) = await store.memory_audit("ana")
    assert (record.action, record.store, record.old_text, record.new_text) == ("add", "user", None, None)
    (kept,) = await store.memory_audit("bob")
    assert kept.new_text == "bob fact"
    assert await store.forget_memory_audit_texts("ana") == 0


async def test_a_persons_turns_in_a_conversation_of_others_are_forgotten(storage: Storage) -> None:
    store, search = storage.agent, storage.search
    thread = await store.ensure_conversation("slack:T1:thread:c1:t1:-", BOB)
    tip = thread.tip_session_id
    call = {"id": "c9", "name": "lookup", "arguments": {"q": "zebracanary"}}
    await store.append_messages(tip, [NewMessage("user", "bob opens the thread", author="bob")])
    await store.append_messages(
        tip,
        [
            NewMessage("user", "ana says zebracanary", author="ana"),
            NewMessage("assistant", None, tool_calls=[call]),
            NewMessage("tool", "found zebracanary", tool_call_id="c9", tool_name="lookup"),
            NewMessage("assistant", "noted zebracanary for ana"),
            NewMessage("user", "bob again yakcanary", author="bob"),
            NewMessage("assistant", "ok yakcanary"),
        ],
    )
    assert await found(search, "zebracanary") == {thread.id}

    assert await store.forget_authored_turns("ana") == 4

    contents = [m.content for m in await store.conversation_messages(thread.id)]
    assert contents == ["bob opens the thread", "bob again yakcanary", "ok yakcanary"]
    assert await found(search, "zebracanary") == set()
    assert await found(search, "yakcanary") == {thread.id}
    assert await store.forget_authored_turns("ana") == 0
    # The thread goes on as before.
    await store.append_messages(tip, [NewMessage("user", "bob later walrus", author="bob")])
    assert await found(search, "walrus") == {thread.id}
