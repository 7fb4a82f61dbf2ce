"""The catch-up indexer: a background thread that copies new messages into the search sidecar.

Invariants: at most one indexer runs across all processes sharing a home (a non-blocking ``flock`` on
``search.db.index.lock``; whoever polls next takes over when the holder dies, since the kernel drops the
lock of a dead process, and a lock file deleted under its holder, as by ``rm search.db*``, is given up
for the one now at its path); indexing never touches state.db's write lock (it only reads ``messages``), so
appends never wait for it; each batch is one sidecar transaction sized to hold the sidecar lock about
``index_batch_ms``. (state.db's WAL checkpoints are the engine's WalCheckpointer's, not the indexer's.)
The progress mark only ever covers rows at or below ``sidecar.committed_watermark``, read before each
batch: the port's ordering rule (agent_core/storage/search_index.py) that no row below the mark can still
appear. A sidecar deleted or replaced under the indexer (its path no longer names the inode it opened) is
rebuilt online from state.db; a failure is retried with growing delays and a bounded log (RetryPacer);
damage found while reading state.db is kept in ``state_damage`` for readiness, and never mistaken for a
damaged sidecar.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import ParamSpec, TypeVar

from ..errors import StateError, StateUnavailableError
from ..search_windows import windowable
from .connection import connect, is_busy, is_file_problem, unavailable
from .retry_pacer import RetryPacer
from .settings import StateSettings
from .sidecar import (
    SIDECAR_FORMAT,
    Alive,
    LiveRows,
    PendingRow,
    committed_watermark,
    format_version,
    index_rows,
    open_sidecar,
    read_progress,
    remove_sidecar,
    reset,
)
from .window_store import WindowWrites, ended_open_segments, live_ids, plan_batch, store_windows

_MIN_BATCH = 16
_TAIL_SWEEP = 64
_TAIL_SWEEP_S = 1.0
_MAX_RETRY_S = 10.0
T = TypeVar("T")
P = ParamSpec("P")


class _SidecarGone(Exception):
    """The sidecar's path no longer names the file the indexer has open (deleted, or replaced)."""


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
        self._sidecar_inode: int | None = None
        self._lock_fd: int | None = None
        self._catching_up_to: int | None = None
        self._next_sweep = 0.0
        self._pacer = RetryPacer("search indexer", log, initial_s=settings.index_poll_s, max_s=_MAX_RETRY_S)
        self.holds_lock = False
        self.rows_indexed = 0
        self.rebuilds = 0
        # The first damage found reading state.db (corrupt pages): it does not heal, so it stays.
        self.state_damage: StateUnavailableError | None = None

    @property
    def failures(self) -> int:
        """How many times indexing failed and was retried since the store opened."""
        return self._pacer.failures

    @property
    def catching_up(self) -> bool:
        """True while the sidecar misses messages it found at (re)open, or was found missing or reset."""
        return self._catching_up_to is not None

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
                if _unlinked(fd):
                    # The lock file was deleted (`rm search.db*`): a lock on it excludes no one, so lock
                    # the file now at its path, which a process opened since then may already hold.
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
                    continue
                self._lock_fd = fd
                self.holds_lock = True
                try:
                    self._serve()
                except _SidecarGone:
                    self._log.warning(
                        "search index %s was deleted or replaced while in use; rebuilding it from %s",
                        self._sidecar_path,
                        self._db_path,
                    )
                    self._suspect_sidecar = True
                    # Rebuilding from now on; the exact target is set once the new sidecar is reset.
                    self._catching_up_to = self._catching_up_to or 1
                except (sqlite3.Error, StateError, OSError) as exc:
                    self._note_state_damage(exc)
                    self._stop.wait(self._pacer.failed(exc))
                finally:
                    self.holds_lock = False
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _note_state_damage(self, exc: BaseException) -> None:
        if isinstance(exc, StateUnavailableError) and exc.damaged and exc.path == self._db_path:
            self.state_damage = self.state_damage or exc

    def _serve(self) -> None:
        state = connect(self._db_path, busy_timeout_ms=self._settings.busy_timeout_ms)
        try:
            db_uuid = self._read_state(_db_uuid, state)
            sidecar, last_id = self._open_valid_sidecar(state, db_uuid)
            try:
                self._catch_up_forever(state, sidecar, db_uuid, last_id)
            finally:
                sidecar.close()
        finally:
            state.close()

    def _read_state(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a read of state.db; its file-level errors become StateUnavailableError (not the sidecar's)."""
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if is_file_problem(exc):
                raise unavailable(self._db_path, exc) from None
            raise

    def _live(self, state: sqlite3.Connection) -> LiveRows:
        """Which messages and segments still exist, asked inside a sidecar transaction (forget.py)."""

        def alive(message_ids: Collection[int], segment_ids: Collection[str]) -> Alive:
            messages, segments = self._read_state(live_ids, state, message_ids, segment_ids)
            return Alive(messages, segments)

        return alive

    def _live_windows(self, state: sqlite3.Connection) -> Callable[[WindowWrites], WindowWrites]:
        live = self._live(state)

        def windows(writes: WindowWrites) -> WindowWrites:
            ids = {i for change in writes.segments for w in change.windows for i in w.message_ids}
            return live(ids, {change.segment_id for change in writes.segments}).windows(writes)

        return windows

    def _write_sidecar(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a sidecar write; an error that is not contention marks the sidecar for a rebuild."""
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if not is_busy(exc):
                self._suspect_sidecar = True
            raise

    def _check_sidecar_file(self) -> None:
        try:
            inode = os.stat(self._sidecar_path).st_ino
        except FileNotFoundError:
            raise _SidecarGone() from None
        if inode != self._sidecar_inode or (self._lock_fd is not None and _unlinked(self._lock_fd)):
            raise _SidecarGone()

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
        self._sidecar_inode = os.stat(self._sidecar_path).st_ino
        high = self._read_state(committed_watermark, state)
        scope = self._settings.trigram_scope
        stale_format = progress.last_id > 0 and format_version(sidecar) < SIDECAR_FORMAT
        if (
            progress.db_uuid != db_uuid
            or progress.last_id > high
            or progress.trigram_scope != scope
            or stale_format
        ):
            if progress.db_uuid:
                self.rebuilds += 1
                self._log.warning(
                    "search index %s does not match %s (other or newer database, or scope); rebuilding",
                    self._sidecar_path,
                    self._db_path,
                )
            self._write_sidecar(reset, sidecar, db_uuid, scope)
            self._catching_up_to = high if high > 0 else None
            return sidecar, 0
        self._catching_up_to = high if progress.last_id < high else None
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
        while not self._stop.is_set():
            self._check_sidecar_file()
            requested = batch
            rows = self._read_state(_pending, state, last_id, requested)
            if rows:
                started = time.perf_counter()
                segments = (r.segment_id for r in rows if windowable(r.role, r.content))
                windows = self._read_state(plan_batch, state, sidecar, segments, rows[-1].id)
                alive = self._live(state)
                self._write_sidecar(
                    index_rows, sidecar, rows, db_uuid, settings.trigram_scope, windows, alive
                )
                elapsed = time.perf_counter() - started
                last_id = rows[-1].id
                self.rows_indexed += len(rows)
                batch = _next_batch(batch, len(rows), elapsed, settings)
            self._pacer.succeeded()
            if self._catching_up_to is not None and (
                last_id >= self._catching_up_to or len(rows) < requested
            ):
                self._catching_up_to = None
            if len(rows) == requested:
                continue
            if time.monotonic() >= self._next_sweep:
                self._next_sweep = time.monotonic() + _TAIL_SWEEP_S
                self._close_ended_segments(state, sidecar, last_id)
            if self._wake.wait(settings.index_poll_s):
                self._wake.clear()
                # Let a burst of appends accumulate: bigger batches cost less per message.
                self._stop.wait(settings.index_coalesce_s)

    def _close_ended_segments(
        self, state: sqlite3.Connection, sidecar: sqlite3.Connection, up_to: int
    ) -> None:
        """Store the last (short) window of segments that ended after their last turn was indexed."""
        ended = self._read_state(ended_open_segments, state, sidecar, _TAIL_SWEEP)
        if ended:
            windows = self._read_state(plan_batch, state, sidecar, ended, up_to)
            self._write_sidecar(store_windows, sidecar, windows, self._live_windows(state))


def _unlinked(fd: int) -> bool:
    """True when the file open as ``fd`` was deleted (or replaced by a rename): no path names it now."""
    return os.fstat(fd).st_nlink == 0


def _db_uuid(state: sqlite3.Connection) -> str:
    return str(state.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])


def _pending(state: sqlite3.Connection, after_id: int, limit: int) -> list[PendingRow]:
    """Messages after ``after_id`` up to the ``committed_watermark``, oldest first, in one statement.

    The subquery is ``sidecar.committed_watermark`` in SQL form: the indexer never advances past a row
    that a smaller, still-uncommitted id could precede (one read per batch, as before the port).
    """
    cursor = state.execute(
        "SELECT id, role, content, tool_name, conversation_id, session_id FROM messages WHERE id > ? "
        "AND id <= (SELECT seq FROM sqlite_sequence WHERE name = 'messages') ORDER BY id LIMIT ?",
        (after_id, limit),
    )
    return [PendingRow(int(r[0]), str(r[1]), r[2], r[3], str(r[4]), str(r[5])) for r in cursor.fetchall()]


def _next_batch(batch: int, got: int, elapsed: float, settings: StateSettings) -> int:
    """Size the next batch so one sidecar transaction takes about ``index_batch_ms``."""
    if got < _MIN_BATCH or elapsed <= 0:
        return batch
    per_row = elapsed / got
    target = int(settings.index_batch_ms / 1000.0 / per_row)
    return max(_MIN_BATCH, min(settings.index_batch_rows, target))
