"""Crash safety of long polling with real processes: ``kill -9`` mid-stream loses no update."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from tests.adapters.fakes.recording_sink import wait_until
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user

ROOT = Path(__file__).resolve().parents[3]
ALICE = tg_user(42, "Alice")


def _stored(ledger: Path) -> set[str]:
    """The event ids the stand-in stored: whole lines of its ledger file."""
    try:
        text = ledger.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    return set(text.splitlines()[: text.count("\n")])


async def _spawn(fake: FakeTelegramServer, ledger: Path, delay_s: float) -> asyncio.subprocess.Process:
    module = "tests.adapters.telegram.poller_process"
    args = (fake.api_base_url, fake.token, str(ledger), str(delay_s))
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
    ledger = tmp_path / "ledger.txt"
    async with FakeTelegramServer() as fake:
        ids = {str(fake.push(fake.message_update(private_chat(ALICE), ALICE, f"m{i}"))) for i in range(30)}
        first = await _spawn(fake, ledger, delay_s=0.03)
        try:
            await wait_until(lambda: len(_stored(ledger)) >= 5, 30, "some updates to be stored")
        finally:
            os.kill(first.pid, signal.SIGKILL)
            await _wait_exit(first, 10)
        stored = _stored(ledger)
        assert stored != ids, "the crash should hit mid-stream"
        # Every update the gateway had not stored is still held by Telegram.
        assert ids - stored <= {str(u) for u in fake.pending_update_ids}

        second = await _spawn(fake, ledger, delay_s=0.0)
        try:
            await wait_until(lambda: _stored(ledger) == ids, 30, "every update to be stored after restart")
        finally:
            second.send_signal(signal.SIGTERM)
            assert await _wait_exit(second, 15) == 0
        assert fake.pending_update_ids == []  # all confirmed once stored
