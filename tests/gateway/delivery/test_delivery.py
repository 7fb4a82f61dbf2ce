"""Delivery: chunks in order with per-chunk resume, retries honouring retry_after, plain-text fallback,
visible failure after bounded attempts, per-chat order across replies."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.contracts import BadFormatError, ChatKind, ChatRef, SendError
from gateway.delivery import ChatBudgets, ChatRate, DeliveryLoop, DeliverySettings, plain_text
from gateway.queue import Signals
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChunkReceipt, OutboxEntry, OutboxRepository
from tests.adapters.fakes.recording_sink import wait_until
from tests.storage.contract.backends import sqlite_backend

from ..queue.harness import backbone, open_config
from .recording_adapter import RecordingAdapter, dm

FAST_RETRIES: dict[str, object] = {"backoff_initial_s": 0.01, "max_attempts": 3}


async def test_a_long_reply_goes_out_chunk_by_chunk_retrying_a_rate_limited_chunk(home: Path) -> None:
    adapter = RecordingAdapter(split="§")
    adapter.failures.extend([SendError("429", retryable=True, retry_after=0.05, kind="rate_limited")])
    client = ScriptedClient(default=ScriptStep.reply("one§two§three"))
    async with backbone(home, client=client, adapter=adapter) as b:
        started = time.monotonic()
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        assert await b.wait_sent(3) == ["one", "two", "three"]
        assert time.monotonic() - started >= 0.05  # retry_after waited in full
        keys = [m.idempotency_key for m in adapter.sent]
        assert keys == [f"{keys[0][:-2]}#{n}" for n in range(3)]
        conversation_id = (await b.jobs())[0].conversation_id
        # The row is marked sent right after the last chunk went out; wait for that write.
        deadline = time.monotonic() + 10.0
        rows = await b.gateway.outbox.for_conversation(conversation_id)
        while rows[0].state == "sending" and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
            rows = await b.gateway.outbox.for_conversation(conversation_id)
        assert [(r.state, r.attempts, r.chunks_sent) for r in rows] == [("sent", 1, 3)]


async def test_a_bad_format_chunk_is_resent_once_as_plain_text(home: Path) -> None:
    adapter = RecordingAdapter()
    adapter.failures.append(BadFormatError("can't parse entities"))
    client = ScriptedClient(default=ScriptStep.reply("**bold** and `code`"))
    async with backbone(home, client=client, adapter=adapter) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        assert await b.wait_sent(1) == ["bold and code"]


async def test_delivery_gives_up_visibly_after_bounded_attempts(home: Path) -> None:
    adapter = RecordingAdapter()
    adapter.failures.extend(SendError("503", retryable=True, kind="server") for _ in range(10))
    failures: list[tuple[str, str]] = []
    config = open_config(delivery=FAST_RETRIES)

    def hook(platform: str, error: str) -> None:
        failures.append((platform, error))

    async with backbone(home, adapter=adapter, config=config, on_delivery_failure=hook) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: bool(failures))
        rows = await b.gateway.outbox.for_conversation((await b.jobs())[0].conversation_id)
        assert [(r.state, r.attempts) for r in rows] == [("failed", 3)]
        assert rows[0].error is not None and "503" in rows[0].error
        assert failures == [("test", rows[0].error)]
        assert adapter.sent == []


async def test_a_reply_interrupted_mid_way_resumes_at_the_first_unsent_chunk(home: Path) -> None:
    # A sender that died after the first chunk: its claim has run out, chunk 0's receipt is stored.
    chat = chat_to_text(ChatRef("test", "dm-ada", ChatKind.DM))
    async with sqlite_backend(home).open() as storage:
        outbox: OutboxRepository = storage.outbox
        await outbox.add(OutboxEntry("cv", "test", chat, "one§two§three", "turn:1", kind="reply"))
        (item,) = await outbox.claim(["test"], "dead", claim_s=0.0, limit=1)
        await outbox.record_chunk(item.id, ChunkReceipt(0, "m-old"))
    adapter = RecordingAdapter(split="§")
    async with backbone(home, adapter=adapter, workers=False) as b:
        assert await b.wait_sent(2) == ["two", "three"]
        await b.wait_for(lambda: b.delivery.sent == 1)
        (row,) = await b.gateway.outbox.for_conversation("cv")
    assert (row.state, row.chunks_sent) == ("sent", 3)


async def test_a_new_owner_sends_at_once_what_the_killed_owner_left_claimed(home: Path) -> None:
    # The adapter's previous owner was killed mid-delivery: its claim would hold the row for ten minutes.
    chat = chat_to_text(ChatRef("test", "dm-ada", ChatKind.DM))
    async with sqlite_backend(home).open() as storage:
        await storage.outbox.add(
            OutboxEntry("cv", "test", chat, "in flight at the kill", "turn:1", kind="reply")
        )
        await storage.outbox.claim(["test"], "killed-owner", claim_s=600.0, limit=1)
        adapter = RecordingAdapter()
        new_owner = DeliveryLoop(
            outbox=storage.outbox,
            adapters={"test": adapter},
            signals=Signals(),
            settings=DeliverySettings(),
            takes_over=True,
        )
        async with new_owner:
            await wait_until(lambda: adapter.texts() == ["in flight at the kill"], what="the reply")


async def test_replies_to_one_chat_keep_their_order(home: Path) -> None:
    adapter = RecordingAdapter()
    adapter.failures.append(SendError("flaky", retryable=True, retry_after=0.05))
    async with backbone(home, adapter=adapter, workers=False) as b:
        chat = ChatRef("test", "dm-ada", ChatKind.DM)
        for n in range(5):
            await b.gateway.outbox.notify(chat, f"notice {n}", idempotency_key=f"k{n}")
        assert await b.wait_sent(5) == [f"notice {n}" for n in range(5)]
        assert not await b.gateway.outbox.notify(chat, "notice 0", idempotency_key="k0")


def test_a_chat_budget_spaces_sends_after_its_burst() -> None:
    clock = [0.0]
    budgets = ChatBudgets(lambda platform: ChatRate(per_s=2.0, burst=2), clock=lambda: clock[0])
    waits = [budgets.reserve("test", "c1") for _ in range(4)]
    assert waits == [0.0, 0.0, 0.5, 1.0]
    assert budgets.reserve("test", "c2") == 0.0  # another chat has its own budget
    clock[0] = 10.0
    assert budgets.reserve("test", "c1") == 0.0


def test_a_platforms_retry_after_holds_every_call_to_that_chat() -> None:
    clock = [0.0]
    budgets = ChatBudgets(lambda platform: ChatRate(per_s=10.0, burst=5), clock=lambda: clock[0])
    budgets.hold("test", "c1", 3.0)
    assert budgets.reserve("test", "c1") == 3.0  # sends wait it out, though tokens are left
    assert not budgets.try_take("test", "c1")  # and stream edits are refused
    assert budgets.reserve("test", "c2") == 0.0  # another chat is not held
    clock[0] = 3.0
    assert budgets.held_for("test", "c1") == 0.0 and budgets.try_take("test", "c1")


def test_plain_text_drops_markup() -> None:
    assert plain_text("<b>bold</b> &amp; *x* \\. `y`") == "bold & *x* . y"
