"""The WAL checkpointer: a background thread that keeps state.db's ``-wal`` file near a size bound.

Invariants: appends never run a checkpoint (the writer connection's autocheckpoint is off, see engine.py);
every ``checkpoint_interval_s`` a PASSIVE checkpoint copies what it can without taking any lock a writer
waits on. Only once the file has grown past ``checkpoint_wal_pages`` pages does a TRUNCATE checkpoint run,
holding the store's write flock so writers queue behind it and SQLite's wait for readers capped at
``checkpoint_busy_ms`` — an append waits at most that long plus the copy of the last interval's frames.
A reader holding an old snapshot keeps the WAL growing while it reads (SQLite cannot recycle frames it may
still need); while passive passes make no progress the TRUNCATE attempts back off (up to
``_MAX_BACKOFF_S``), and the first pass that copies again after the reader finished cuts the file back.
Every process starts one, but only the holder of ``state.db.checkpoint.lock`` (a non-blocking flock,
retried every interval, released by the kernel when its process dies) checkpoints, so N processes on one
home cost one checkpointer's I/O, and another takes over within an interval of the holder's death. The
size is re-read under the write flock, so a WAL another process just truncated is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from ..errors import StateError
from .connection import connect
from .settings import StateSettings

_MAX_BACKOFF_S = 8.0


class WalCheckpointer:
    """Owns the checkpoint thread of one open state.db in WAL mode; ``start`` it, ``stop`` it on close."""

    def __init__(
        self, db_path: Path, lock_path: Path | None, settings: StateSettings, log: logging.Logger
    ) -> None:
        self._db_path = db_path
        self._wal_path = db_path.with_name(db_path.name + "-wal")
        self._lock_path = lock_path
        self._settings = settings
        self._log = log
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._backoff_s = 0.0
        self._retry_at = 0.0
        self._last_copied = -1
        self.truncations = 0
        self.busy_truncations = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="state-checkpointer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            conn = connect(self._db_path, busy_timeout_ms=self._settings.checkpoint_busy_ms)
        except (sqlite3.Error, StateError):
            self._log.warning("WAL checkpointer: cannot open %s; not running", self._db_path, exc_info=True)
            return
        lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600) if self._lock_path else None
        duty_path = self._db_path.with_name(self._db_path.name + ".checkpoint.lock")
        duty_fd = os.open(duty_path, os.O_RDWR | os.O_CREAT, 0o600)
        on_duty = False
        try:
            page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
            bound = self._settings.checkpoint_wal_pages * page_size
            while not self._stop.wait(self._settings.checkpoint_interval_s):
                on_duty = on_duty or _try_lock(duty_fd)
                if not on_duty:
                    continue
                # Best effort: a busy or failing pass is tried again next interval (damage to state.db is
                # reported by the store's reads and readiness, not here).
                with contextlib.suppress(sqlite3.Error):
                    self.run_once(conn, lock_fd, bound)
        finally:
            os.close(duty_fd)  # releases the duty lock for another process
            if lock_fd is not None:
                os.close(lock_fd)
            conn.close()

    def run_once(self, conn: sqlite3.Connection, lock_fd: int | None, bound: int) -> None:
        """One pass: a passive checkpoint, then a truncating one if the file is over ``bound`` bytes."""
        if self._wal_size() == 0:
            return
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        # Frames left that the last pass could not copy either: a reader holds an old snapshot.
        pinned = bool(busy) or (frames > copied and copied == self._last_copied)
        self._last_copied = copied
        if self._wal_size() <= bound or (pinned and time.monotonic() < self._retry_at):
            return
        if lock_fd is not None:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        try:
            if self._wal_size() <= bound:
                return
            truncated = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            if lock_fd is not None:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
        if truncated[0]:
            # A reader still needs old frames: let it finish instead of stalling writers every interval.
            self.busy_truncations += 1
            interval = self._settings.checkpoint_interval_s
            self._backoff_s = min(_MAX_BACKOFF_S, max(interval, self._backoff_s * 2))
            self._retry_at = time.monotonic() + self._backoff_s
            return
        self.truncations += 1
        self._backoff_s, self._retry_at = 0.0, 0.0

    def _wal_size(self) -> int:
        try:
            return self._wal_path.stat().st_size
        except FileNotFoundError:
            return 0


def _try_lock(fd: int) -> bool:
    """Take the exclusive flock on ``fd`` if nobody holds it; never waits."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
