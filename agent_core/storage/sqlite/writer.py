"""The write gate: every state.db write is one short ``BEGIN IMMEDIATE`` transaction, retried when busy.

Invariants: a transaction either commits whole or is rolled back; "database is locked/busy" is retried
after a random 20–150 ms pause up to ``write_attempts`` times, then raised as ``WriteContentionError``
(never swallowed); every retry is counted. Writers of this package first take a blocking ``flock`` on a
sidecar lock file, so a waiting writer is woken by the kernel the instant the previous one commits
(SQLite's own busy handler sleeps in fixed steps); the kernel drops the flock when a holder dies, even
by ``kill -9``. SQLite's busy handling stays as the fallback against writers that do not take the flock.
"""

from __future__ import annotations

import fcntl
import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from ..errors import WriteContentionError
from .connection import is_busy
from .settings import StateSettings

T = TypeVar("T")


class WriteGate:
    """Runs callables inside write transactions on one connection; use from a single thread at a time."""

    def __init__(
        self, conn: sqlite3.Connection, db_path: Path, lock_path: Path | None, settings: StateSettings
    ) -> None:
        self._conn = conn
        self._db_path = db_path
        self._settings = settings
        self._rng = random.Random()
        self._lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600) if lock_path is not None else None
        self.retries = 0
        self.commits = 0

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one write transaction and return its result; retry the whole of it when busy."""
        attempts = self._settings.write_attempts
        last_error = ""
        for attempt in range(1, attempts + 1):
            outcome = self._attempt(fn)
            if not isinstance(outcome, _Busy):
                self.commits += 1
                return outcome.value
            last_error = outcome.message
            self.retries += 1
            if attempt < attempts:
                time.sleep(self._rng.uniform(self._settings.retry_min_s, self._settings.retry_max_s))
        raise WriteContentionError(self._db_path, attempts, last_error)

    def run_outside_transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` outside a transaction (a journal-mode pragma) holding only the flock; retry busy."""
        attempts = self._settings.write_attempts
        last_error = ""
        for attempt in range(1, attempts + 1):
            if self._lock_fd is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                return fn(self._conn)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                last_error = str(exc)
            finally:
                if self._lock_fd is not None:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            self.retries += 1
            if attempt < attempts:
                time.sleep(self._rng.uniform(self._settings.retry_min_s, self._settings.retry_max_s))
        raise WriteContentionError(self._db_path, attempts, last_error)

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _attempt(self, fn: Callable[[sqlite3.Connection], T]) -> _Done[T] | _Busy:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    return _Busy(str(exc))
                raise
            try:
                value = fn(self._conn)
                self._conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._rollback()
                if is_busy(exc):
                    return _Busy(str(exc))
                raise
            except BaseException:
                self._rollback()
                raise
            return _Done(value)
        finally:
            if self._lock_fd is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")


class _Done(Generic[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


class _Busy:
    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message
