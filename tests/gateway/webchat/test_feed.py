"""The reply feed browsers wait on: ordered, deduped by receipt, bounded, and woken promptly."""

from __future__ import annotations

import asyncio
import time

from gateway.webchat import ChatFeed, Cursor


async def test_waiter_wakes_on_publish_and_sees_only_its_chat() -> None:
    feed = ChatFeed()
    start = feed.position()
    waiter = asyncio.create_task(feed.wait("a", start, timeout=5))
    await feed.publish("b", "kb", "for b")
    await feed.publish("a", "ka", "for a")
    began = time.monotonic()
    items = await waiter
    assert [i.text for i in items] == ["for a"]
    assert time.monotonic() - began < 1


async def test_same_receipt_is_published_once() -> None:
    feed = ChatFeed()
    first = await feed.publish("a", "k", "x")
    second = await feed.publish("a", "k", "x")
    assert first == second
    assert len(feed.since("a", None)) == 1


async def test_cursor_from_another_epoch_means_from_the_start() -> None:
    feed = ChatFeed()
    await feed.publish("a", "k1", "one")
    await feed.publish("a", "k2", "two")
    assert [i.text for i in feed.since("a", feed.position())] == []
    assert [i.text for i in feed.since("a", Cursor("old-epoch", 99))] == ["one", "two"]
    assert Cursor.parse(Cursor(feed.epoch, 1).to_string()) == Cursor(feed.epoch, 1)
    assert Cursor.parse("garbage") is None


async def test_memory_is_bounded_per_chat_and_in_chats() -> None:
    feed = ChatFeed(per_chat=3, max_chats=2)
    for i in range(10):
        await feed.publish("a", f"k{i}", str(i))
    await feed.publish("b", "kb", "b")
    await feed.publish("c", "kc", "c")
    assert [i.text for i in feed.since("a", None)] == []  # least recently used chat dropped
    assert [i.text for i in feed.since("c", None)] == ["c"]
    for i in range(5):
        await feed.publish("c", f"c{i}", str(i))
    assert len(feed.since("c", None)) == 3


async def test_timeout_and_close_end_waits() -> None:
    feed = ChatFeed()
    assert await feed.wait("a", feed.position(), timeout=0.05) == []
    waiter = asyncio.create_task(feed.wait("a", feed.position(), timeout=30))
    await feed.close()
    assert await asyncio.wait_for(waiter, 2) == []


async def test_memory_is_bounded_by_bytes_least_recently_used_chats_first() -> None:
    reply = "x" * 20_000  # the size that took the feed to 497 MB at 12,203 chats
    feed = ChatFeed(max_bytes=1_000_000)
    for chat in range(200):
        await feed.publish(f"chat{chat}", "k", reply)
    assert feed.held_bytes <= 1_000_000
    assert feed.since("chat0", None) == []  # the oldest chats went first...
    assert [i.text for i in feed.since("chat199", None)] == [reply]  # ...the newest stays
    for n in range(100):
        await feed.publish("chat199", f"k{n}", reply)
    assert feed.held_bytes <= 1_000_000
    assert len(feed.since("chat199", None)) < 100  # one busy chat is trimmed to its newest items too
    assert feed.since("chat199", None)[-1].receipt_id == "k99"


async def test_a_single_delivery_larger_than_the_bound_is_still_delivered() -> None:
    feed = ChatFeed(max_bytes=1_000)
    await feed.publish("a", "small", "hi")
    await feed.publish("b", "huge", "y" * 5_000)
    assert [i.receipt_id for i in feed.since("b", None)] == ["huge"]
    assert feed.since("a", None) == []


async def test_a_replacement_keeps_one_item_per_key_and_readers_past_the_old_one_see_the_new() -> None:
    feed = ChatFeed()
    await feed.publish("a", "stream-1", "<p>Hel</p>", kind="stream")
    seen = feed.position()
    await feed.publish("a", "stream-1", "<p>Hello</p>", kind="stream", replace=True)
    await feed.publish("a", "stream-1", "<p>Hello</p>", kind="stream")  # a plain retry adds nothing
    assert [(i.receipt_id, i.text) for i in feed.since("a", None)] == [("stream-1", "<p>Hello</p>")]
    assert [i.text for i in feed.since("a", seen)] == ["<p>Hello</p>"]
    assert feed.held_bytes == len("<p>Hello</p>") + 160
