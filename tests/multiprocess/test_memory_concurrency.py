"""Several OS processes adding to one memory file never lose an entry or leave a temp file behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_core.memory import SyncMemoryStore
from agent_core.memory.filestore import MemoryFile
from tests.multiprocess.memory_worker import WORKER_SETTINGS

REPO = Path(__file__).resolve().parents[2]
PERSON = "alice"
WORKER_COMMAND = (sys.executable, "-m", "tests.multiprocess.memory_worker")


def start_worker(home: Path, prefix: str, count: int, ack: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.multiprocess.memory_worker",
            str(home),
            PERSON,
            prefix,
            str(count),
            str(ack),
        ],
        cwd=REPO,
        stderr=subprocess.PIPE,
    )


def test_four_processes_times_fifty_adds_lose_nothing(tmp_path: Path) -> None:
    workers = [start_worker(tmp_path, f"w{n}", 50, tmp_path / f"ack{n}") for n in range(4)]
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr.decode()

    memory_md = tmp_path / "memories" / "people" / PERSON / "MEMORY.md"
    contents = MemoryFile(memory_md).read()
    assert contents.problem is None
    assert sorted(contents.entries) == sorted(f"w{n}-{i}" for n in range(4) for i in range(50))
    assert len(contents.entries) == 200
    store = SyncMemoryStore(tmp_path, WORKER_SETTINGS)
    assert store.view(person_id=PERSON, target="memory").usage.entry_count == 200
    assert not [p for p in memory_md.parent.iterdir() if p.name.endswith(".tmp")]
