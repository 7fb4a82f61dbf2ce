"""The catch-up indexer: a background thread that copies new messages into the search sidecar.

Invariants: at most one indexer runs across all processes sharing a home (a non-blocking ``flock`` on
``search.db.index.lock``; whoever polls next takes over when the holder dies, since the kernel drops the
lock of a dead process); indexing never touches state.db's write lock (it only reads ``messages``), so
appends never wait for it; each batch is one sidecar transaction sized to hold the sidecar lock about
``index_batch_ms``; the lock holder also runs state.db's WAL checkpoints, off every append path.
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

from .connection import connect, is_busy
from .errors import StateError
from .settings import StateSettings
from .sidecar import PendingRow, index_rows, open_sidecar, read_progress, remove_sidecar, reset

_CHECKPOINT_EVERY_S = 0.5
_MIN_BATCH = 16


class CatchUpIndexer:
    """Owns the indexer thread of one StateStore; call ``notify()`` after local appends commit."""

    def __init__(
        self,
        db_path: Path,
        sidecar_path: Path,
        settings: StateSettings,
        log: logging.Logger,
    ) -> None:
        self._db_path = db_path
        self._sidecar_path = sidecar_path
        self._lock_path = sidecar_path.with_name(sidecar_path.name + ".index.lock")
        self._settings = settings
        self._log = log
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._suspect_sidecar = False
        self.holds_lock = False
        self.rows_indexed = 0
        self.rebuilds = 0
        self.checkpoints = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="state-indexer", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        self._wake.set()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while not self._stop.is_set():
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self._stop.wait(self._settings.index_takeover_s)
                    continue
                self.holds_lock = True
                try:
                    self._serve()
                except (sqlite3.Error, StateError, OSError):
                    self._log.warning("search indexer failed; retrying", exc_info=True)
                    self._stop.wait(self._settings.index_poll_s)
                finally:
                    self.holds_lock = False
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _serve(self) -> None:
        state = connect(self._db_path, busy_timeout_ms=self._settings.busy_timeout_ms)
        try:
            db_uuid = str(state.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])
            sidecar, last_id = self._open_valid_sidecar(state, db_uuid)
            try:
                self._catch_up_forever(state, sidecar, db_uuid, last_id)
            except sqlite3.DatabaseError as exc:
                if not is_busy(exc):
                    self._suspect_sidecar = True
                raise
            finally:
                sidecar.close()
        finally:
            state.close()

    def _open_valid_sidecar(self, state: sqlite3.Connection, db_uuid: str) -> tuple[sqlite3.Connection, int]:
        busy = self._settings.busy_timeout_ms
        if self._suspect_sidecar:
            self._rebuild_files()
        try:
            sidecar = open_sidecar(self._sidecar_path, busy_timeout_ms=busy)
            progress = read_progress(sidecar)
        except (sqlite3.DatabaseError, StateError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
                raise
            self._log.warning("search index %s is unreadable (%s); rebuilding it", self._sidecar_path, exc)
            self._rebuild_files()
            sidecar = open_sidecar(self._sidecar_path, busy_timeout_ms=busy)
            progress = read_progress(sidecar)
        high = _high_water(state)
        scope = self._settings.trigram_scope
        if progress.db_uuid != db_uuid or progress.last_id > high or progress.trigram_scope != scope:
            if progress.db_uuid:
                self.rebuilds += 1
                self._log.warning(
                    "search index %s does not match %s (other or newer database, or scope); rebuilding",
                    self._sidecar_path,
                    self._db_path,
                )
            reset(sidecar, db_uuid, scope)
            return sidecar, 0
        return sidecar, progress.last_id

    def _rebuild_files(self) -> None:
        self.rebuilds += 1
        remove_sidecar(self._sidecar_path)
        self._suspect_sidecar = False

    def _catch_up_forever(
        self, state: sqlite3.Connection, sidecar: sqlite3.Connection, db_uuid: str, last_id: int
    ) -> None:
        settings = self._settings
        batch = min(256, settings.index_batch_rows)
        last_checkpoint = time.monotonic()
        while not self._stop.is_set():
            requested = batch
            rows = _pending(state, last_id, requested)
            if rows:
                started = time.perf_counter()
                index_rows(sidecar, rows, db_uuid, settings.trigram_scope)
                elapsed = time.perf_counter() - started
                last_id = rows[-1].id
                self.rows_indexed += len(rows)
                batch = _next_batch(batch, len(rows), elapsed, settings)
            if time.monotonic() - last_checkpoint >= _CHECKPOINT_EVERY_S:
                self._checkpoint(state)
                last_checkpoint = time.monotonic()
            if len(rows) == requested:
                continue
            if self._wake.wait(settings.index_poll_s):
                self._wake.clear()
                # Let a burst of appends accumulate: bigger batches cost less per message.
                self._stop.wait(settings.index_coalesce_s)

    def _checkpoint(self, state: sqlite3.Connection) -> None:
        # PASSIVE never takes the write lock, so appends in every process proceed meanwhile.
        with contextlib.suppress(sqlite3.OperationalError):
            state.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self.checkpoints += 1


def _high_water(state: sqlite3.Connection) -> int:
    row = state.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()
    return int(row[0]) if row is not None else 0


def _pending(state: sqlite3.Connection, after_id: int, limit: int) -> list[PendingRow]:
    cursor = state.execute(
        "SELECT id, role, content, tool_name FROM messages WHERE id > ? ORDER BY id LIMIT ?",
        (after_id, limit),
    )
    return [PendingRow(int(r[0]), str(r[1]), r[2], r[3]) for r in cursor.fetchall()]


def _next_batch(batch: int, got: int, elapsed: float, settings: StateSettings) -> int:
    """Size the next batch so one sidecar transaction takes about ``index_batch_ms``."""
    if got < _MIN_BATCH or elapsed <= 0:
        return batch
    per_row = elapsed / got
    target = int(settings.index_batch_ms / 1000.0 / per_row)
    return max(_MIN_BATCH, min(settings.index_batch_rows, target))
