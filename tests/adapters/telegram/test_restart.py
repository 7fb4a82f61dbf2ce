"""Crash safety of long polling with real processes: ``kill -9`` mid-stream loses no update."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

from tests.adapters.fakes.recording_sink import wait_until
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user

ROOT = Path(__file__).resolve().parents[3]
ALICE = tg_user(42, "Alice")


def _stored(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with sqlite3.connect(db) as connection:
        try:
            return {row[0] for row in connection.execute("SELECT event_id FROM ledger")}
        except sqlite3.OperationalError:
            return set()


async def _spawn(fake: FakeTelegramServer, db: Path, delay_s: float) -> asyncio.subprocess.Process:
    module = "tests.adapters.telegram.poller_process"
    args = (fake.api_base_url, fake.token, str(db), str(delay_s))
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args, cwd=ROOT, stdout=asyncio.subprocess.DEVNULL
    )


async def _wait_exit(process: asyncio.subprocess.Process, within_s: float) -> int:
    try:
        return await asyncio.wait_for(process.wait(), within_s)
    except TimeoutError:
        process.kill()
        raise


async def test_a_kill_9_mid_stream_loses_nothing_and_the_restart_delivers_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    async with FakeTelegramServer() as fake:
        ids = {str(fake.push(fake.message_update(private_chat(ALICE), ALICE, f"m{i}"))) for i in range(30)}
        first = await _spawn(fake, db, delay_s=0.03)
        try:
            await wait_until(lambda: len(_stored(db)) >= 5, 30, "some updates to be stored")
        finally:
            os.kill(first.pid, signal.SIGKILL)
            await _wait_exit(first, 10)
        stored = _stored(db)
        assert stored != ids, "the crash should hit mid-stream"
        # Every update the gateway had not stored is still held by Telegram.
        assert ids - stored <= {str(u) for u in fake.pending_update_ids}

        second = await _spawn(fake, db, delay_s=0.0)
        try:
            await wait_until(lambda: _stored(db) == ids, 30, "every update to be stored after restart")
        finally:
            second.send_signal(signal.SIGTERM)
            assert await _wait_exit(second, 15) == 0
        assert fake.pending_update_ids == []  # all confirmed once stored
