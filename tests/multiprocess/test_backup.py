"""`mnemogate backup` while 4 writer processes append: a sound copy holding every acknowledged message."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from .state_writer import message_text

_REPO = Path(__file__).resolve().parents[2]
_WRITERS = 4
_ACKED_BEFORE = 30  # each writer has this many acknowledged appends before the backup starts


class _Acks:
    """Acknowledged (message id -> text) per writer, read from each writer's stdout by a thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._acked: dict[int, dict[int, str]] = {}

    def follow(self, writer: int, process: subprocess.Popen[str]) -> threading.Thread:
        assert process.stdout is not None
        stream = process.stdout

        def read() -> None:
            for line in stream:
                _, message_id, seq = line.split()
                with self._lock:
                    self._acked.setdefault(writer, {})[int(message_id)] = message_text(writer, int(seq))

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        return thread

    def snapshot(self) -> dict[int, str]:
        with self._lock:
            return {mid: text for acked in self._acked.values() for mid, text in acked.items()}

    def least(self) -> int:
        with self._lock:
            return min((len(self._acked.get(w, {})) for w in range(_WRITERS)), default=0)


def _start_writer(home: Path, writer: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.multiprocess.state_writer",
            "append",
            str(home),
            str(writer),
            "1000000",
        ],
        cwd=_REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_REPO)},
    )


def test_backup_under_four_appending_writers_is_sound_and_complete(home: Path, tmp_path: Path) -> None:
    acks = _Acks()
    writers = [_start_writer(home, n) for n in range(_WRITERS)]
    try:
        for n, process in enumerate(writers):
            acks.follow(n, process)
        deadline = time.monotonic() + 60
        while acks.least() < _ACKED_BEFORE and time.monotonic() < deadline:
            assert all(p.poll() is None for p in writers), "a writer died"
            time.sleep(0.01)
        assert acks.least() >= _ACKED_BEFORE, "writers did not get going"

        acknowledged = acks.snapshot()
        backup = tmp_path / "backup"
        done = subprocess.run(
            [sys.executable, "-m", "gateway.cli.backup_command", "--home", str(home), "backup", str(backup)],
            cwd=_REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(_REPO)},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        # The writers were never stopped: they are still appending after the backup finished.
        assert all(p.poll() is None for p in writers)
        after = len(acks.snapshot())
        deadline = time.monotonic() + 30
        while len(acks.snapshot()) <= after and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(acks.snapshot()) > after
    finally:
        for process in writers:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

    conn = sqlite3.connect(f"file:{backup / 'state.db'}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        stored = dict(conn.execute("SELECT id, content FROM messages").fetchall())
    finally:
        conn.close()
    missing = {mid for mid, text in acknowledged.items() if stored.get(mid) != text}
    assert missing == set(), f"{len(missing)} acknowledged messages missing from the backup"
    assert not (backup / "state.db-wal").exists()
