"""The async facade: audit records, per-turn breaker, non-blocking file work, show/entries for the CLI."""

from __future__ import annotations

import asyncio
import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_core.memory import BatchOperation, FailureBreaker, MemorySettings, MemoryStores, Target

P = "alice"


@dataclass
class RecordingSink:
    """A tiny audit sink with the state store's signature."""

    calls: list[dict[str, str | None]] = field(default_factory=list)

    async def record_memory_audit(
        self,
        *,
        person_id: str | None,
        conversation_id: str | None,
        actor: str,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        self.calls.append(
            {
                "person_id": person_id,
                "conversation_id": conversation_id,
                "actor": actor,
                "store": store,
                "action": action,
                "old_text": old_text,
                "new_text": new_text,
            }
        )


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def stores(tmp_path: Path, sink: RecordingSink) -> MemoryStores:
    return MemoryStores(tmp_path, MemorySettings(memory_char_limit=60), sink)


async def test_each_successful_write_is_audited_once_per_change(
    stores: MemoryStores, sink: RecordingSink
) -> None:
    await stores.add(target="memory", content="Likes tea", person_id=P, conversation_id="c1")
    await stores.add(
        target="memory", content="Likes tea", person_id=P, conversation_id="c1"
    )  # duplicate: nothing written
    await stores.add(
        target="memory", content="", person_id=P, conversation_id="c1"
    )  # refused: nothing written
    await stores.replace(
        target="memory", old_text="tea", content="Likes green tea", person_id=P, conversation_id="c1"
    )
    await stores.batch(
        target="memory",
        operations=[
            BatchOperation("add", content="Lives in Oslo"),
            BatchOperation("remove", old_text="green"),
        ],
        person_id=P,
        conversation_id="c1",
    )
    await stores.add(person_id="root", target=Target.GLOBAL, content="Be concise", is_admin=True, actor="cli")
    summary = [(c["store"], c["action"], c["old_text"], c["new_text"]) for c in sink.calls]
    assert summary == [
        ("memory", "add", None, "Likes tea"),
        ("memory", "replace", "Likes tea", "Likes green tea"),
        ("memory", "add", None, "Lives in Oslo"),
        ("memory", "remove", "Likes green tea", None),
        ("global", "add", None, "Be concise"),
    ]
    assert sink.calls[0]["conversation_id"] == "c1" and sink.calls[0]["person_id"] == P
    assert sink.calls[-1]["actor"] == "cli" and sink.calls[-1]["conversation_id"] is None


async def test_store_works_without_an_audit_sink(tmp_path: Path) -> None:
    stores = MemoryStores(tmp_path, MemorySettings())
    assert (await stores.add(person_id=P, target="user", content="Name: Alice")).success
    assert (await stores.entries(person_id=P, target="user")).entries == ("Name: Alice",)


async def test_breaker_passed_by_the_turn_makes_the_fourth_failure_terminal(stores: MemoryStores) -> None:
    breaker = FailureBreaker()
    await stores.add(person_id=P, target="memory", content="x" * 55)
    results = [
        await stores.add(person_id=P, target="memory", content=f"too long {n}", breaker=breaker)
        for n in range(4)
    ]
    assert [r.done for r in results] == [None, None, None, True]
    assert "Stop retrying memory calls" in (results[-1].error or "")


async def test_file_work_never_blocks_the_event_loop(tmp_path: Path, stores: MemoryStores) -> None:
    await stores.add(person_id=P, target="memory", content="first")
    lock_path = tmp_path / "memories" / "people" / P / "MEMORY.md.lock"
    fd = os.open(lock_path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process/thread is mid-write
    try:
        pending = asyncio.create_task(stores.add(person_id=P, target="memory", content="second"))
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
    await stores.add(person_id=P, target="user", content="Name: Alice")
    await stores.add(person_id="root", target="global", content="Be kind", is_admin=True)
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
    await stores.add(person_id=P, target="memory", content="Likes tea")
    snap = await stores.snapshot(person_id=P)
    await stores.add(person_id=P, target="memory", content="Likes cake")
    assert "Likes cake" not in snap.text
    assert "Likes cake" in (await stores.snapshot(person_id=P)).text
