"""The outbox port on every backend: queued once per key, claimed exactly once (also across processes),
one chat's rows in order, claims that expire, chunk progress that survives a new holder, a retry wait
that holds the row, replies routed to the process whose caller awaits them, and pruning that deletes only
delivered rows past their age."""

from __future__ import annotations

import asyncio
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from gateway.contracts import ChatKind, ChatRef
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChunkReceipt, OutboxEntry, OutboxItem, OutboxRepository, ReplyRouting
from tests.adapters.fakes.recording_sink import wait_until

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0


def chat(name: str, platform: str = "test") -> str:
    return chat_to_text(ChatRef(platform, name, ChatKind.DM))


def entry(
    key: str,
    *,
    to: str = "c1",
    platform: str = "test",
    kind: str = "reply",
    conversation_id: str = "cv",
    job_id: int | None = None,
    message_id: int | None = None,
    reply_to: str | None = None,
) -> OutboxEntry:
    return OutboxEntry(
        conversation_id=conversation_id,
        platform=platform,
        chat_ref=chat(to, platform),
        text=f"text of {key}",
        idempotency_key=key,
        kind=kind,
        job_id=job_id,
        message_id=message_id,
        reply_to=reply_to,
    )


def repo(storage: Storage) -> OutboxRepository:
    return storage.outbox


async def claim_within(outbox: OutboxRepository, holder: str, within_s: float = 10.0) -> list[OutboxItem]:
    """Claim for ``holder`` until something is claimable, failing after ``within_s``."""
    deadline = time.monotonic() + within_s
    while not (items := await outbox.claim(["test"], holder, claim_s=60.0, limit=10)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{holder} could claim nothing within {within_s} s")
        await asyncio.sleep(0.01)
    return items


def texts(items: list[OutboxItem]) -> list[str]:
    return [item.text for item in items]


async def test_a_key_is_queued_once(storage: Storage) -> None:
    outbox = repo(storage)
    assert await outbox.add(entry("k1"))
    assert not await outbox.add(entry("k1"))
    rows = await outbox.for_conversation("cv")
    assert [(r.text, r.state, r.attempts, r.chunks_sent, r.kind) for r in rows] == [
        ("text of k1", "pending", 0, 0, "reply")
    ]


async def test_only_the_oldest_undelivered_row_of_each_chat_is_claimed(storage: Storage) -> None:
    outbox = repo(storage)
    for key, to in [("a1", "a"), ("a2", "a"), ("b1", "b")]:
        await outbox.add(entry(key, to=to))
    assert texts(await outbox.claim(["test"], "h", claim_s=60.0, limit=10)) == ["text of a1", "text of b1"]
    assert await outbox.claim(["test"], "h", claim_s=60.0, limit=10) == []  # a2 waits behind a1
    first = (await outbox.for_conversation("cv"))[0]
    await outbox.mark_sent(first.id, ChunkReceipt(0, "m1"))
    assert texts(await outbox.claim(["test"], "h", claim_s=60.0, limit=10)) == ["text of a2"]


async def test_a_claim_takes_at_most_limit_rows_of_the_named_platforms(storage: Storage) -> None:
    outbox = repo(storage)
    for key, to in [("t1", "a"), ("t2", "b"), ("t3", "c")]:
        await outbox.add(entry(key, to=to))
    await outbox.add(entry("o1", platform="other"))
    assert await outbox.claim([], "h", claim_s=60.0, limit=10) == []
    assert texts(await outbox.claim(["test"], "h", claim_s=60.0, limit=2)) == ["text of t1", "text of t2"]
    assert texts(await outbox.claim(["test"], "h", claim_s=60.0, limit=2)) == ["text of t3"]
    (other,) = await outbox.claim(["other", "test"], "h", claim_s=60.0, limit=10)
    assert (other.platform, other.chat_ref, other.attempts) == ("other", chat("c1", "other"), 0)


async def test_a_failed_row_stops_holding_back_its_chat(storage: Storage) -> None:
    outbox = repo(storage)
    await outbox.add(entry("a1"))
    await outbox.add(entry("a2"))
    (item,) = await outbox.claim(["test"], "h", claim_s=60.0, limit=10)
    await outbox.mark_failed(item.id, "gave up")
    assert texts(await outbox.claim(["test"], "h", claim_s=60.0, limit=10)) == ["text of a2"]
    rows = await outbox.for_conversation("cv")
    assert [(r.state, r.error) for r in rows] == [("failed", "gave up"), ("sending", None)]


async def test_an_expired_claim_lets_another_holder_resume_after_the_sent_chunks(
    storage: Storage,
) -> None:
    outbox = repo(storage)
    await outbox.add(entry("k1", reply_to="m-user"))
    (held,) = await outbox.claim(["test"], "dead", claim_s=0.05, limit=1)
    assert held.sent_chunks == frozenset()
    await outbox.record_chunk(held.id, ChunkReceipt(0, "m-0"))
    await outbox.record_chunk(held.id, ChunkReceipt(1, "m-1"))
    (taken,) = await claim_within(outbox, "alive")
    assert (taken.id, taken.sent_chunks, taken.reply_to) == (held.id, frozenset({0, 1}), "m-user")
    await outbox.mark_sent(taken.id, ChunkReceipt(2, "m-2"))
    (row,) = await outbox.for_conversation("cv")
    assert (row.state, row.chunks_sent) == ("sent", 3)
    assert await outbox.claim(["test"], "late", claim_s=0.0, limit=1) == []  # delivered rows stay delivered


async def test_a_routed_reply_goes_at_once_only_to_the_process_awaiting_it_then_to_anyone(
    storage: Storage,
) -> None:
    outbox = repo(storage)
    await outbox.add(entry("answer-1", to="a", reply_to="msg-1"))
    await outbox.add(entry("answer-2", to="a", reply_to="msg-2"))  # the same chat, behind answer-1
    await outbox.add(entry("notice", to="b"))  # answers no message: anyone's at once
    await outbox.add(entry("other", to="c", platform="other", reply_to="msg-3"))  # a platform not routed
    here = ReplyRouting(frozenset({"test"}), frozenset({"msg-1"}), grace_s=60.0)
    elsewhere = ReplyRouting(frozenset({"test"}), frozenset({"msg-9"}), grace_s=60.0)

    claimed = await outbox.claim(["test", "other"], "elsewhere", claim_s=60.0, limit=10, routing=elsewhere)
    assert sorted(texts(claimed)) == ["text of notice", "text of other"]
    (first,) = await outbox.claim(["test"], "here", claim_s=60.0, limit=10, routing=here)
    assert first.text == "text of answer-1"
    await outbox.mark_sent(first.id, ChunkReceipt(0, "m1"))
    # answer-2 is awaited by nobody (its process is gone): after the grace anyone delivers it.
    assert await outbox.claim(["test"], "elsewhere", claim_s=60.0, limit=10, routing=elsewhere) == []
    soon = ReplyRouting(frozenset({"test"}), frozenset(), grace_s=0.2)
    deadline = time.monotonic() + 10
    while not (late := await outbox.claim(["test"], "anyone", claim_s=60.0, limit=10, routing=soon)):
        assert time.monotonic() < deadline, "the grace never ended"
        await asyncio.sleep(0.02)
    assert texts(late) == ["text of answer-2"]


async def test_a_live_claim_is_never_shared(storage: Storage) -> None:
    outbox = repo(storage)
    await outbox.add(entry("k1"))
    assert len(await outbox.claim(["test"], "first", claim_s=60.0, limit=1)) == 1
    assert await outbox.claim(["test"], "second", claim_s=60.0, limit=1) == []


async def test_a_retry_wait_holds_the_row_and_its_chat(storage: Storage) -> None:
    outbox = repo(storage)
    await outbox.add(entry("k1"))
    await outbox.add(entry("k2"))
    (item,) = await outbox.claim(["test"], "h", claim_s=0.0, limit=1)  # expired at once ...
    assert await outbox.note_attempt(item.id, "rate_limited: 429", claim_s=60.0) == 1  # ... until the wait
    assert await outbox.note_attempt(item.id, "rate_limited: 429 again", claim_s=60.0) == 2
    assert await outbox.claim(["test"], "other", claim_s=60.0, limit=10) == []
    rows = await outbox.for_conversation("cv")
    assert [(r.state, r.attempts, r.error) for r in rows] == [
        ("sending", 2, "rate_limited: 429 again"),
        ("pending", 0, None),
    ]


async def test_released_claims_go_back_to_anyone_at_once(storage: Storage) -> None:
    outbox = repo(storage)
    for key, to in [("a1", "a"), ("b1", "b")]:
        await outbox.add(entry(key, to=to))
    await outbox.claim(["test"], "leaving", claim_s=600.0, limit=1)
    await outbox.claim(["test"], "staying", claim_s=600.0, limit=1)
    assert await outbox.release_claims("leaving") == 1
    assert await outbox.release_claims("nobody") == 0
    assert texts(await outbox.claim(["test"], "next", claim_s=60.0, limit=10)) == ["text of a1"]


async def test_a_new_owner_takes_over_what_others_left_claimed_on_its_platforms(storage: Storage) -> None:
    outbox = repo(storage)
    for key, to in [("dead-1", "a"), ("dead-2", "b")]:
        await outbox.add(entry(key, to=to))
    await outbox.add(entry("mine", to="c"))
    await outbox.add(entry("elsewhere", to="d", platform="other"))
    await outbox.claim(["test"], "dead-owner", claim_s=600.0, limit=2)
    await outbox.claim(["test"], "new-owner", claim_s=600.0, limit=1)
    await outbox.claim(["other"], "dead-owner", claim_s=600.0, limit=1)
    assert await outbox.release_others(["test"], "new-owner") == 2
    assert await outbox.release_others([], "new-owner") == 0
    assert sorted(texts(await outbox.claim(["test", "other"], "new-owner", claim_s=60.0, limit=10))) == [
        "text of dead-1",
        "text of dead-2",
    ]  # the other platform's claim and the new owner's own stay as they were


async def test_pruning_deletes_only_delivered_rows_older_than_the_age(storage: Storage) -> None:
    outbox = repo(storage)
    for key, to in [("sent", "a"), ("failed", "b"), ("sending", "c"), ("pending", "d")]:
        await outbox.add(entry(key, to=to))
    sent, failed, _ = await outbox.claim(["test"], "h", claim_s=600.0, limit=3)
    await outbox.record_chunk(sent.id, ChunkReceipt(0, "m-0"))
    await outbox.mark_sent(sent.id)
    await outbox.mark_failed(failed.id, "gave up")
    assert await outbox.prune_delivered(older_than_s=3600.0, limit=10) == 0  # delivered just now
    marked = time.time()
    await wait_until(lambda: time.time() > marked, what="the clock to move past the delivery")
    assert await outbox.prune_delivered(older_than_s=0.0, limit=10) == 1
    rows = await outbox.for_conversation("cv")
    assert [(r.text, r.state) for r in rows] == [
        ("text of failed", "failed"),
        ("text of sending", "sending"),
        ("text of pending", "pending"),
    ]
    assert not await outbox.add(entry("pending"))  # the keys of kept rows still count


async def test_pruning_takes_at_most_limit_rows_per_call(storage: Storage) -> None:
    outbox = repo(storage)
    for n in range(3):
        await outbox.add(entry(f"k{n}", to=f"c{n}"))
    for item in await outbox.claim(["test"], "h", claim_s=600.0, limit=10):
        await outbox.mark_sent(item.id, ChunkReceipt(0, f"m{item.id}"))
    marked = time.time()
    await wait_until(lambda: time.time() > marked, what="the clock to move past the deliveries")
    assert await outbox.prune_delivered(older_than_s=0.0, limit=2) == 2
    assert await outbox.prune_delivered(older_than_s=0.0, limit=2) == 1
    assert await outbox.for_conversation("cv") == []


async def test_a_message_is_queued_once_its_row_exists(storage: Storage) -> None:
    outbox = repo(storage)
    await outbox.add(entry("turn:1", message_id=7, job_id=1))
    assert await outbox.is_message_queued(7)
    assert not await outbox.is_message_queued(8)


async def test_chat_notices_are_the_newest_command_replies_and_notices_of_one_chat(
    storage: Storage,
) -> None:
    outbox = repo(storage)
    before = time.time() - 1.0
    for key, to, kind in [
        ("n1", "a", "notice"),
        ("r1", "a", "reply"),
        ("c1", "a", "command"),
        ("x1", "b", "notice"),
        ("k1", "a", "ack"),
    ]:
        await outbox.add(entry(key, to=to, kind=kind))
    notices = await outbox.chat_notices(chat("a"), since=before)
    assert [n.text for n in notices] == ["text of n1", "text of c1", "text of k1"]
    assert all(before <= n.created_at <= time.time() for n in notices)
    assert [n.text for n in await outbox.chat_notices(chat("a"), since=before, limit=2)] == [
        "text of c1",
        "text of k1",
    ]
    assert await outbox.chat_notices(chat("a"), since=time.time() + 3600.0) == ()


async def test_rows_of_a_conversation_are_listed_in_the_order_they_were_queued(
    storage: Storage,
) -> None:
    outbox = repo(storage)
    await outbox.add(entry("r1", kind="reply"))
    await outbox.add(entry("elsewhere", conversation_id="other"))
    await outbox.add(entry("a1", kind="ack", to="c2"))
    rows = await outbox.for_conversation("cv")
    assert [(r.text, r.kind) for r in rows] == [("text of r1", "reply"), ("text of a1", "ack")]
    assert rows[0].id < rows[1].id


def claim_everything(spec: str, holder: str, barrier: Barrier, out: Queue[list[int]]) -> None:
    """Multiprocessing target: claim until nothing is left; put the ids this holder got."""

    async def run() -> list[int]:
        claimed: list[int] = []
        async with open_storage(spec) as storage:
            outbox = repo(storage)
            barrier.wait(timeout=_DEADLINE_S)
            while items := await outbox.claim(["test"], holder, claim_s=600.0, limit=3):
                claimed.extend(item.id for item in items)
        return claimed

    out.put(asyncio.run(run()))


async def _seed_chats(backend: BackendUnderTest, count: int) -> list[int]:
    async with backend.open() as storage:
        outbox = repo(storage)
        for n in range(count):
            await outbox.add(entry(f"k{n}", to=f"c{n}"))
        return [row.id for row in await outbox.for_conversation("cv")]


def test_two_processes_claiming_together_never_get_the_same_row(backend: BackendUnderTest) -> None:
    ids = asyncio.run(_seed_chats(backend, 60))
    first, second = run_together(claim_everything, [(backend.spec, f"p{n}") for n in range(2)])
    assert not set(first) & set(second)
    assert sorted(first + second) == ids
