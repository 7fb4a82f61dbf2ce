"""The admin console's reads on every backend: full transcripts with tool calls and the recall sidecar,
activity over time, usage since a time (logged per model call), the audit log, /link history, failed
deliveries, and conversations open within a date range."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage import AgentStorage
from agent_core.storage.records import ModelCall, NewMessage, NewSegment
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.console_reads import ConsoleReads, UsageTotals

from .test_admin_reads import LONG, after_the_clock_moved, answer, conversation, notice, turn

if TYPE_CHECKING:
    from gateway.storage import Storage


def console(storage: Storage) -> ConsoleReads:
    return storage.console


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_a_transcript_holds_tool_calls_results_and_the_recall_sidecar_over_every_segment(
    storage: Storage,
) -> None:
    cid = await conversation(storage, "t", texts=("first",))
    store = agent(storage)
    tip = await store.resolve_tip(cid)
    call = {"id": "call_1", "name": "memory", "arguments": {"action": "add", "content": "likes tea"}}
    asked = await store.append_message(tip.id, NewMessage(role="user", content="remember tea"))
    await store.set_api_content(asked, "remember tea\n\n<memory-context>\nrecalled\n</memory-context>")
    await store.append_messages(
        tip.id,
        [
            NewMessage(role="assistant", content=None, tool_calls=[call]),
            NewMessage(role="tool", content='{"success": true}', tool_call_id="call_1", tool_name="memory"),
            NewMessage(role="assistant", content="Noted."),
        ],
    )
    await store.compress(tip.id, NewSegment(), [NewMessage(role="user", content="summary so far")])
    child = await store.resolve_tip(cid)
    await store.append_message(child.id, NewMessage(role="user", content="after"))
    reads = console(storage)
    everything = await reads.transcript(cid)
    assert [m.content for m in everything][:2] == ["first", "re: first"]
    assert [m.session_id for m in everything][-2:] == [child.id, child.id]
    recalled = next(m for m in everything if m.id == asked)
    assert recalled.api_content is not None and "<memory-context>" in recalled.api_content
    (with_call,) = [m for m in everything if m.tool_calls]
    assert with_call.tool_calls == (call,)
    result = next(m for m in everything if m.role == "tool")
    assert (result.tool_call_id, result.tool_name) == ("call_1", "memory")
    first_page = await reads.transcript(cid, limit=3)
    rest = await reads.transcript(cid, after_id=first_page[-1].id)
    assert [m.id for m in first_page + rest] == [m.id for m in everything]
    assert await reads.transcript("cv-missing") == ()


async def test_activity_buckets_finished_turns_and_failed_deliveries(storage: Storage) -> None:
    since = time.time() - 60
    queue, outbox = storage.queue, storage.outbox
    for n, room in enumerate(("a1", "a2", "a3")):
        await queue.enqueue(turn(f"hello {n}", f"ev{n}", room), QUEUE_WHEN_BUSY)
    done, failed, _running = await queue.claim("w1", lease_s=LONG, limit=3, max_attempts=3)
    assert await queue.finish(done.id, "w1", state="done", reply=answer("hi"))
    assert await queue.finish(failed.id, "w1", state="failed", error="boom", reply=answer("sorry"))
    await outbox.add(notice("lost", "b1"))
    claimed = await outbox.claim(["web"], "d1", claim_s=LONG, limit=10)
    lost = next(item for item in claimed if item.conversation_id == "cv-notices")
    await outbox.mark_failed(lost.id, "chat not found")
    buckets = await console(storage).activity(since=since, bucket_s=3600)
    assert len(buckets) == 1 and buckets[0].start == since
    assert (buckets[0].turns_done, buckets[0].turns_failed, buckets[0].deliveries_failed) == (1, 1, 1)
    assert await console(storage).activity(since=time.time() + 60, bucket_s=60) == ()
    failures = await console(storage).failed_deliveries()
    assert failures.total == 1 and failures.rows[0].error == "chat not found"
    assert failures.rows[0].text == "notice lost" and failures.rows[0].platform == "web"


async def test_usage_since_sums_the_model_calls_logged_from_then_on(storage: Storage) -> None:
    cid = await conversation(storage, "u")
    store = agent(storage)
    tip = await store.resolve_tip(cid)
    await store.add_usage(tip.id, ModelCall(input_tokens=100, output_tokens=10, cache_read_tokens=80))
    await store.add_usage(tip.id, ModelCall())  # a call that reported nothing is not a call worth a row
    await after_the_clock_moved()
    middle = time.time()
    await after_the_clock_moved()
    await store.append_messages(
        tip.id, [NewMessage(role="assistant", content="ok")], ModelCall(7, 3, 5, 2, 0.25)
    )
    reads = console(storage)
    assert await reads.usage_since(0) == UsageTotals(2, 107, 13, 85, 2, 0.25)
    assert await reads.usage_since(middle) == UsageTotals(1, 7, 3, 5, 2, 0.25)
    assert await reads.usage_since(time.time() + 60) == UsageTotals()


async def test_the_audit_log_pages_everyones_changes_newest_first(storage: Storage) -> None:
    store = agent(storage)
    for person, text in (("p-ada", "one"), ("p-bob", "two"), ("p-ada", "three")):
        actor = Actor(person, conversation_id="cv-1", label="agent")
        await store.record_memory_audit(actor=actor, store="user", action="add", old_text=None, new_text=text)
    reads = console(storage)
    everyone = await reads.audit_log()
    assert [r.new_text for r in everyone.rows] == ["three", "two", "one"] and everyone.total == 3
    page = await reads.audit_log(limit=2, offset=2)
    assert [r.new_text for r in page.rows] == ["one"] and (page.limit, page.offset) == (2, 2)
    ada = await reads.audit_log(person_id="p-ada")
    assert [(r.person_id, r.conversation_id, r.actor) for r in ada.rows] == [("p-ada", "cv-1", "agent")] * 2


async def test_link_history_names_the_linked_account_never_the_code(storage: Storage) -> None:
    identity = storage.identity
    person = await identity.ensure_account("web", "abc", "Ada")
    codes = []
    for _ in range(2):
        issued = await identity.issue_link_code(
            person, ttl_s=600, per_window=10, window_s=600, new_code=lambda: secrets.token_hex(4)
        )
        assert issued.code is not None
        codes.append(issued.code)
    await identity.redeem_link_code(codes[1], "telegram", "42")
    history = await console(storage).link_history(person)
    assert [h.linked_account for h in history] == ["telegram:42", None]
    assert history[1].used_by == "superseded" and all(h.used_at is not None for h in history)
    assert not any(code in repr(history) for code in codes)
    assert await console(storage).link_history("p-nobody") == ()


async def test_conversations_open_within_a_date_range(storage: Storage) -> None:
    old = await conversation(storage, "old")
    await agent(storage).end_conversation(old, "reset")
    await after_the_clock_moved()
    since = time.time()
    await after_the_clock_moved()
    live = await conversation(storage, "live")
    await after_the_clock_moved()
    until = time.time()
    await after_the_clock_moved()
    await conversation(storage, "later")
    admin = storage.admin
    assert [r.id for r in (await admin.conversations(since=since, until=until)).rows] == [live]
    assert {r.id for r in (await admin.conversations(until=until)).rows} == {old, live}
    assert old not in {r.id for r in (await admin.conversations(since=since)).rows}
