"""Opening a home whose state.db lost its data: refused with one line, never silently started anew.

An empty state.db next to search.db or curated memories, and a database with a damaged middle page, are
refused when the store opens; an empty file in a home that was never used is a fresh start; asking for a
new database moves a damaged file aside (never deletes it) and leaves a healthy one alone.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.storage import NewMessage, Principal, StateUnavailableError
from agent_core.storage.sqlite import SetAside, StateSettings, StateStore, set_aside_damaged

from .damaged_home import damage_middle_pages, home_with_messages


async def _refusal(home: Path, settings: StateSettings | None = None) -> StateUnavailableError:
    with pytest.raises(StateUnavailableError) as caught:
        async with StateStore(home, settings):
            pass
    return caught.value


def _set_aside(home: Path) -> SetAside | None:
    return set_aside_damaged(home, log=logging.getLogger("test"))


def _moved_aside(home: Path) -> list[Path]:
    return list(home.glob("state.db.corrupt-*"))


def _one_line_naming(error: Exception, db: Path) -> str:
    text = str(error)
    assert str(db) in text and "\n" not in text
    return text


async def test_an_empty_state_db_next_to_its_search_index_is_refused(home: Path) -> None:
    await home_with_messages(home, conversations=1, messages=3)
    (home / "state.db").write_bytes(b"")
    text = _one_line_naming(await _refusal(home), home / "state.db")
    assert "empty" in text and "search.db" in text and "--new-state" in text
    assert (home / "state.db").stat().st_size == 0  # refused, not initialised as a new database


async def test_an_empty_state_db_next_to_curated_memories_is_refused(home: Path) -> None:
    (home / "memories" / "people" / "alice").mkdir(parents=True)
    (home / "memories" / "people" / "alice" / "USER.md").write_text("Prefers tea.\n")
    (home / "state.db").write_bytes(b"")
    text = _one_line_naming(await _refusal(home), home / "state.db")
    assert "memories/" in text


async def test_an_empty_state_db_in_an_unused_home_is_a_fresh_start(home: Path) -> None:
    (home / "memories").mkdir()  # an empty directory is no sign of data
    (home / "state.db").write_bytes(b"")
    async with StateStore(home) as store:
        assert await store.message_count() == 0


async def test_a_damaged_middle_page_is_refused_when_the_store_opens(home: Path) -> None:
    await home_with_messages(home)
    damage_middle_pages(home / "state.db")
    text = _one_line_naming(await _refusal(home), home / "state.db")
    assert "integrity check" in text
    # Every command refuses the file (chat, sessions …), but only serve and worker take the flag.
    assert "mnemogate serve --new-state" in text


async def test_an_unreadable_file_is_refused_as_damaged(home: Path) -> None:
    await home_with_messages(home, conversations=1, messages=3)
    (home / "state.db").write_bytes(b"this is not a database" * 1000)
    text = _one_line_naming(await _refusal(home), home / "state.db")
    assert "not an SQLite database" in text


async def test_zero_turns_the_check_off(home: Path) -> None:
    await home_with_messages(home)
    damage_middle_pages(home / "state.db")
    async with StateStore(home, StateSettings(integrity_check_s=0)) as store:
        assert store.stats().journal_mode == "wal"


async def test_the_check_stops_at_its_time_budget(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    # ~10 MB: tens of ms to check, so the 1 ms budget runs out whatever the scheduling of the stopper thread.
    await home_with_messages(home, conversations=4, messages=5000)
    with caplog.at_level(logging.INFO, logger="agent_core.storage.sqlite"):
        async with StateStore(home, StateSettings(integrity_check_s=0.001)) as store:
            assert await store.message_count() == 20000
    assert any("integrity check stopped after 0.001 s" in r.getMessage() for r in caplog.records)


async def test_asking_for_a_new_database_moves_a_damaged_one_aside(home: Path) -> None:
    await home_with_messages(home)
    damage_middle_pages(home / "state.db")
    damaged = (home / "state.db").read_bytes()
    moved = _set_aside(home)
    assert moved is not None and "integrity check" in moved.reason
    assert moved.moved_to.name.startswith("state.db.corrupt-") and moved.moved_to.read_bytes() == damaged
    assert not (home / "state.db").exists() and not (home / "search.db").exists()
    async with StateStore(home) as store:
        assert await store.message_count() == 0
    assert sqlite3.connect(moved.moved_to).execute("PRAGMA page_count").fetchone()[0] > 0


async def test_asking_for_a_new_database_keeps_a_healthy_one(home: Path) -> None:
    await home_with_messages(home, conversations=1, messages=3)
    assert _set_aside(home) is None
    async with StateStore(home) as store:
        assert await store.message_count() == 3
    assert _moved_aside(home) == []


async def test_asking_for_a_new_database_moves_an_empty_file_aside(home: Path) -> None:
    await home_with_messages(home, conversations=1, messages=3)
    (home / "state.db").write_bytes(b"")
    moved = _set_aside(home)
    assert moved is not None and moved.moved_to.stat().st_size == 0
    async with StateStore(home) as store:
        assert await store.message_count() == 0


async def _empty_state_db_beside_its_wal(home: Path) -> bytes:
    """A home whose state.db was truncated to 0 bytes while its -wal kept data; returns the WAL's bytes."""
    async with StateStore(home) as store:
        conversation = await store.ensure_conversation("k", Principal(person_id="p"))
        await store.append_messages(conversation.tip_session_id, [NewMessage("user", "apricot")])
        wal = (home / "state.db-wal").read_bytes()
    assert len(wal) > 0
    (home / "state.db").write_bytes(b"")
    (home / "state.db-wal").write_bytes(wal)
    return wal


def _remove_search_index(home: Path) -> None:
    for path in home.glob("search.db*"):
        path.unlink()


async def test_an_empty_state_db_whose_wal_holds_data_is_refused_and_the_wal_kept(home: Path) -> None:
    # SQLite deletes the -wal of a 0-byte database when it opens it: the WAL is the only data left, so
    # the file is refused before anything connects to it, even with no search.db or memories beside it.
    wal = await _empty_state_db_beside_its_wal(home)
    _remove_search_index(home)
    text = _one_line_naming(await _refusal(home), home / "state.db")
    assert "empty" in text and "state.db-wal" in text
    assert (home / "state.db-wal").read_bytes() == wal
    moved = _set_aside(home)
    assert moved is not None and moved.moved_to.with_name(moved.moved_to.name + "-wal").read_bytes() == wal


# Dies (as kill -9 would) when set_aside_damaged is about to rename state.db itself, its journals moved.
_KILLED_BEFORE_THE_DB_MOVES = """
import logging, os, sys
from pathlib import Path

def die_before_the_db_moves(event, args):
    if event == "os.rename" and Path(args[0]).name == "state.db":
        os._exit(9)

sys.addaudithook(die_before_the_db_moves)
from agent_core.storage.sqlite import set_aside_damaged
set_aside_damaged(Path(sys.argv[1]), log=logging.getLogger())
"""


def test_a_move_aside_killed_halfway_is_finished_under_the_same_name(home: Path) -> None:
    wal = asyncio.run(_empty_state_db_beside_its_wal(home))
    killed = subprocess.run([sys.executable, "-c", _KILLED_BEFORE_THE_DB_MOVES, str(home)], timeout=60)
    assert killed.returncode == 9
    (orphan_wal,) = home.glob("state.db.corrupt-*-wal")  # the journal moved, then the process died
    assert (home / "state.db").exists() and not (home / "state.db-wal").exists()
    moved = _set_aside(home)  # the operator runs --new-state again
    assert moved is not None and moved.moved_to.with_name(moved.moved_to.name + "-wal") == orphan_wal
    assert moved.moved_to.stat().st_size == 0 and orphan_wal.read_bytes() == wal
    assert set(home.glob("state.db.corrupt-*")) == {moved.moved_to, orphan_wal}
