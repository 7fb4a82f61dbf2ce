"""Readiness of a running gateway reflects damage: failing state.db reads make it not ready, and a
missing search index shows as degraded ("ok (search …)") until it is rebuilt."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from agent_core.search import SearchScope
from agent_core.storage import NewMessage, Principal, StateError
from agent_core.storage.sqlite import StateSettings
from gateway.config import Home, Settings
from gateway.runtime import Runtime, open_runtime
from gateway.storage.sqlite import open_state_store
from tests.agent_core.storage.sqlite.damaged_home import (
    damage_middle_pages,
    home_with_messages,
    unchecked_settings,
)

_DEADLINE_S = 15.0


def _ready(checks: dict[str, str]) -> bool:
    return all(value == "ok" or value.startswith("ok (") for value in checks.values())


async def _read_everything(runtime: Runtime, conversation_ids: list[str]) -> int:
    failures = 0
    for conversation_id in conversation_ids:
        try:
            await runtime.storage.agent.conversation_messages(conversation_id)
        except StateError:
            failures += 1
    return failures


async def test_reads_that_hit_a_damaged_page_make_the_gateway_not_ready(home: Path) -> None:
    conversation_ids = await home_with_messages(home)
    damage_middle_pages(home / "state.db")
    settings = Settings(state=unchecked_settings())
    async with open_runtime(Home(home), settings) as runtime:
        assert await _read_everything(runtime, conversation_ids) > 0  # some history can no longer be read
        checks = await runtime.readiness()
    assert not _ready(checks)
    assert checks["state_db"].startswith("unavailable:") and "malformed" in checks["state_db"]


async def test_the_indexer_backs_off_and_logs_a_bounded_number_of_lines_while_state_db_is_damaged(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await home_with_messages(home)
    damage_middle_pages(home / "state.db")
    (home / "search.db").unlink()  # the rebuild reads every message, so the indexer meets the damage
    with caplog.at_level(logging.INFO, logger="agent_core.storage.sqlite"):
        async with open_state_store(home, unchecked_settings()) as store:
            deadline = time.monotonic() + _DEADLINE_S
            while (await store.search_health()).indexer_failures < 5:
                assert time.monotonic() < deadline, "the indexer never retried"
                await store.wait_indexed(0.1)
            with pytest.raises(StateError, match="malformed"):
                await store.check_readable()
    lines = [
        r for r in caplog.records if r.name == "agent_core.storage.sqlite" and r.levelno >= logging.WARNING
    ]
    assert 1 <= len(lines) <= 2, [r.getMessage() for r in lines]


async def _search_check(runtime: Runtime) -> str:
    return (await runtime.readiness())["search"]


async def test_a_missing_search_index_reads_as_degraded_until_it_is_rebuilt(home: Path) -> None:
    # This process runs no indexer (as when another process holds the indexer lock), so the window in
    # which search.db is missing lasts until the test starts one.
    settings = Settings(state=StateSettings(index_enabled=False))
    async with open_runtime(Home(home), settings) as runtime:
        conversation = await runtime.storage.agent.ensure_conversation("k", Principal(person_id="p"))
        tree = NewMessage("user", "the apricot tree")
        await runtime.storage.agent.append_messages(conversation.tip_session_id, [tree])
        async with open_state_store(home) as indexer:
            assert await indexer.wait_indexed(10)
        assert await _search_check(runtime) == "ok"

        for suffix in ("", "-wal", "-shm"):
            (home / f"search.db{suffix}").unlink(missing_ok=True)
        degraded = await _search_check(runtime)
        assert degraded.startswith("ok (search") and "rebuil" in degraded
        assert _ready(await runtime.readiness())  # search degrades the gateway; it does not stop turns

        async with open_state_store(home) as indexer:
            deadline = time.monotonic() + _DEADLINE_S
            while (check := await _search_check(runtime)) != "ok":
                assert time.monotonic() < deadline, f"search still degraded: {check}"
                await indexer.wait_indexed(0.2)
        results = await runtime.search.search("apricot", SearchScope.all_conversations(), summarise=False)
    assert len(results.conversations) == 1


async def test_a_new_empty_search_index_reads_as_degraded_in_a_process_that_does_not_index(
    home: Path,
) -> None:
    # Another process recreated search.db (every store open claims a missing one, empty) but has not
    # indexed anything yet: search finds nothing, so this process must not call it "ok".
    settings = Settings(state=StateSettings(index_enabled=False))
    async with open_runtime(Home(home), settings) as runtime:
        conversation = await runtime.storage.agent.ensure_conversation("k", Principal(person_id="p"))
        await runtime.storage.agent.append_messages(
            conversation.tip_session_id, [NewMessage("user", "apricot")]
        )
        for suffix in ("", "-wal", "-shm"):
            (home / f"search.db{suffix}").unlink(missing_ok=True)
        async with open_state_store(home, StateSettings(index_enabled=False)):
            assert (home / "search.db").exists()
            check = await _search_check(runtime)
    assert check.startswith("ok (search rebuilding") and "of 1" in check
