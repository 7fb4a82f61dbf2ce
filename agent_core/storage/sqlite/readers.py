"""Read connections of one store: each used by one thread at a time, with the search sidecar attached.

Invariants: readers never write (``query_only``), so in WAL mode a slow read never blocks a write; the
sidecar is attached as schema ``idx`` and re-attached when its file was replaced by a rebuild.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import SearchIndexUnavailableError
from .connection import connect, is_busy
from .fts_query import FTS_INDEX_TABLES

T = TypeVar("T")


class _Reader:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.attached_inode: int | None = None


class ReaderPool:
    """A small pool of read-only connections; ``run`` is called from worker threads."""

    def __init__(self, db_path: Path, sidecar_path: Path, busy_timeout_ms: int) -> None:
        self._db_path = db_path
        self._sidecar_path = sidecar_path
        self._busy_timeout_ms = busy_timeout_ms
        self._idle: list[_Reader] = []
        self._all: list[_Reader] = []
        self._lock = threading.Lock()

    def run(self, fn: Callable[[sqlite3.Connection], T], *, with_index: bool = False) -> T:
        reader = self._checkout()
        try:
            if with_index:
                self._attach(reader)
            return fn(reader.conn)
        except sqlite3.DatabaseError as exc:
            if with_index and not is_busy(exc):
                # A damaged or replaced sidecar: drop the attachment so the next call re-attaches.
                self._detach(reader)
                raise SearchIndexUnavailableError(self._sidecar_path, str(exc)) from None
            raise
        finally:
            with self._lock:
                self._idle.append(reader)

    def close(self) -> None:
        with self._lock:
            for reader in self._all:
                reader.conn.close()
            self._all.clear()
            self._idle.clear()

    def _checkout(self) -> _Reader:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        conn = connect(self._db_path, busy_timeout_ms=self._busy_timeout_ms)
        conn.execute("PRAGMA query_only=1")
        reader = _Reader(conn)
        with self._lock:
            self._all.append(reader)
        return reader

    def _attach(self, reader: _Reader) -> None:
        try:
            inode = os.stat(self._sidecar_path).st_ino
        except FileNotFoundError:
            raise SearchIndexUnavailableError(self._sidecar_path, "not built yet") from None
        if reader.attached_inode == inode:
            return
        self._detach(reader)
        conn = reader.conn
        conn.execute("ATTACH DATABASE ? AS idx", (str(self._sidecar_path),))
        reader.attached_inode = inode
        # fts5vocab views live in the connection's temp schema, which query_only would refuse to create.
        conn.execute("PRAGMA query_only=0")
        try:
            for index, table in FTS_INDEX_TABLES.items():
                conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_{index} "
                    f"USING fts5vocab('idx', '{table}', 'row')"
                )
        finally:
            conn.execute("PRAGMA query_only=1")

    @staticmethod
    def _detach(reader: _Reader) -> None:
        if reader.attached_inode is not None:
            try:
                reader.conn.execute("DETACH DATABASE idx")
            except sqlite3.OperationalError:
                return
            reader.attached_inode = None
