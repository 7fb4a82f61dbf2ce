"""The catch-up embedder: a background thread that gives each search window its vector, off the append path.

Invariants: at most one embedder runs across all processes sharing a home (a non-blocking ``flock`` on
``search.db.embed.lock``; whoever polls next takes over from a dead holder); it never touches state.db's
write lock (it reads ``messages`` only) nor the indexer's batches (its sidecar transactions are short and
separate), so appends and full-text indexing never wait for a model; it runs at the lowest CPU priority, so
when writers need the CPU they get it and the semantic lag grows instead; each batch is sized to take about
``semantic_batch_s`` of model time and stored in one transaction with the mark, under the sidecar's vector
``generation`` (a batch embedded across a rebuild or model change is discarded, never stored).
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
from ..search_windows import Embedder, encode_vector
from .connection import connect
from .retry_pacer import RetryPacer
from .settings import StateSettings
from .sidecar import open_sidecar
from .window_store import claim_model, pending_windows, semantic_progress, store_vectors

_MAX_BATCH = 32
# The embedder's sidecar writes may wait this long for the indexer's (large) batches: nothing waits on it.
_SIDECAR_BUSY_MS = 5_000
_MAX_RETRY_S = 10.0
_LOWEST_PRIORITY = 19


class CatchUpEmbedder:
    """Owns the embedder thread of one StateStore."""

    def __init__(
        self,
        db_path: Path,
        sidecar_path: Path,
        embedder: Embedder,
        settings: StateSettings,
        log: logging.Logger,
    ) -> None:
        self._db_path = db_path
        self._sidecar_path = sidecar_path
        self._lock_path = sidecar_path.with_name(sidecar_path.name + ".embed.lock")
        self.embedder = embedder
        self._settings = settings
        self._log = log
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pacer = RetryPacer(
            "search embedder", log, initial_s=settings.semantic_poll_s, max_s=_MAX_RETRY_S
        )
        self.holds_lock = False
        self.windows_embedded = 0
        self.embed_seconds = 0.0

    @property
    def windows_per_s(self) -> float:
        """Windows embedded per second of model time since the store opened (0 before the first batch)."""
        return self.windows_embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="state-embedder", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        self._wake.set()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        # Linux sets a thread's own priority this way; elsewhere the thread keeps the process's.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _LOWEST_PRIORITY)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while not self._stop.is_set():
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self._stop.wait(self._settings.index_takeover_s * 4)
                    continue
                self.holds_lock = True
                try:
                    self._serve()
                except (sqlite3.Error, StateError, OSError) as exc:
                    self._stop.wait(self._pacer.failed(exc))
                finally:
                    self.holds_lock = False
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _serve(self) -> None:
        if not self._sidecar_path.exists():
            self._stop.wait(self._settings.semantic_poll_s)
            return
        state = connect(self._db_path, busy_timeout_ms=self._settings.busy_timeout_ms)
        try:
            sidecar = open_sidecar(self._sidecar_path, busy_timeout_ms=_SIDECAR_BUSY_MS)
            try:
                self._embed_forever(state, sidecar, os.stat(self._sidecar_path).st_ino)
            finally:
                sidecar.close()
        finally:
            state.close()

    def _embed_forever(self, state: sqlite3.Connection, sidecar: sqlite3.Connection, inode: int) -> None:
        generation, up_to = _claim(sidecar, self.embedder.model_id)
        batch = 4
        while not self._stop.is_set():
            if os.stat(self._sidecar_path).st_ino != inode:
                return  # the sidecar was rebuilt: start over on the new file
            pending = pending_windows(state, sidecar, up_to, batch)
            self._pacer.succeeded()
            if not pending:
                if self._wake.wait(self._settings.semantic_poll_s):
                    self._wake.clear()
                progress = semantic_progress(sidecar)
                if progress is None or progress[:2] != (self.embedder.model_id, generation):
                    generation, up_to = _claim(sidecar, self.embedder.model_id)  # rebuilt meanwhile
                continue
            started = time.perf_counter()
            vectors = self.embedder.embed_passages([window.text for window in pending])
            elapsed = time.perf_counter() - started
            rows = [(w.id, w.digest, encode_vector(v)) for w, v in zip(pending, vectors, strict=True)]
            if not store_vectors(sidecar, generation, rows, pending[-1].id):
                generation, up_to = _claim(sidecar, self.embedder.model_id)
                continue
            up_to = pending[-1].id
            self.windows_embedded += len(pending)
            self.embed_seconds += elapsed
            per_window = elapsed / len(pending)
            target = int(self._settings.semantic_batch_s / per_window) if per_window > 0 else _MAX_BATCH
            batch = max(1, min(_MAX_BATCH, target))


def _claim(sidecar: sqlite3.Connection, model: str) -> tuple[int, int]:
    sidecar.execute("BEGIN IMMEDIATE")
    try:
        claimed = claim_model(sidecar, model)
        sidecar.execute("COMMIT")
    except BaseException:
        sidecar.execute("ROLLBACK")
        raise
    return claimed
