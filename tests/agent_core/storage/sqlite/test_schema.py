"""Migrations: each owner's ladder ordered and applied once, keeping data; a release-0.1 database (one shared
ladder) at any version ends with exactly the schema of a new database, whether the agent alone or the gateway
opens it first; a database newer than the code is refused naming the ladder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.storage import StateUnavailableError
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.schema import AGENT_LADDER, SHARED_LADDER_END, Ladder
from gateway.storage.sqlite import GATEWAY_LADDER, open_state_store
from tests.storage.release_0_1 import create_database, schema_of, versions_of

LATEST = {"schema_version": AGENT_LADDER.latest, "gateway_schema_version": GATEWAY_LADDER.latest}


async def _fresh(home: Path) -> Path:
    home.mkdir()  # noqa: ASYNC240 - test set-up on a temporary directory
    async with open_state_store(home):
        pass
    return home / "state.db"


@pytest.mark.parametrize("ladder", [AGENT_LADDER, GATEWAY_LADDER], ids=lambda ladder: ladder.owner)
def test_each_ladder_counts_from_one_without_gaps_past_the_shared_ladder(ladder: Ladder) -> None:
    versions = [m.version for m in ladder.migrations]
    assert versions == list(range(1, ladder.latest + 1))
    assert ladder.latest >= SHARED_LADDER_END


async def test_a_new_database_records_each_ladder_once_at_its_latest(tmp_path: Path) -> None:
    db = await _fresh(tmp_path / "new")
    assert versions_of(db) == LATEST


@pytest.mark.parametrize("version", range(1, SHARED_LADDER_END + 1))
async def test_a_release_0_1_database_at_any_version_ends_with_the_schema_of_a_new_one(
    tmp_path: Path, version: int
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    create_database(old / "state.db", version)
    conn = sqlite3.connect(old / "state.db")
    with conn:
        conn.execute(
            "INSERT INTO conversations(id, session_key, created_at, tip_session_id) "
            "VALUES ('cv_old', 'k', 1, 's')"
        )
    conn.close()
    async with open_state_store(old) as store:
        kept = await store.get_conversation("cv_old")
    assert kept is not None and kept.session_key == "k"
    # The gateway's steps after ``version`` ran too, though the agent's ladder moved schema_version first.
    assert schema_of(old / "state.db") == schema_of(await _fresh(tmp_path / "new"))
    assert versions_of(old / "state.db") == LATEST


async def test_a_database_the_agent_opened_alone_gains_the_gateway_tables(tmp_path: Path) -> None:
    home = tmp_path / "agent"
    home.mkdir()
    async with StateStore(home):
        pass
    assert versions_of(home / "state.db") == {
        "schema_version": AGENT_LADDER.latest,
        "gateway_schema_version": None,
    }
    async with open_state_store(home):
        pass
    assert schema_of(home / "state.db") == schema_of(await _fresh(tmp_path / "new"))
    assert versions_of(home / "state.db") == LATEST


@pytest.mark.parametrize("version", range(1, SHARED_LADDER_END + 1))
@pytest.mark.parametrize("agent_first", [True, False], ids=["agent-alone-first", "gateway-first"])
async def test_a_release_0_1_database_opened_by_the_agent_alone_and_by_the_gateway_ends_complete(
    tmp_path: Path, version: int, agent_first: bool
) -> None:
    # The agent alone cannot split the shared ladder; it must not move schema_version past the gateway's
    # steps either, or the gateway's later open reads 8 and skips them (no outbox_chunks, no job routing).
    old = tmp_path / "old"
    old.mkdir()
    create_database(old / "state.db", version)
    opens = [StateStore(old), open_state_store(old)]
    for store in opens if agent_first else reversed(opens):
        async with store:
            pass
    assert schema_of(old / "state.db") == schema_of(await _fresh(tmp_path / "new"))
    assert versions_of(old / "state.db") == LATEST
    async with open_state_store(old) as store:
        assert store.stats().write_commits == 1  # settled: the write probe of every open, nothing else


async def test_reopening_a_database_the_agent_created_alone_takes_no_write(tmp_path: Path) -> None:
    home = tmp_path / "agent"
    home.mkdir()
    async with StateStore(home):
        pass
    async with StateStore(home) as store:
        assert store.stats().write_commits == 1


async def test_reopening_a_split_database_takes_no_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    create_database(home / "state.db", SHARED_LADDER_END)
    async with open_state_store(home):
        pass
    async with open_state_store(home) as store:
        assert store.stats().write_commits == 1  # the write probe of every open, nothing else
    assert versions_of(home / "state.db") == LATEST


@pytest.mark.parametrize("ladder", [AGENT_LADDER, GATEWAY_LADDER], ids=lambda ladder: ladder.owner)
async def test_a_database_from_a_newer_program_is_refused_naming_the_ladder(
    tmp_path: Path, ladder: Ladder
) -> None:
    db = await _fresh(tmp_path / "home")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f"UPDATE {ladder.version_table} SET version = ?", (ladder.latest + 1,))
    conn.close()
    pattern = rf"state\.db is unusable: {ladder.owner} schema version {ladder.latest + 1} is newer"
    with pytest.raises(StateUnavailableError, match=pattern):
        async with open_state_store(tmp_path / "home"):
            pass


async def test_a_newer_gateway_ladder_is_refused_before_the_agent_ladder_changes_anything(
    tmp_path: Path,
) -> None:
    db = await _fresh(tmp_path / "home")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE schema_version SET version = 4")  # step 5 only adds an index IF NOT EXISTS
        conn.execute("UPDATE gateway_schema_version SET version = ?", (GATEWAY_LADDER.latest + 1,))
    conn.close()
    with pytest.raises(StateUnavailableError, match=r"gateway schema version \d+ is newer"):
        async with open_state_store(tmp_path / "home"):
            pass
    assert versions_of(db) == {"schema_version": 4, "gateway_schema_version": GATEWAY_LADDER.latest + 1}
