"""The threads behind one StateStore: the single writer thread, the reader pool and the indexer.

Invariants: every write transaction of a store runs on its one writer thread, in submission order;
reads run on a separate pool of read-only connections; the event loop only awaits futures, never
SQLite; shutdown is the reverse of startup (indexer, readers, writer).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..errors import StoreClosedError
from ..forgetting import ForgottenConversations
from ..records import ModelCall, NewMessage, StoreStats
from ..search_windows import Embedder
from .backpressure import IndexBackpressure
from .embedder import CatchUpEmbedder
from .engine import Engine, StorePaths, open_engine, translate_errors
from .forget import RemovedRows, SidecarHold
from .indexer import CatchUpIndexer
from .messages import MessageAppender, prepare
from .readers import ReaderPool
from .schema import Ladder
from .settings import StateSettings

T = TypeVar("T")
_SIDECAR_HOLD_BUSY_MS = 5000  # a forgetting waits out the indexer's batch for the sidecar's lock
_LOG = logging.getLogger("agent_core.storage.sqlite")


class _Open:
    """The resources of an open store; they exist together or not at all."""

    def __init__(
        self,
        engine: Engine,
        writer: ThreadPoolExecutor,
        paths: StorePaths,
        settings: StateSettings,
        embedder: Embedder | None,
    ) -> None:
        self.engine = engine
        self.writer = writer
        self.reader_pool = ThreadPoolExecutor(settings.reader_connections, thread_name_prefix="state-reader")
        self.readers = ReaderPool(paths.db, paths.sidecar, settings.busy_timeout_ms)
        self.backpressure = IndexBackpressure(paths.db, paths.sidecar, settings)
        self.indexer = (
            CatchUpIndexer(paths.db, paths.sidecar, settings, _LOG) if settings.index_enabled else None
        )
        self.embedder = (
            CatchUpEmbedder(paths.db, paths.sidecar, embedder, settings, _LOG)
            if embedder is not None and settings.index_enabled
            else None
        )
        self.appender = MessageAppender()
        self.newest_id = 0


class StoreWorkers:
    """Runs a store's SQLite work on its threads; every method raises StoreClosedError when closed."""

    def __init__(
        self,
        paths: StorePaths,
        settings: StateSettings,
        ladders: Sequence[Ladder] = (),
        embedder: Embedder | None = None,
    ) -> None:
        self._paths = paths
        self._embedder = embedder
        self._settings = settings
        self._ladders = tuple(ladders)
        self._round_trips = 0
        self._open: _Open | None = None

    async def open(self) -> None:
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="state-writer")
        try:
            engine = await asyncio.get_running_loop().run_in_executor(
                writer, open_engine, self._paths, self._settings, _LOG, self._ladders
            )
        except BaseException:
            writer.shutdown(wait=False)
            raise
        self._open = _Open(engine, writer, self._paths, self._settings, self._embedder)
        if self._open.indexer is not None:
            self._open.indexer.start()
        if self._open.embedder is not None:
            self._open.embedder.start()

    async def close(self) -> None:
        state, self._open = self._open, None
        if state is None:
            return
        loop = asyncio.get_running_loop()
        if state.embedder is not None:
            await loop.run_in_executor(None, state.embedder.stop, 5.0)
        if state.indexer is not None:
            await loop.run_in_executor(None, state.indexer.stop, 5.0)
        # Reads still in flight (a caller that was cancelled leaves its read running on the pool's thread)
        # finish before any connection closes: closing one under a running query can crash the process.
        await loop.run_in_executor(None, state.reader_pool.shutdown, True)
        await asyncio.to_thread(state.readers.close)
        await loop.run_in_executor(state.writer, state.backpressure.close)
        await loop.run_in_executor(state.writer, state.engine.close)
        state.writer.shutdown(wait=True)

    @property
    def embedder(self) -> CatchUpEmbedder | None:
        """The open store's embedder thread, when it has a model (for progress reports)."""
        return None if self._open is None else self._open.embedder

    @property
    def indexer(self) -> CatchUpIndexer | None:
        """The open store's indexer thread, when it runs one (for health reports)."""
        return None if self._open is None else self._open.indexer

    def stats(self) -> StoreStats:
        state = self._open
        if state is None:
            return StoreStats(0, 0, "closed", False, 0, 0, 0, self._round_trips)
        indexer = state.indexer
        return StoreStats(
            write_retries=state.engine.gate.retries,
            write_commits=state.engine.gate.commits,
            journal_mode=state.engine.journal_mode,
            indexer_active=bool(indexer and indexer.holds_lock),
            rows_indexed=indexer.rows_indexed if indexer else 0,
            index_rebuilds=indexer.rebuilds if indexer else 0,
            backpressure_pauses=state.backpressure.pauses,
            round_trips=self._round_trips,
        )

    async def write(self, fn: Callable[[sqlite3.Connection], T], *, notify_indexer: bool = False) -> T:
        state = self._require_open()
        self._round_trips += 1
        result = await asyncio.get_running_loop().run_in_executor(state.writer, state.engine.write, fn)
        if notify_indexer and state.indexer is not None:
            state.indexer.notify()
        return result

    async def append(
        self, session_id: str, messages: Sequence[NewMessage], usage: ModelCall | None = None
    ) -> list[int]:
        state = self._require_open()
        self._round_trips += 1
        return await asyncio.get_running_loop().run_in_executor(
            state.writer, self._append_sync, state, session_id, messages, usage
        )

    async def read(self, fn: Callable[[sqlite3.Connection], T], *, with_index: bool = False) -> T:
        state = self._require_open()
        self._round_trips += 1
        readers, db = state.readers, self._paths.db
        return await asyncio.get_running_loop().run_in_executor(
            state.reader_pool, lambda: translate_errors(db, lambda: readers.run(fn, with_index=with_index))
        )

    async def forget(self, delete: Callable[[sqlite3.Connection], RemovedRows]) -> ForgottenConversations:
        """Forget rows (forget.py) on the writer thread: hold the sidecar's write lock, run ``delete`` in one
        state.db transaction, remove the deleted rows' index entries, then empty both WAL files."""
        state = self._require_open()
        self._round_trips += 1
        return await asyncio.get_running_loop().run_in_executor(
            state.writer, self._forget_sync, state, delete
        )

    def _forget_sync(
        self, state: _Open, delete: Callable[[sqlite3.Connection], RemovedRows]
    ) -> ForgottenConversations:
        busy_ms = max(self._settings.busy_timeout_ms, _SIDECAR_HOLD_BUSY_MS)
        hold = SidecarHold(self._paths.sidecar, busy_ms, _LOG)
        try:
            removed = state.engine.write(delete)
        except BaseException:
            hold.abandon()
            raise
        hold.finish(removed)
        if not state.engine.truncate_wal():
            _LOG.warning("state.db's WAL stayed busy after a forgetting; the next checkpoint empties it")
        return removed.counts

    async def truncate_wal(self) -> bool:
        """Empty state.db's WAL now (engine.Engine.truncate_wal), on the writer thread."""
        state = self._require_open()
        return await asyncio.get_running_loop().run_in_executor(state.writer, state.engine.truncate_wal)

    def _append_sync(
        self, state: _Open, session_id: str, messages: Sequence[NewMessage], usage: ModelCall | None
    ) -> list[int]:
        now = time.time()
        # Redaction and encoding happen before the write lock is taken, never inside it.
        prepared = [prepare(m, now) for m in messages]
        state.backpressure.pause_before_append(state.newest_id)
        ids = state.engine.write(lambda c: state.appender.append(c, session_id, prepared, usage))
        if state.indexer is not None:
            state.indexer.notify()
        if ids:
            state.newest_id = ids[-1]
        return ids

    def _require_open(self) -> _Open:
        if self._open is None:
            raise StoreClosedError()
        return self._open
