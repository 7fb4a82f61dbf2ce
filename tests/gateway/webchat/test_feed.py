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
