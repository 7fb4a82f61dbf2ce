"""The async facade: audit records, per-turn breaker, non-blocking file work, show/entries for the CLI."""

from __future__ import annotations

import asyncio
import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_core.actor import Actor
from agent_core.memory import BatchOperation, FailureBreaker, MemorySettings, MemoryStores, Target

P = "alice"
ALICE = Actor(P, conversation_id="c1")
OPERATOR = Actor("root", is_admin=True, label="cli")


@dataclass(frozen=True)
class Audited:
    actor: Actor
    store: str
    action: str
    old_text: str | None
    new_text: str | None


@dataclass
class RecordingSink:
    """A tiny audit sink with the state store's signature."""

    calls: list[Audited] = field(default_factory=list)

    async def record_memory_audit(
        self, *, actor: Actor, store: str, action: str, old_text: str | None, new_text: str | None
    ) -> None:
        self.calls.append(Audited(actor, store, action, old_text, new_text))


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def stores(tmp_path: Path, sink: RecordingSink) -> MemoryStores:
    return MemoryStores(tmp_path, MemorySettings(memory_char_limit=60), sink)


async def test_each_successful_write_is_audited_once_per_change_with_its_actor(
    stores: MemoryStores, sink: RecordingSink
) -> None:
    await stores.add(ALICE, target="memory", content="Likes tea")
    await stores.add(ALICE, target="memory", content="Likes tea")  # duplicate: nothing written
    await stores.add(ALICE, target="memory", content="")  # refused: nothing written
    await stores.replace(ALICE, target="memory", old_text="tea", content="Likes green tea")
    await stores.batch(
        ALICE,
        target="memory",
        operations=[
            BatchOperation("add", content="Lives in Oslo"),
            BatchOperation("remove", old_text="green"),
        ],
    )
    await stores.add(OPERATOR, target=Target.GLOBAL, content="Be concise")
    summary = [(c.store, c.action, c.old_text, c.new_text) for c in sink.calls]
    assert summary == [
        ("memory", "add", None, "Likes tea"),
        ("memory", "replace", "Likes tea", "Likes green tea"),
        ("memory", "add", None, "Lives in Oslo"),
        ("memory", "remove", "Likes green tea", None),
        ("global", "add", None, "Be concise"),
    ]
    assert [c.actor for c in sink.calls] == [ALICE] * 4 + [OPERATOR]


async def test_the_actor_decides_whose_store_is_written_and_who_may_write_the_global_one(
    stores: MemoryStores, sink: RecordingSink
) -> None:
    refused = await stores.add(ALICE, target="global", content="Office closes at 6")
    assert not refused.success and "admin" in (refused.error or "")
    await stores.add(Actor("bob"), target="user", content="Name: Bob")
    assert (await stores.entries(person_id="bob", target="user")).entries == ("Name: Bob",)
    assert (await stores.entries(person_id=P, target="user")).entries == ()
    assert [(c.actor.person_id, c.store) for c in sink.calls] == [("bob", "user")]


async def test_store_works_without_an_audit_sink(tmp_path: Path) -> None:
    stores = MemoryStores(tmp_path, MemorySettings())
    assert (await stores.add(ALICE, target="user", content="Name: Alice")).success
    assert (await stores.entries(person_id=P, target="user")).entries == ("Name: Alice",)


async def test_breaker_passed_by_the_turn_makes_the_fourth_failure_terminal(stores: MemoryStores) -> None:
    breaker = FailureBreaker()
    await stores.add(ALICE, target="memory", content="x" * 55)
    results = [
        await stores.add(ALICE, target="memory", content=f"too long {n}", breaker=breaker) for n in range(4)
    ]
    assert [r.done for r in results] == [None, None, None, True]
    assert "Stop retrying memory calls" in (results[-1].error or "")


async def test_file_work_never_blocks_the_event_loop(tmp_path: Path, stores: MemoryStores) -> None:
    await stores.add(ALICE, target="memory", content="first")
    lock_path = tmp_path / "memories" / "people" / P / "MEMORY.md.lock"
    fd = os.open(lock_path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process/thread is mid-write
    try:
        pending = asyncio.create_task(stores.add(ALICE, target="memory", content="second"))
        for _ in range(50):  # the loop keeps running other work while the write waits for the lock
            await asyncio.sleep(0)
        assert not pending.done()
        reader = await asyncio.wait_for(stores.entries(person_id=P, target="memory"), timeout=10)
        assert reader.entries == ("first",)  # readers never wait for the lock
    finally:
        os.close(fd)
    assert (await asyncio.wait_for(pending, timeout=10)).success
    assert (await stores.entries(person_id=P, target="memory")).entries == ("first", "second")


async def test_show_lists_every_visible_store_with_usage(stores: MemoryStores) -> None:
    await stores.add(ALICE, target="user", content="Name: Alice")
    await stores.add(OPERATOR, target="global", content="Be kind")
    views = await stores.show(person_id=P)
    assert [(v.usage.target.value, v.entries, v.usage.used, v.usage.limit) for v in views] == [
        ("global", ("Be kind",), 7, 2200),
        ("memory", (), 0, 60),
        ("user", ("Name: Alice",), 11, 1375),
    ]
    assert views[2].to_dict() == {
        "success": True,
        "target": "user",
        "entries": ["Name: Alice"],
        "usage": "0% — 11/1,375 chars",
        "entry_count": 1,
    }


async def test_snapshot_through_the_facade_is_frozen(stores: MemoryStores) -> None:
    await stores.add(ALICE, target="memory", content="Likes tea")
    snap = await stores.snapshot(person_id=P)
    await stores.add(ALICE, target="memory", content="Likes cake")
    assert "Likes cake" not in snap.text
    assert "Likes cake" in (await stores.snapshot(person_id=P)).text
