"""The memory audit on every backend: each curated-memory change leaves one record, read back per person,
newest first, and the memory store writes them through the port after the change is durable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.memory import MemorySettings, MemoryStores
from agent_core.storage import AgentStorage

if TYPE_CHECKING:
    from gateway.storage import Storage


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def _record(store: AgentStorage, person_id: str, action: str, new_text: str | None) -> None:
    await store.record_memory_audit(
        actor=Actor(person_id, conversation_id="cv_1"),
        store="user",
        action=action,
        old_text=None,
        new_text=new_text,
    )


async def test_audit_records_are_read_back_per_person_newest_first(storage: Storage) -> None:
    store = agent(storage)
    await _record(store, "ada", "add", "first")
    await _record(store, "bob", "add", "bob's")
    await _record(store, "ada", "remove", None)
    await _record(store, "carol", "add", "carol's")
    ada = await store.memory_audit("ada")
    assert [(r.action, r.new_text) for r in ada] == [("remove", None), ("add", "first")]
    assert all(r.person_id == "ada" and r.conversation_id == "cv_1" and r.store == "user" for r in ada)
    assert ada[0].at >= ada[1].at and ada[0].id != ada[1].id
    assert [r.new_text for r in await store.memory_audit("bob")] == ["bob's"]
    assert await store.memory_audit("nobody") == []
    assert len(await store.memory_audit("ada", limit=1)) == 1


async def test_the_memory_store_audits_every_applied_change_with_its_actor(
    storage: Storage, tmp_path: Path
) -> None:
    store = agent(storage)
    memory = MemoryStores(tmp_path / "memory-home", MemorySettings(), audit=store)
    ada = Actor("ada", conversation_id="cv_9")
    await memory.add(ada, target="user", content="Ada keeps bees")
    operator = Actor("ada", is_admin=True, label="admin:cli")
    await memory.replace(operator, target="user", old_text="bees", content="Ada keeps wasps")
    records = await store.memory_audit("ada")
    assert [(r.actor, r.conversation_id, r.action, r.old_text, r.new_text) for r in records] == [
        ("admin:cli", None, "replace", "Ada keeps bees", "Ada keeps wasps"),
        ("agent", "cv_9", "add", None, "Ada keeps bees"),
    ]
    assert records[1].conversation_id == "cv_9" and records[1].store == "user"
