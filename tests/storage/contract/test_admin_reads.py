"""The admin reads on every backend: conversation and person pages, exact session-key prefixes, the chat
window's history, token totals, and the counters behind ``/metrics``, ``sessions list`` and the benches."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from agent_core.actor import Actor
from agent_core.storage import AgentStorage
from agent_core.storage.records import ModelCall, NewMessage, NewSegment, Principal
from gateway.contracts import ChatKind, ChatRef
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.admin_reads import MAX_PAGE, AdminReads, TokenTotals
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import OutboxEntry
from gateway.storage.queue import JobReply, TurnRequest
from tests.adapters.fakes.recording_sink import wait_until

if TYPE_CHECKING:
    from gateway.storage import Storage

LONG = 600.0


def reads(storage: Storage) -> AdminReads:
    return storage.admin


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


def key(chat: str, platform: str = "web") -> str:
    return f"{platform}:-:dm:{chat}:-:-"


async def conversation(
    storage: Storage,
    chat: str,
    person: str = "p-ada",
    platform: str = "web",
    texts: tuple[str, ...] = (),
) -> str:
    principal = Principal(person_id=person, platform=platform, user_id=chat, chat_id=chat, chat_type="dm")
    record = await agent(storage).ensure_conversation(key(chat, platform), principal)
    for text in texts:
        await agent(storage).append_message(record.tip_session_id, NewMessage(role="user", content=text))
        await agent(storage).append_message(
            record.tip_session_id, NewMessage(role="assistant", content=f"re: {text}")
        )
    return record.id


async def after_the_clock_moved() -> None:
    """Let the backend's clock pass what it stamped last, so the next row is strictly newer."""
    stamped = time.time()
    await wait_until(lambda: time.time() > stamped + 0.01, what="the clock to move")


def notice(key_: str, chat: str, *, kind: str = "command", text: str | None = None) -> OutboxEntry:
    return OutboxEntry(
        conversation_id="cv-notices",
        platform="web",
        chat_ref=chat_to_text(ChatRef("web", chat, ChatKind.DM)),
        text=text or f"notice {key_}",
        idempotency_key=key_,
        kind=kind,
    )


def chat_ref(chat: str) -> str:
    return chat_to_text(ChatRef("web", chat, ChatKind.DM))


async def test_conversation_pages_filter_count_and_page_newest_first(storage: Storage) -> None:
    ids = [
        await conversation(storage, f"c{i}", "p-alice" if i % 2 else "p-bob", texts=("hi",)) for i in range(5)
    ]
    telegram = await conversation(storage, "t1", "p-alice", platform="telegram")
    await agent(storage).end_conversation(ids[0], "reset")
    admin = reads(storage)
    everything = await admin.conversations()
    first = await admin.conversations(limit=4)
    second = await admin.conversations(limit=4, offset=4)
    assert everything.total == 6 and len(everything.rows) == 6
    assert [row.id for row in everything.rows][:2] == [telegram, ids[4]]  # newest first
    assert (first.limit, first.offset, second.offset) == (4, 0, 4)
    assert {r.id for r in first.rows} | {r.id for r in second.rows} == {*ids, telegram}
    alice_web = await admin.conversations(person_id="p-alice", platform="web")
    assert {r.id for r in alice_web.rows} == {ids[1], ids[3]} and alice_web.total == 2
    assert [r.id for r in (await admin.conversations(active=False)).rows] == [ids[0]]
    assert (await admin.conversations(active=True)).total == 5
    row = next(r for r in everything.rows if r.id == ids[1])
    assert (row.message_count, row.person_id, row.platform, row.session_key) == (
        2,
        "p-alice",
        "web",
        key("c1"),
    )
    assert row.last_message_at is not None and row.ended_at is None


async def test_page_limits_are_clamped_and_offsets_never_negative(storage: Storage) -> None:
    await conversation(storage, "only")
    admin = reads(storage)
    assert (await admin.conversations(limit=MAX_PAGE + 10)).limit == MAX_PAGE
    tiny = await admin.conversations(limit=0, offset=-5)
    assert (tiny.limit, tiny.offset, len(tiny.rows)) == (1, 0, 1)
    assert (await admin.persons(limit=10_000)).limit == MAX_PAGE


async def test_one_conversation_and_its_messages_over_every_segment(storage: Storage) -> None:
    cid = await conversation(storage, "c", texts=("one", "two"))
    store = agent(storage)
    parent = await store.resolve_tip(cid)
    compressed = await store.compress(
        parent.id, NewSegment(), [NewMessage(role="user", content="summary of one and two")]
    )
    assert compressed is not None
    tip = await store.resolve_tip(cid)
    await store.append_message(
        tip.id,
        NewMessage(
            role="assistant", content=None, tool_calls=[{"id": "t1", "type": "function", "function": {}}]
        ),
    )
    admin = reads(storage)
    row = await admin.conversation(cid)
    assert row is not None and row.tip_session_id == tip.id and row.message_count == 6
    assert await admin.conversation("cv-missing") is None
    page = await admin.messages(cid, limit=4)
    assert [m.content for m in page] == ["one", "re: one", "two", "re: two"]
    assert {m.session_id for m in page} == {parent.id}
    rest = await admin.messages(cid, after_id=page[-1].id)
    assert [(m.session_id, m.has_tool_calls) for m in rest] == [(tip.id, False), (tip.id, True)]
    assert await admin.messages(cid, after_id=rest[-1].id) == ()


async def test_recent_conversations_are_live_unless_ended_ones_are_asked_for(storage: Storage) -> None:
    old = await conversation(storage, "old")
    await agent(storage).end_conversation(old, "new")
    live = await conversation(storage, "live")
    admin = reads(storage)
    assert [r.id for r in await admin.recent_conversations(limit=10, include_ended=False)] == [live]
    assert [r.id for r in await admin.recent_conversations(limit=10, include_ended=True)] == [live, old]
    assert [r.id for r in await admin.recent_conversations(limit=1, include_ended=True)] == [live]


async def test_persons_are_paged_oldest_first_with_their_accounts(storage: Storage) -> None:
    identity = storage.identity
    ada = await identity.ensure_account("web", "abc", "Ada")
    bob = await identity.ensure_account("telegram", "42", None)
    issued = await identity.issue_link_code(
        ada, ttl_s=LONG, per_window=5, window_s=LONG, new_code=lambda: "CODE1"
    )
    assert issued.code is not None
    await identity.redeem_link_code(issued.code, "slack", "U1")
    admin = reads(storage)
    page = await admin.persons()
    assert page.total == 2 and [p.id for p in page.rows] == [ada, bob]
    assert page.rows[0].accounts == ("slack:U1", "web:abc") and page.rows[0].display_name == "Ada"
    person = await admin.person(bob)
    assert person is not None and person.accounts == ("telegram:42",)
    assert await admin.person("p-nobody") is None
    assert [p.id for p in (await admin.persons(limit=1, offset=1)).rows] == [bob]


async def test_a_prefix_differing_only_in_case_or_by_a_wildcard_finds_nothing(storage: Storage) -> None:
    mine = await conversation(storage, "AbCdEf_1")
    admin = reads(storage)
    assert await admin.live_conversation("web:-:dm:AbCdEf_1:") == mine
    assert await admin.live_conversation("web:-:dm:abcdef_1:") is None
    assert await admin.live_conversation("web:-:dm:AbCdEfx1:") is None
    assert await admin.live_conversation("web:-:dm:AbCdE%:") is None
    with pytest.raises(ValueError, match="prefix"):
        await admin.live_conversation("")


async def test_ended_conversations_are_matched_exactly_too(storage: Storage) -> None:
    ended = await conversation(storage, "QrStUv")
    admin = reads(storage)
    assert await admin.last_ended("web:-:dm:QrStUv:") is None
    await agent(storage).end_conversation(ended, "reset")
    record = await agent(storage).get_conversation(ended)
    assert record is not None and await admin.last_ended("web:-:dm:QrStUv:") == record.ended_at
    assert await admin.last_ended("web:-:dm:qrstuv:") is None
    assert await admin.live_conversation("web:-:dm:QrStUv:") is None


async def test_the_chat_window_shows_the_tip_text_and_the_notices_since_it_began(
    storage: Storage,
) -> None:
    outbox = storage.outbox
    await outbox.add(notice("before", "b1"))
    await after_the_clock_moved()
    cid = await conversation(storage, "b1", texts=("hello",))
    tip = await agent(storage).resolve_tip(cid)
    await agent(storage).append_message(tip.id, NewMessage(role="assistant", content=""))
    await agent(storage).append_message(
        tip.id, NewMessage(role="assistant", content="calling", tool_calls=[{"id": "t", "function": {}}])
    )
    await agent(storage).append_message(tip.id, NewMessage(role="tool", content="result", tool_call_id="t"))
    await outbox.add(notice("ack", "b1", kind="ack", text="Got it"))
    await outbox.add(notice("reply", "b1", kind="reply", text="a reply is in the transcript, not a notice"))
    await outbox.add(notice("other", "b2", text="another chat's notice"))
    window = await reads(storage).chat_history("web:-:dm:b1:", chat_ref("b1"))
    assert window.conversation_id == cid
    assert [(m.role, m.content) for m in window.transcript] == [("user", "hello"), ("assistant", "re: hello")]
    assert [n.text for n in window.notices] == ["Got it"]
    limited = await reads(storage).chat_history("web:-:dm:b1:", chat_ref("b1"), limit=1)
    assert [m.content for m in limited.transcript] == ["re: hello"]


async def test_after_an_end_the_chat_window_shows_only_the_notices_since(storage: Storage) -> None:
    outbox = storage.outbox
    admin = reads(storage)
    await outbox.add(notice("first", "e1", text="before anything ended"))
    never_ended = await admin.chat_history("web:-:dm:e1:", chat_ref("e1"))
    assert never_ended.conversation_id is None and never_ended.transcript == ()
    assert [n.text for n in never_ended.notices] == ["before anything ended"]
    cid = await conversation(storage, "e1", texts=("hello",))
    await agent(storage).end_conversation(cid, "reset")
    await after_the_clock_moved()
    await outbox.add(notice("second", "e1", text="Started a new conversation."))
    window = await admin.chat_history("web:-:dm:e1:", chat_ref("e1"))
    assert window.conversation_id is None and window.transcript == ()
    assert [n.text for n in window.notices] == ["Started a new conversation."]


async def test_token_totals_sum_the_live_conversations_segments(storage: Storage) -> None:
    admin = reads(storage)
    assert await admin.live_token_totals("api:-:dm:x.u:") == TokenTotals(0, 0)
    cid = await conversation(storage, "x.u", platform="api")
    store = agent(storage)
    first = await store.resolve_tip(cid)
    await store.add_usage(first.id, ModelCall(input_tokens=100, output_tokens=20))
    await store.compress(first.id, NewSegment(), [NewMessage(role="user", content="summary")])
    tip = await store.resolve_tip(cid)
    await store.add_usage(tip.id, ModelCall(input_tokens=5, output_tokens=1))
    assert await admin.live_token_totals("api:-:dm:x.u:") == TokenTotals(105, 21)
    await store.end_conversation(cid, "reset")
    assert await admin.live_token_totals("api:-:dm:x.u:") == TokenTotals(0, 0)


def turn(text: str, event: str, room: str) -> TurnRequest:
    return TurnRequest(
        actor=Actor(person_id="p-ada", platform="test", account_id="ada"),
        event_id=event,
        session_key=f"test:{room}",
        principal=Principal(person_id="p-ada", platform="test", user_id="ada", chat_id=room),
        chat_ref=chat_to_text(ChatRef("test", room, ChatKind.DM)),
        reply_to=event,
        message=NewMessage(role="user", content=text, author="p-ada"),
    )


def answer(text: str) -> JobReply:
    return JobReply(text, append=NewMessage(role="assistant", content=text, author="mnemogate"))


async def test_counters_finished_turns_and_replies_follow_the_queue_and_the_outbox(
    storage: Storage,
) -> None:
    queue, admin = storage.queue, reads(storage)
    for n, room in enumerate(("r1", "r2", "r3", "r4")):
        await queue.enqueue(turn(f"hello {n}", f"e{n}", room), QUEUE_WHEN_BUSY)
    done, failed, running = await queue.claim("w1", lease_s=LONG, limit=3, max_attempts=3)
    assert await queue.finish(done.id, "w1", state="done", reply=answer("hi ada"))
    assert await queue.finish(failed.id, "w1", state="failed", error="boom", reply=answer("sorry"))
    await storage.outbox.add(notice("n1", "b1"))
    tip = await agent(storage).resolve_tip(running.conversation_id)
    await agent(storage).add_usage(tip.id, ModelCall(input_tokens=7, output_tokens=3, cache_read_tokens=2))
    counters = await admin.gateway_counters()
    assert dict(counters.jobs_by_state) == {"done": 1, "failed": 1, "running": 1, "queued": 1}
    assert dict(counters.outbox_by_state) == {"pending": 3}
    assert (counters.input_tokens, counters.output_tokens, counters.cache_read_tokens) == (7, 3, 2)
    finished = await admin.finished_turns(0.0)
    assert [t.job_id for t in finished] == [done.id, failed.id]
    assert all(t.seconds >= 0 for t in finished) and finished[0].finished_at <= finished[1].finished_at
    assert await admin.finished_turns(finished[-1].finished_at) == ()
    assert await admin.outbox_count() == 3 and await admin.outbox_count(kind="reply") == 2
    replies = await admin.queued_replies()
    assert [r.conversation_id for r in replies] == [done.conversation_id, failed.conversation_id]
    assert await admin.queued_replies(after=replies[0].position) == replies[1:]
    tallies = {
        t.conversation_id: (t.user_messages, t.assistant_replies) for t in await admin.message_tallies()
    }
    assert tallies[done.conversation_id] == (1, 1) and tallies[running.conversation_id] == (1, 0)
