"""The person-data reads on every backend: the model calls a person caused (with model, kind, platform and
a cost that may be unknown), paged by id, and their own words in conversations someone else owns — never
another person's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.storage.records import ModelCall, NewMessage, Principal

from .test_admin_reads import conversation

if TYPE_CHECKING:
    from gateway.storage import Storage


async def test_usage_pages_the_model_calls_the_person_caused_only(storage: Storage) -> None:
    mine = await conversation(storage, "u1", "p-ada")
    other = await conversation(storage, "u2", "p-bob")
    agent = storage.agent
    for n in range(5):
        tip = await agent.resolve_tip(mine if n != 2 else other)
        cost = None if n == 4 else 0.5  # an unpriced model's call costs null, never a guess
        call = ModelCall(input_tokens=10 + n, output_tokens=n, cost_usd=cost, model="m-1", kind="summary")
        await agent.add_usage(tip.id, call)
    reads = storage.person_data
    first = await reads.usage("p-ada", limit=2)
    rest = await reads.usage("p-ada", after_id=first[-1].id)
    found = first + rest
    assert [u.input_tokens for u in found] == [10, 11, 13, 14]
    assert {u.conversation_id for u in found} == {mine}
    tip_id = (await agent.resolve_tip(mine)).id
    assert all(
        u.segment_id == tip_id and (u.model, u.kind, u.platform) == ("m-1", "summary", "web") for u in found
    )
    assert [u.cost_usd for u in found] == [0.5, 0.5, 0.5, None]
    assert [u.input_tokens for u in await reads.usage("p-bob")] == [12]
    assert await reads.usage("p-nobody") == ()


async def test_a_persons_own_words_in_a_conversation_someone_else_owns(storage: Storage) -> None:
    thread = await conversation(storage, "thread", "p-bob", texts=("bob starts",))
    own = await conversation(storage, "dm", "p-ada", texts=("ada alone",))
    agent = storage.agent
    tip = (await agent.resolve_tip(thread)).id
    for author, text in (("p-ada", "ada joins"), ("p-cy", "cy too"), ("p-ada", "ada again")):
        await agent.append_message(tip, NewMessage(role="user", content=text, author=author))
    await agent.append_message(tip, NewMessage(role="assistant", content="reply", author="p-ada"))
    principal = Principal(platform="web", chat_id="orphan", chat_type="group")
    orphan = await agent.ensure_conversation("web:-:group:orphan:-:-", principal)
    await agent.append_message(orphan.tip_session_id, NewMessage(role="user", content="hi", author="p-ada"))
    reads = storage.person_data
    joined = await reads.joined_conversations("p-ada")
    assert set(joined) == {thread, orphan.id} and own not in joined and list(joined) == sorted(joined)
    first = await reads.authored_messages(thread, "p-ada", limit=1)
    rest = await reads.authored_messages(thread, "p-ada", after_id=first[-1].id)
    assert [m.content for m in first + rest] == ["ada joins", "ada again"]
    assert await reads.joined_conversations("p-bob") == ()
    assert await reads.authored_messages(thread, "p-nobody") == ()
