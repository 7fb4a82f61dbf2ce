"""Migrations: ordered, applied once each, keeping data; a database newer than the code is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_core.state import StateSettings, StateStore, StateUnavailableError
from agent_core.state.connection import connect
from agent_core.state.engine import StorePaths
from agent_core.state.schema import LATEST_VERSION, MIGRATIONS, migrate, read_version
from agent_core.state.writer import WriteGate


def _old_database(home: Path, version: int) -> None:
    paths = StorePaths.for_home(home, StateSettings())
    conn = connect(paths.db, busy_timeout_ms=100)
    gate = WriteGate(conn, paths.db, paths.write_lock, StateSettings())
    try:
        assert migrate(gate, paths.db, target=version) == version
        conn.execute(
            "INSERT INTO conversations(id, session_key, created_at, tip_session_id) "
            "VALUES ('cv_old', 'k', 1, 's')"
        )
    finally:
        gate.close()
        conn.close()


def test_versions_are_strictly_ordered() -> None:
    versions = [m.version for m in MIGRATIONS]
    assert versions == sorted(set(versions)) and versions[0] == 1 and versions[-1] == LATEST_VERSION


async def test_an_old_database_is_upgraded_in_place_keeping_its_rows(tmp_path: Path) -> None:
    _old_database(tmp_path, 1)
    async with StateStore(tmp_path) as store:
        kept = await store.get_conversation("cv_old")
    conn = sqlite3.connect(tmp_path / "state.db")
    try:
        assert read_version(conn) == LATEST_VERSION
        assert conn.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0
    finally:
        conn.close()
    assert kept is not None and kept.session_key == "k"


async def test_a_database_from_a_newer_program_is_refused_with_one_clear_error(tmp_path: Path) -> None:
    _old_database(tmp_path, LATEST_VERSION)
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.execute("UPDATE schema_version SET version = ?", (LATEST_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StateUnavailableError, match=r"state\.db is unusable: schema version \d+ is newer"):
        async with StateStore(tmp_path):
            pass
