"""``PgWindowWorker``: the background task of each process that keeps search windows and vectors current.

Invariants: it never runs on the append path (appends neither wait for it nor notice it); every process runs
one; the builder's advisory lock lets one of them build at a time, the embedder's lock and lead let one of
them read a batch to embed and only a batch read against the current progress is stored; one worker leads
each (the others stand by, one short transaction every ``_STANDBY_S``), so a process that dies hands the
work over within ``LEAD_S``; the model runs between two short transactions, never inside one (an open
transaction would hold back the visibility horizon of ``gateway.storage.postgres.visibility``, a pooled
connection and the progress row for the whole batch), on one dedicated thread at the lowest CPU priority, in
batches of about ``batch_s`` seconds, so writers keep the CPU when they need it and the semantic lag grows
instead; a database error is logged and retried with a growing delay, never raised to the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import psycopg

from ..errors import StateError
from ..search_windows import Embedder
from .engine import PgDatabase
from .window_builder import Horizon, build_batch, close_ended_segments
from .window_vectors import pending_windows, store_vectors

_LOG = logging.getLogger("agent_core.storage.postgres")
_MAX_BATCH = 32
_MAX_BACKOFF_S = 10.0
_SWEEP_S = 1.0
_STANDBY_S = 2.0


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
        self._standby = False
        self._name = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
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
        """One round: window new messages, close ended segments, embed one batch; whether work was done.

        A process that holds neither lock stands by (``_STANDBY_S`` between rounds), paying one lock attempt
        per round and never a horizon read."""
        marks = await self._db.run_write(
            lambda conn: build_batch(conn, self._horizon, self._batch_rows, worker=self._name)
        )
        self._standby = marks is None
        worked = marks is not None and marks[1] > marks[0]
        if marks is not None and time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + _SWEEP_S
            worked = await self._db.run_write(lambda conn: close_ended_segments(conn, 64)) > 0 or worked
        embedder = self._embedder
        if embedder is not None:
            done = await self._embed_one_batch(embedder)
            self._standby = self._standby and done is None
            worked = bool(done) or worked
        return worked

    async def _embed_one_batch(self, embedder: Embedder) -> int | None:
        """Read a batch, run the model outside any transaction, store the vectors; how many were stored
        (None: another process embeds). The batch size tracks ``batch_s`` of model time."""
        model_id, size, name = embedder.model_id, self._embed_batch, self._name
        batch = await self._db.run_write(lambda conn: pending_windows(conn, model_id, size, worker=name))
        if batch is None or not batch.window_ids:
            return None if batch is None else 0
        started = time.perf_counter()
        vectors = await self._embed(batch.bodies)
        elapsed = time.perf_counter() - started
        done = len(batch.window_ids)
        target = int(self._batch_s / (elapsed / done)) if elapsed > 0 else _MAX_BATCH
        self._embed_batch = max(1, min(_MAX_BATCH, target))
        if not await self._db.run_write(lambda conn: store_vectors(conn, batch, vectors, worker=name)):
            return 0  # the progress moved meanwhile (a rebuild, or another embedder took over)
        self.windows_embedded += done
        self.embed_seconds += elapsed
        return done

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
                await asyncio.sleep(_STANDBY_S if self._standby else delay)

    async def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        embedder = self._embedder
        assert embedder is not None
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, embedder.embed_passages, texts
        )


def _lowest_priority() -> None:
    # Linux sets a thread's own priority this way; elsewhere the thread keeps the process's.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
