"""kill -9 of a memory writer at random points: the file stays whole and every acknowledged add survives."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_core.memory import SyncMemoryStore
from agent_core.memory.filestore import MemoryFile
from tests.multiprocess.memory_worker import WORKER_SETTINGS

REPO = Path(__file__).resolve().parents[2]
PERSON = "alice"
WORKER_COMMAND = (sys.executable, "-m", "tests.multiprocess.memory_worker")


def acknowledged(ack: Path) -> list[str]:
    if not ack.exists():
        return []
    return [line for line in ack.read_text(encoding="utf-8").split("\n") if line]


def wait_for_acks(ack: Path, at_least: int, worker: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(acknowledged(ack)) >= at_least:
            return
        assert worker.poll() is None, "worker exited early"
        time.sleep(0.002)
    raise AssertionError(f"worker did not acknowledge {at_least} adds in {timeout}s")


def test_kill_9_at_random_points_loses_no_acknowledged_add(tmp_path: Path) -> None:
    rng = random.Random(os.getpid())
    memory_md = tmp_path / "memories" / "people" / PERSON / "MEMORY.md"
    acked: list[str] = []
    for round_no in range(4):
        ack = tmp_path / f"ack{round_no}"
        worker = subprocess.Popen(
            [*WORKER_COMMAND, str(tmp_path), PERSON, f"r{round_no}", "100000", str(ack)],
            cwd=REPO,
        )
        try:
            wait_for_acks(ack, rng.randint(3, 30), worker)
            os.kill(worker.pid, signal.SIGKILL)
        finally:
            worker.wait(timeout=30)
        assert worker.returncode == -signal.SIGKILL
        acked += acknowledged(ack)

        contents = MemoryFile(memory_md).read()
        assert contents.problem is None, "the file must parse after a crash"
        assert set(acked) <= set(contents.entries)

    # The next writer cleans up whatever temp file a killed writer left behind.
    store = SyncMemoryStore(tmp_path, WORKER_SETTINGS)
    assert store.add(
        person_id=PERSON, target="memory", content="after the crashes", is_admin=False
    ).result.success
    assert not [p for p in memory_md.parent.iterdir() if p.name.endswith(".tmp")]
    assert set(acked) | {"after the crashes"} <= set(store.view(person_id=PERSON, target="memory").entries)
