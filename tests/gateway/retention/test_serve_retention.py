"""``serve`` runs retention in the background: on a home holding data past every (test-sized) age, a real
``serve`` process removes it without being asked — the ledger rows, the old tool output, the idle
conversation (ended, then deleted) — and says so in ``/metrics``; with retention disabled it keeps it all."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from gateway.config import StorageSettings
from gateway.storage import open_storage
from tests.multiprocess.serve_process import serving, wait_until

from .old_data import retention_environment, write_old_data

_REMOVED = re.compile(r'^mnemogate_retention_removed_total\{kind="(\w+)"\} ([0-9.e+]+)$', re.MULTILINE)


async def removed(base_url: str) -> dict[str, float]:
    async with httpx.AsyncClient(timeout=5) as client:
        text = (await client.get(f"{base_url}/metrics")).text
    return {kind: float(value) for kind, value in _REMOVED.findall(text)}


async def test_serve_removes_what_is_past_its_age_in_the_background(home: Path) -> None:
    old = await write_old_data(home)
    env = retention_environment(
        MNEMOGATE_RETENTION__EVERY_S="0.5", MNEMOGATE_RETENTION__CONVERSATIONS_GRACE_DAYS="0"
    )
    expected = {"ledger": 3.0, "tool_outputs": 1.0, "conversations_ended": 1.0, "conversations_deleted": 1.0}
    async with serving(home, env) as gateway:
        seen: dict[str, float] = {}

        async def all_removed() -> bool:
            seen.update(await removed(gateway.base_url))
            return all(seen.get(kind) == count for kind, count in expected.items())

        await wait_until(
            all_removed, "retention to remove the old data", lambda: f"{seen}\n{gateway.output()}"
        )
        assert "retention removed" in gateway.output()
    async with open_storage(home, StorageSettings()) as storage:
        assert await storage.agent.get_conversation(old.conversation_id) is None
        assert not await storage.ledger.seen("web", old.events[0])


async def test_serve_keeps_everything_when_retention_is_disabled(home: Path) -> None:
    old = await write_old_data(home)
    env = retention_environment(MNEMOGATE_RETENTION__ENABLED="false", MNEMOGATE_RETENTION__EVERY_S="0.5")
    async with serving(home, env) as gateway:
        assert set((await removed(gateway.base_url)).values()) == {0.0}
    assert "retention removed" not in gateway.output()
    async with open_storage(home, StorageSettings()) as storage:
        assert await storage.agent.get_conversation(old.conversation_id) is not None
        assert await storage.ledger.seen("web", old.events[0])
