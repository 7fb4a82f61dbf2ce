"""Opening state.db: the WAL-or-DELETE decision on real SQLite errors, and one clear error for a bad file."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.storage import StateUnavailableError
from agent_core.storage.sqlite import StateStore, wal_unsupported
from agent_core.storage.sqlite.connection import apply_journal_mode, connect

_REPO = Path(__file__).resolve().parents[4]


def _deny_wal(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    if action == sqlite3.SQLITE_PRAGMA and arg1 == "journal_mode" and (arg2 or "").lower() == "wal":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def test_wal_fallback_decision_uses_the_real_sqlite_error_texts(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.set_authorizer(_deny_wal)
    with pytest.raises(sqlite3.DatabaseError) as denied:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert wal_unsupported(denied.value)  # SQLITE_AUTH: "not authorized"
    # SQLITE_PROTOCOL's text as sqlite3_errstr(15) spells it; it cannot be provoked on a local disk.
    assert wal_unsupported(sqlite3.OperationalError("locking protocol"))
    assert not wal_unsupported(sqlite3.OperationalError("database is locked"))
    assert not wal_unsupported(sqlite3.OperationalError("disk I/O error"))


def test_a_filesystem_refusing_wal_falls_back_to_delete_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    conn = connect(tmp_path / "state.db", busy_timeout_ms=100)
    conn.set_authorizer(_deny_wal)
    log = logging.getLogger("test.state.wal")
    with caplog.at_level(logging.WARNING, logger="test.state.wal"):
        mode = apply_journal_mode(conn, tmp_path / "state.db", log)
    assert mode == "delete"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert len(caplog.records) == 1 and "journal_mode=DELETE" in caplog.records[0].getMessage()
    conn.close()


async def test_a_fresh_store_uses_wal(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        assert store.stats().journal_mode == "wal"


async def _open_error(home: Path) -> StateUnavailableError:
    with pytest.raises(StateUnavailableError) as caught:
        async with StateStore(home):
            pass
    return caught.value


async def test_garbage_bytes_give_one_clear_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "state.db").write_bytes(os.urandom(16384))
    error = await _open_error(tmp_path)
    assert str(tmp_path / "state.db") in str(error) and "\n" not in str(error)
    assert "not an SQLite database" in str(error)


async def test_a_directory_in_place_of_the_file_gives_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "state.db").mkdir()
    error = await _open_error(tmp_path)
    assert str(tmp_path / "state.db") in str(error) and "directory" in str(error)


async def test_a_truncated_database_gives_one_clear_error(tmp_path: Path) -> None:
    async with StateStore(tmp_path):
        pass
    data = (tmp_path / "state.db").read_bytes()
    (tmp_path / "state.db").write_bytes(data[:100] + os.urandom(len(data) - 100))
    error = await _open_error(tmp_path)
    assert str(tmp_path / "state.db") in str(error) and "\n" not in str(error)


_NO_PERMISSION_PROBE = """
import asyncio, os, sys
from pathlib import Path
from agent_core.storage.sqlite import StateStore
from agent_core.storage import StateUnavailableError
if os.geteuid() == 0:
    # root ignores file modes: drop to an unprivileged user once the interpreter and modules are loaded.
    os.setgid(65534)
    os.setuid(65534)
async def main():
    try:
        async with StateStore(Path(sys.argv[1])):
            pass
    except StateUnavailableError as exc:
        print(exc)
        return
    print("OPENED")
asyncio.run(main())
"""


async def _create(home: Path) -> None:
    async with StateStore(home):
        pass


def test_a_file_without_permission_gives_one_clear_error(tmp_path: Path) -> None:
    asyncio.run(_create(tmp_path))
    (tmp_path / "state.db").chmod(0o000)
    probe = subprocess.run(
        [sys.executable, "-c", _NO_PERMISSION_PROBE, str(tmp_path)],
        cwd=_REPO,
        env={**os.environ, "PYTHONPATH": str(_REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(f"state database {tmp_path / 'state.db'} is unusable")
    assert probe.stdout.count("\n") == 1
