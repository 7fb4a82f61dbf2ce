"""``open_storage`` picks the backend ``storage.backend`` names, refuses a name it has no backend for, and
the runtime takes every repository (the local provider's facts too) from the storage it opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config import Home, Settings, StorageSettings
from gateway.runtime import open_runtime
from gateway.storage import open_storage


async def test_the_configured_backend_opens_with_every_repository(home: Path) -> None:
    async with open_storage(home, StorageSettings(backend="sqlite")) as storage:
        await storage.health.check_writable()
        assert await storage.ledger.record_event("test", "e1", kind="command")
        assert await storage.ledger.seen("test", "e1")
        assert storage.stats().write_commits >= 1
    assert (home / "state.db").exists()
    assert not (home / "providers").exists(), "the fact store is created by the local provider, not here"


async def test_a_backend_without_an_implementation_is_a_clear_error(home: Path) -> None:
    unknown = StorageSettings.model_construct(backend="mysql")  # past validation, as a newer config
    with pytest.raises(ValueError, match=r"'mysql'.*sqlite, postgres"):
        async with open_storage(home, unknown):
            pass
    assert not (home / "state.db").exists()


async def test_postgres_without_a_dsn_says_where_to_set_one(home: Path) -> None:
    with pytest.raises(ValueError, match=r"storage\.postgres\.dsn is not set.*DATABASE_URL"):
        async with open_storage(home, StorageSettings(backend="postgres")):
            pass


async def test_the_runtime_keeps_the_local_providers_facts_where_the_config_says(home: Path) -> None:
    memory = {"provider": {"name": "local", "local": {"db_path": "facts/mine.db"}}}
    async with open_runtime(Home(home), Settings(memory=memory)) as runtime:
        assert await runtime.storage.facts.add("ada", "Ada keeps bees", "turn")
        assert (home / "facts" / "mine.db").exists()
        assert [f.content for f in await runtime.storage.facts.top("ada", "bees", 5)] == ["Ada keeps bees"]
    assert not (home / "providers" / "local.db").exists()
