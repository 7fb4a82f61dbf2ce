"""The retention port on every backend: each kind goes only past its age and only when nothing still needs
it, in batches of at most ``limit``; the preview counts what the pruning removes; removed rows add up in
totals that only grow; a stubbed tool output is no longer found by its words; idle conversations end with
reason ``retention`` and are due for deletion after the grace period; one run holds the lease at a time."""

from __future__ import annotations

import asyncio
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from agent_core.search import plan_query
from agent_core.storage import AgentStorage, NewMessage, Principal
from agent_core.storage.search_index import SearchRequest, SearchScope
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.outbox import OutboxEntry
from gateway.storage.queue import JobReply
from gateway.storage.retention import (
    RETENTION_END_REASON,
    TOOL_OUTPUT_FLOOR_CHARS,
    RetentionCutoffs,
    RetentionRepository,
    tool_output_stub,
)
from tests.adapters.fakes.recording_sink import wait_until

from .backends import BackendUnderTest, open_storage
from .test_queue import LONG, request
from .test_schedules import RULES, T0, live_conversation, schedule
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

ADMIN = SearchScope.all_conversations()
EVERYTHING = RetentionCutoffs(
    outbox_given_up_s=0.0,
    ledger_s=0.0,
    jobs_s=0.0,
    schedule_runs_s=0.0,
    tool_outputs_s=0.0,
    tool_output_min_chars=2_000,
    conversation_idle_s=0.0,
    conversation_grace_s=0.0,
)


def repo(storage: Storage) -> RetentionRepository:
    return storage.retention


async def past(moment: float) -> None:
    """Wait until the clock has moved past ``moment`` (so an age of 0 covers what happened before it)."""
    await wait_until(lambda: time.time() > moment + 0.01, what="the clock to move on")


async def test_finished_jobs_and_given_up_replies_go_after_their_age_while_work_in_use_stays(
    storage: Storage,
) -> None:
    queue, outbox, retention = storage.queue, storage.outbox, repo(storage)
    for n in range(3):
        await queue.enqueue(request(f"hello {n}", event=f"e{n}", room=f"dm-{n}"), QUEUE_WHEN_BUSY)
    claimed = await queue.claim("w", lease_s=LONG, limit=10, max_attempts=3)
    done_pending, failed, running = sorted(claimed, key=lambda job: job.id)
    assert await queue.finish(done_pending.id, "w", state="done", reply=JobReply("queued reply"))
    assert await queue.finish(failed.id, "w", state="failed", error="boom")
    await outbox.add(OutboxEntry("cv", "test", "chat", "given up", "gave-up", kind="notice"))
    for item in await outbox.claim(["test"], "d", claim_s=600.0, limit=10):
        if item.idempotency_key == "gave-up":
            await outbox.mark_failed(item.id, "blocked")
    assert await retention.prune_jobs(older_than_s=3600.0, limit=10) == 0  # finished just now
    assert await retention.prune_given_up_outbox(older_than_s=3600.0, limit=10) == 0
    await past(time.time())
    preview = await retention.preview(EVERYTHING)
    assert (preview.get("turn_jobs_done"), preview.get("turn_jobs_failed")) == (0, 1)
    assert preview.get("outbox_given_up") == 1
    assert (
        await retention.prune_jobs(older_than_s=0.0, limit=10) == 1
    )  # the reply still to send keeps its job
    assert await retention.prune_given_up_outbox(older_than_s=0.0, limit=10) == 1
    assert [r.text for r in await outbox.for_conversation("cv")] == []
    assert (await queue.queue_state(running.conversation_id)).running == 1  # running: untouched
    totals = await retention.removed_totals()
    assert (totals.get("turn_jobs_failed"), totals.get("outbox_given_up"), totals.get("turn_jobs_done")) == (
        1,
        1,
        0,
    )


async def test_ledger_rows_go_past_the_dedupe_window_in_batches(storage: Storage) -> None:
    ledger, retention = storage.ledger, repo(storage)
    for n in range(3):
        assert await ledger.record_event("test", f"ev{n}", kind="command")
    assert await retention.prune_ledger(older_than_s=3600.0, limit=10) == 0
    await past(time.time())
    assert (await retention.preview(EVERYTHING)).get("ledger") == 3
    assert await retention.prune_ledger(older_than_s=0.0, limit=2) == 2
    assert await retention.prune_ledger(older_than_s=0.0, limit=2) == 1
    assert not await ledger.seen("test", "ev0")
    assert (await retention.removed_totals()).get("ledger") == 3


async def found(storage: Storage, text: str) -> set[int]:
    assert await storage.search.wait_indexed(10)
    snapshot = await storage.search.search_messages(SearchRequest(plan_query(text), ADMIN, 10))
    return {hit.message.id for hit in snapshot.hits}


async def test_a_large_old_tool_output_becomes_a_stub_and_search_forgets_its_words(storage: Storage) -> None:
    store: AgentStorage = storage.agent
    conversation = await store.ensure_conversation("k", Principal(person_id="ana"))
    big = "the zanzibarquux report says " + "lorem ipsum dolor " * 300
    small = "short zanzibarquux note"
    ids = await store.append_messages(
        conversation.tip_session_id,
        [
            NewMessage("user", "fetch the report", author="ana"),
            NewMessage("tool", big, tool_call_id="t1", tool_name="web_fetch"),
            NewMessage("tool", small, tool_call_id="t2", tool_name="web_fetch"),
        ],
    )
    assert await found(storage, "zanzibarquux") == {ids[1], ids[2]}
    retention = repo(storage)
    assert await retention.stub_tool_outputs(older_than_s=3600.0, min_chars=2_000, limit=10, day="d") == 0
    await past(time.time())
    assert (await retention.preview(EVERYTHING)).get("tool_outputs") == 1
    assert (
        await retention.stub_tool_outputs(older_than_s=0.0, min_chars=2_000, limit=10, day="2026-12-05") == 1
    )
    messages = {m.id: m for m in await store.conversation_messages(conversation.id)}
    stub = tool_output_stub(len(big), "2026-12-05")
    assert messages[ids[1]].content == stub and messages[ids[1]].tool_name == "web_fetch"
    assert messages[ids[2]].content == small
    assert len(stub) < TOOL_OUTPUT_FLOOR_CHARS
    assert await found(storage, "zanzibarquux") == {ids[2]}
    assert await found(storage, "lorem ipsum dolor") == set()
    assert await found(storage, "removed by retention") == {ids[1]}
    assert await retention.stub_tool_outputs(older_than_s=0.0, min_chars=2_000, limit=10, day="later") == 0
    assert (await retention.removed_totals()).get("tool_outputs") == 1


async def test_idle_conversations_end_and_are_due_for_deletion_after_the_grace(storage: Storage) -> None:
    store, queue, retention = storage.agent, storage.queue, repo(storage)
    idle = await store.ensure_conversation("k:idle", Principal(person_id="ana"))
    await store.append_messages(idle.tip_session_id, [NewMessage("user", "hello", author="ana")])
    busy = await queue.enqueue(request("queued work", event="e1", room="busy"), QUEUE_WHEN_BUSY)
    replaced = await store.ensure_conversation("k:new", Principal(person_id="bob"))
    await store.start_new_conversation("k:new", Principal(person_id="bob"), reason="new")
    assert await retention.end_idle_conversations(idle_s=3600.0, limit=10) == []
    await past(time.time())
    preview = await retention.preview(EVERYTHING)
    assert preview.get("conversations_ended") == 2  # idle and bob's new one; the busy one has work queued
    ended = await retention.end_idle_conversations(idle_s=0.0, limit=10)
    assert idle.id in ended and busy.conversation_id not in ended and len(ended) == 2
    record = await store.get_conversation(idle.id)
    assert record is not None and record.end_reason == RETENTION_END_REASON and record.ended_at is not None
    await past(time.time())
    due = await retention.expired_conversations(idle_s=3600.0, grace_s=0.0, limit=10)
    assert set(due) == set(ended)  # ended by retention: due after the grace; "new" needs idle + grace
    everything = await retention.expired_conversations(idle_s=0.0, grace_s=0.0, limit=10)
    assert set(everything) == {*ended, replaced.id}
    assert await retention.expired_conversations(idle_s=0.0, grace_s=3600.0, limit=10) == []
    await retention.count_deleted_conversations(2)
    totals = await retention.removed_totals()
    assert (totals.get("conversations_ended"), totals.get("conversations_deleted")) == (2, 2)


async def test_one_run_at_a_time_and_not_again_before_its_interval(storage: Storage) -> None:
    retention = repo(storage)
    first = await retention.claim_run("host-a", lease_s=60.0, every_s=3600.0)
    assert first.held and first.last_finished_at is None
    other = await retention.claim_run("host-b", lease_s=60.0, every_s=3600.0)
    assert not other.held and "host-a" in other.reason
    assert (await retention.claim_run("host-a", lease_s=60.0, every_s=3600.0)).held  # renewed
    await retention.finish_run("host-a")
    later = await retention.claim_run("host-b", lease_s=60.0, every_s=3600.0)
    assert not later.held and later.reason == "ran recently" and later.last_finished_at is not None
    assert (await retention.claim_run("host-b", lease_s=60.0, every_s=0.0)).held
    await retention.finish_run("host-b")
    assert (await retention.claim_run("host-c", lease_s=0.0, every_s=0.0)).held  # a lease of 0 lapses at once
    assert (await retention.claim_run("host-d", lease_s=60.0, every_s=0.0)).held


async def test_free_space_is_handed_back_on_sqlite_and_left_to_autovacuum_on_postgres(
    storage: Storage, backend: BackendUnderTest
) -> None:
    ledger, retention = storage.ledger, repo(storage)
    if backend.kind == "postgres":
        report = await retention.reclaim_space(min_free_fraction=0.0, max_bytes=64 * 1024)
        assert report.mode == "autovacuum" and report.reclaimed_bytes == 0
        return
    for n in range(2_000):
        await ledger.record_event("test", f"event-{n}-" + "x" * 200, kind="command")
    await past(time.time())
    assert await retention.prune_ledger(older_than_s=0.0, limit=5_000) == 2_000
    report = await retention.reclaim_space(min_free_fraction=0.01, max_bytes=64 * 1024)
    assert report.mode == "incremental"
    assert report.reclaimed_bytes > 64 * 1024 and report.free_bytes == 0  # several bounded steps
    assert (await retention.reclaim_space(min_free_fraction=0.01, max_bytes=64 * 1024)).reclaimed_bytes == 0


async def test_old_schedule_runs_go_but_each_schedules_latest_run_stays(storage: Storage) -> None:
    ada = await live_conversation(storage)
    once = await storage.schedules.create(schedule(ada), max_per_person=10)
    every = await storage.schedules.create(schedule(ada, kind="interval", spec="60.0"), max_per_person=10)
    assert once is not None and every is not None
    for step in range(3):
        await storage.schedules.fire_due(T0 + 60 * step, RULES, limit=10)
        for job in await storage.queue.claim("w", lease_s=LONG, limit=10, max_attempts=3):
            assert await storage.queue.finish(job.id, "w", state="done")
    runs = await storage.schedules.runs(schedule_id=every.id)
    assert len(runs) == 3
    await past(time.time())
    assert await repo(storage).prune_jobs(older_than_s=0.0, limit=10) == 1  # the greeting's: runs keep theirs
    retention, beyond_t0 = repo(storage), -(T0 + 3600.0)  # a negative age reaches past the 2033 firings
    assert await retention.prune_schedule_runs(older_than_s=3600.0, limit=10) == 0
    assert (await retention.preview(RetentionCutoffs(schedule_runs_s=beyond_t0))).get("schedule_runs") == 2
    assert await retention.prune_schedule_runs(older_than_s=beyond_t0, limit=1) == 1
    assert await retention.prune_schedule_runs(older_than_s=beyond_t0, limit=10) == 1
    assert [run.occurrence_at for run in await storage.schedules.runs(schedule_id=every.id)] == [T0 + 120]
    assert len(await storage.schedules.runs(schedule_id=once.id)) == 1
    assert (await retention.removed_totals()).get("schedule_runs") == 2
    assert await retention.prune_jobs(older_than_s=0.0, limit=10) == 2  # the pruned runs' jobs
    assert [run.task for run in await storage.schedules.runs(schedule_id=every.id)] == [runs[0].task]


def claim_the_run(spec: str, holder: str, barrier: Barrier, out: Queue[tuple[str, bool]]) -> None:
    """Multiprocessing target: claim the retention run at the same moment as the others; put whether held."""

    async def run() -> tuple[str, bool]:
        async with open_storage(spec) as storage:
            barrier.wait(timeout=60.0)
            claim = await repo(storage).claim_run(holder, lease_s=60.0, every_s=3600.0)
            return holder, claim.held

    out.put(asyncio.run(run()))


def test_hosts_claiming_the_run_together_run_it_once(backend: BackendUnderTest) -> None:
    results = run_together(claim_the_run, [(backend.spec, f"host-{n}") for n in range(3)])
    assert sorted(held for _, held in results) == [False, False, True]
