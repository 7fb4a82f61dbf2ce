"""Append backpressure that keeps the search index's lag bounded when appends outrun the indexer.

Invariants: consulted only from the store's writer thread and never while holding any lock; it reads
the indexer's progress at most once per ``index_backpressure_check_s``; it slows appends only while an
indexer is alive and making progress (a stalled or absent indexer never throttles writes), and never by
more than ``index_backpressure_max_pause_s`` per append.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..errors import StateError
from .connection import connect
from .fts_query import indexed_up_to_or_none
from .settings import StateSettings

_STALL_S = 1.0
_BUSY_BACKLOG = 256


class IndexBackpressure:
    """Decides how long the next append should wait so the indexer can catch up."""

    def __init__(self, db_path: Path, sidecar_path: Path, settings: StateSettings) -> None:
        self._db_path = db_path
        self._sidecar_path = sidecar_path
        self._settings = settings
        self._conn: sqlite3.Connection | None = None
        self._next_check = 0.0
        self._position = -1
        self._moved_at = 0.0
        self._has_moved = False
        self._was_busy = False
        self._rate = 0.0  # indexed rows per second, smoothed
        self._pause = 0.0
        self.pauses = 0

    def pause_before_append(self, newest_id: int) -> None:
        """Sleep briefly when the index is far behind ``newest_id`` and still advancing."""
        settings = self._settings
        if settings.index_max_backlog <= 0 or newest_id <= 0:
            return
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + settings.index_backpressure_check_s
            self._pause = self._decide(newest_id, now)
        if self._pause > 0:
            self.pauses += 1
            time.sleep(self._pause)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _decide(self, newest_id: int, now: float) -> float:
        position = self._read_position()
        if position is None:
            return 0.0
        if self._position < 0:
            # One observation says nothing about progress: never throttle on it.
            self._position, self._moved_at = position, now
            return 0.0
        backlog = newest_id - position
        if position != self._position:
            elapsed = now - self._moved_at
            # Only a busy indexer's pace says how fast it can go; an idle one just kept up.
            if self._was_busy and elapsed > 0:
                sample = (position - self._position) / elapsed
                self._rate = sample if self._rate == 0 else 0.7 * self._rate + 0.3 * sample
            self._position, self._moved_at, self._has_moved = position, now, True
        self._was_busy = backlog > _BUSY_BACKLOG
        if not self._has_moved or now - self._moved_at > _STALL_S:
            return 0.0
        settings = self._settings
        # Over budget by rows, or by the time the indexer needs at its recent pace to reach newest_id.
        over = backlog / settings.index_max_backlog
        if self._rate > 0:
            over = max(over, backlog / self._rate / settings.index_target_lag_s)
        if over <= 1.0:
            return 0.0
        return settings.index_backpressure_max_pause_s * min(1.0, over - 1.0)

    def _read_position(self) -> int | None:
        try:
            if self._conn is None:
                conn = connect(self._db_path, busy_timeout_ms=self._settings.busy_timeout_ms)
                conn.execute("ATTACH DATABASE ? AS idx", (str(self._sidecar_path),))
                self._conn = conn
            return indexed_up_to_or_none(self._conn, self._settings.trigram_scope)
        except (sqlite3.Error, StateError):
            self.close()
            return None
