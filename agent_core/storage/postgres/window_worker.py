"""``PgWindowWorker``: the background task of each process that keeps search windows and vectors current.

Invariants: it never runs on the append path (appends neither wait for it nor notice it); every host runs
one, and the advisory locks of window_builder.py and window_vectors.py let exactly one of them build and
one embed at a time, so a host that dies hands the work over at its next poll; the model runs on one
dedicated thread at the lowest CPU priority, in batches of about ``batch_s`` seconds, so writers keep the
CPU when they need it and the semantic lag grows instead; a database error is logged and retried with a
growing delay, never raised to the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import psycopg

from ..errors import StateError
from ..search_windows import Embedder
from .engine import Conn, PgDatabase
from .window_builder import Horizon, build_batch, close_ended_segments
from .window_vectors import embed_batch

_LOG = logging.getLogger("agent_core.storage.postgres")
_MAX_BATCH = 32
_MAX_BACKOFF_S = 10.0
_SWEEP_S = 1.0


class PgWindowWorker:
    """Builds windows (always) and embeds them (with a model) for one database, until stopped."""

    def __init__(
        self,
        db: PgDatabase,
        embedder: Embedder | None,
        *,
        poll_s: float = 0.5,
        batch_rows: int = 2_000,
        batch_s: float = 1.0,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._poll_s = poll_s
        self._batch_rows = batch_rows
        self._batch_s = batch_s
        self._horizon = Horizon()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="pg-embedder", initializer=_lowest_priority)
        self._task: asyncio.Task[None] | None = None
        self._next_sweep = 0.0
        self._embed_batch = 4
        self.windows_embedded = 0
        self.embed_seconds = 0.0

    @property
    def windows_per_s(self) -> float:
        return self.windows_embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="pg-window-worker")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._executor.shutdown(wait=True)

    async def step(self) -> bool:
        """One round: window new messages, close ended segments, embed one batch; whether work was done."""
        up_to = await self._db.run_autocommit_read(self._horizon.advance)
        before = await self._db.run_autocommit_read(_scanned)
        mark = await self._db.run_write(lambda conn: build_batch(conn, up_to, self._batch_rows))
        worked = mark is not None and mark > before
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + _SWEEP_S
            worked = await self._db.run_write(lambda conn: close_ended_segments(conn, 64)) > 0 or worked
        embedder = self._embedder
        if embedder is not None:
            started = time.perf_counter()
            done = await self._db.run_write(
                lambda conn: embed_batch(conn, embedder.model_id, self._embed, self._embed_batch)
            )
            if done:
                elapsed = time.perf_counter() - started
                self.windows_embedded += done
                self.embed_seconds += elapsed
                target = int(self._batch_s / (elapsed / done)) if elapsed > 0 else _MAX_BATCH
                self._embed_batch = max(1, min(_MAX_BATCH, target))
                worked = True
        return worked

    async def _run(self) -> None:
        delay = self._poll_s
        while True:
            try:
                worked = await self.step()
                delay = self._poll_s
            except (psycopg.Error, StateError) as exc:
                _LOG.warning("search windows: %s; retrying in %.1f s", exc, delay)
                worked = False
                delay = min(_MAX_BACKOFF_S, delay * 2)
            if not worked:
                await asyncio.sleep(delay)

    async def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        embedder = self._embedder
        assert embedder is not None
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, embedder.embed_passages, texts
        )


async def _scanned(conn: Conn) -> int:
    row = await (
        await conn.execute("SELECT scanned_up_to FROM search_window_progress WHERE id = 1")
    ).fetchone()
    return int(row[0]) if row is not None else 0


def _lowest_priority() -> None:
    # Linux sets a thread's own priority this way; elsewhere the thread keeps the process's.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
