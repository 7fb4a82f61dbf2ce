"""``kill -9`` of a writer at random points never corrupts state.db or its search index and never loses an
acknowledged write."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_core.storage.sqlite.connection import connect
from gateway.storage.sqlite import open_state_store

from .state_writer import unique_token

_REPO = Path(__file__).resolve().parents[2]
_KILLS = 20


def _run_and_kill(home: Path, writer: int, rng: random.Random) -> dict[int, int]:
    """Start a writer, let it acknowledge a random number of appends, SIGKILL it; return acked id -> seq."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.multiprocess.state_writer", "append", str(home), str(writer), "100000"],
        cwd=_REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_REPO)},
    )
    assert process.stdout is not None
    acked: dict[int, int] = {}
    wanted = rng.randint(1, 40)
    deadline = time.monotonic() + 20
    try:
        while len(acked) < wanted and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            _, message_id, seq = line.split()
            acked[int(message_id)] = int(seq)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        # Lines already printed before the kill were acknowledged too.
        for line in process.stdout:
            if line.startswith("ack "):
                _, message_id, seq = line.split()
                acked[int(message_id)] = int(seq)
        process.wait(10)
    assert len(acked) >= wanted, "writer produced too few acknowledgements before the deadline"
    return acked


async def _check(home: Path, acked: dict[int, dict[int, int]]) -> None:
    async with open_state_store(home) as store:
        assert await store.wait_indexed(30)
        for writer, writes in acked.items():
            conversation = await store.live_conversation(f"crash:{writer}")
            assert conversation is not None
            stored = {m.id: m.content or "" for m in await store.conversation_messages(conversation.id)}
            for message_id, seq in writes.items():
                assert unique_token(writer, seq) in stored[message_id]
            for message_id, content in stored.items():
                token = next(word for word in content.split() if word.startswith(f"tok{writer}q"))
                cjk = next(word for word in content.split() if word.startswith("甲"))
                porter = await store.fts_match(f'"{token}"', None, limit=5)
                trigram = await store.fts_match(None, f'"{cjk}"', limit=5)
                assert [h.message_id for h in porter] == [message_id]
                assert [h.message_id for h in trigram] == [message_id]
    for name in ("state.db", "search.db"):
        conn = connect(home / name, busy_timeout_ms=1000)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
    conn = connect(home / "state.db", busy_timeout_ms=1000)
    try:
        conn.execute("ATTACH DATABASE ? AS idx", (str(home / "search.db"),))
        message_ids = {r[0] for r in conn.execute("SELECT id FROM messages")}
        for table in ("fts_porter", "fts_trigram"):
            conn.execute(f"INSERT INTO idx.{table}({table}) VALUES ('integrity-check')")
            assert {r[0] for r in conn.execute(f"SELECT rowid FROM idx.{table}")} == message_ids
    finally:
        conn.close()


def test_kill_9_at_random_points_loses_no_acknowledged_write_and_keeps_indexes_consistent(
    tmp_path: Path,
) -> None:
    rng = random.Random(1234)
    acked: dict[int, dict[int, int]] = {}
    for writer in range(_KILLS):
        acked[writer] = _run_and_kill(tmp_path, writer, rng)
    asyncio.run(_check(tmp_path, acked))
