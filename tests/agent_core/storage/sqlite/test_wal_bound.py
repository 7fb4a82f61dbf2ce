"""The -wal file stays near ``state.checkpoint_wal_pages`` under a write burst, once a long reader lets go."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import time
from pathlib import Path

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateSettings, StateStore
from tests.adapters.fakes.recording_sink import wait_until

PAGES = 100  # the smallest bound allowed: 100 pages of 4 KiB
BOUND = PAGES * 4096
TEXT = "a fairly long message that fills pages " * 50


def _wal_bytes(home: Path) -> int:
    try:
        return (home / "state.db-wal").stat().st_size
    except FileNotFoundError:
        return 0


async def _burst(store: StateStore, segment: str, batches: int) -> list[int]:
    """Append ``batches`` batches of ten 2 KB messages; the WAL size after each batch."""
    sizes = []
    for n in range(batches):
        await store.append_messages(segment, [NewMessage(role="user", content=f"{n} {TEXT}")] * 10)
        sizes.append(_wal_bytes(store.paths.db.parent))
    return sizes


async def test_the_wal_is_cut_back_after_a_long_reader_and_stays_bounded_under_a_burst(home: Path) -> None:
    settings = StateSettings(checkpoint_wal_pages=PAGES, checkpoint_interval_s=0.02)
    async with StateStore(home, settings) as store:
        conversation = await store.ensure_conversation("web:dm:x", Principal(person_id="p1", platform="web"))
        segment = conversation.tip_session_id
        reader = sqlite3.connect(home / "state.db", isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM messages").fetchone()  # holds its snapshot from here on
            held = await _burst(store, segment, 150)
            # SQLite cannot recycle frames a reader may still need: the WAL grows while it reads.
            assert held[-1] > 4 * BOUND
            reader.execute("COMMIT")
        finally:
            reader.close()
        deadline = time.monotonic() + 10.0
        after: list[int] = []
        for _ in range(10_000):
            after.extend(await _burst(store, segment, 1))
            if after[-1] <= BOUND or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.005)
        assert after[-1] <= BOUND, f"the WAL stayed at {after[-1]} bytes after the reader finished"
        # A sustained burst (~20 MB of WAL frames): the file is cut back again and again, so it never gets
        # further past the bound than one checkpoint interval's writes (generous here: CI machines are busy).
        sustained = await _burst(store, segment, 400)
        assert max(sustained) <= 32 * BOUND, sustained
        assert min(sustained[-100:]) <= BOUND, sustained
        assert await store.message_count() == 10 * (150 + len(after) + 400)


def _duty_taken(home: Path) -> bool:
    """True while some checkpointer holds the home's checkpoint duty (a flock from another open file)."""
    fd = os.open(home / "state.db.checkpoint.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


async def test_one_checkpointer_per_home_and_the_duty_passes_on_when_its_holder_closes(home: Path) -> None:
    """Processes on one home share one checkpointer's I/O; when it goes, another takes the duty."""
    settings = StateSettings(checkpoint_interval_s=0.02)
    first: StateStore | None = StateStore(home, settings)
    assert first is not None
    await first.__aenter__()
    try:
        async with StateStore(home, settings):
            await wait_until(lambda: _duty_taken(home), what="a checkpointer on duty")
            await first.__aexit__(None, None, None)
            first = None
            await wait_until(lambda: _duty_taken(home), what="the second store's checkpointer taking over")
    finally:
        if first is not None:
            await first.__aexit__(None, None, None)
    assert not _duty_taken(home)
