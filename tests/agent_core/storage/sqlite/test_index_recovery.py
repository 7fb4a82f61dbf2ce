"""search.db lost while the store runs: the indexer notices, rebuilds it online, and search works again."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from agent_core.storage import NewMessage, Principal, SearchIndexUnavailableError
from agent_core.storage.sqlite import StateStore

_REBUILD_DEADLINE_S = 15.0


async def _found(store: StateStore, word: str) -> list[int]:
    try:
        return [hit.message_id for hit in await store.fts_match(f'"{word}"', None, limit=5)]
    except SearchIndexUnavailableError:
        return []


@pytest.mark.parametrize("suffixes", [("",), ("", "-wal", "-shm")], ids=["search.db", "search.db*"])
async def test_a_search_index_deleted_while_running_is_rebuilt_online(
    home: Path, suffixes: tuple[str, ...]
) -> None:
    async with StateStore(home) as store:
        conversation = await store.ensure_conversation("k", Principal(person_id="p"))
        (old_id,) = await store.append_messages(conversation.tip_session_id, [NewMessage("user", "apricot")])
        assert await store.wait_indexed(5) and await _found(store, "apricot") == [old_id]
        for suffix in suffixes:
            (home / f"search.db{suffix}").unlink(missing_ok=True)
        (new_id,) = await store.append_messages(conversation.tip_session_id, [NewMessage("user", "banana")])

        deadline = time.monotonic() + _REBUILD_DEADLINE_S
        while await _found(store, "apricot") != [old_id] or await _found(store, "banana") != [new_id]:
            assert time.monotonic() < deadline, "search did not come back after search.db was deleted"
            await store.wait_indexed(0.2)  # a bounded wait on the index, not a sleep
        assert (home / "search.db").exists()
        assert store.stats().index_rebuilds >= 1


def _remove_search_files(home: Path) -> None:
    """What `rm search.db*` does: the index, its WAL files and the indexer's lock file."""
    for path in home.glob("search.db*"):
        path.unlink()


def _indexers_running(*stores: StateStore) -> int:
    return sum(store.stats().indexer_active for store in stores)


def _lock_file_is_held(home: Path) -> bool:
    """Whether some indexer holds the lock on the file now named search.db.index.lock."""
    try:
        fd = os.open(home / "search.db.index.lock", os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock this probe took
    return False


async def test_deleting_search_db_and_its_lock_file_never_leaves_two_indexers_running(home: Path) -> None:
    # `rm search.db*` also removes search.db.index.lock; a store opened afterwards creates a new lock file,
    # and the running indexer must move to it instead of keeping its lock on the deleted one.
    async with StateStore(home) as first:
        conversation = await first.ensure_conversation("k", Principal(person_id="p"))
        await first.append_messages(conversation.tip_session_id, [NewMessage("user", "apricot")])
        assert await first.wait_indexed(5)
        _remove_search_files(home)
        async with StateStore(home) as second:
            deadline = time.monotonic() + 5.0
            while not (_indexers_running(first, second) == 1 and _lock_file_is_held(home)):
                assert time.monotonic() < deadline, "two indexers kept running on one home"
                await second.wait_indexed(0.1)  # a bounded wait on the index, not a sleep
            for _ in range(20):  # and it stays that way while messages keep coming
                await first.append_messages(conversation.tip_session_id, [NewMessage("user", "banana")])
                assert await second.wait_indexed(5)
                assert _indexers_running(first, second) == 1
            assert len(await first.fts_match('"banana"', None, limit=50)) == 20
