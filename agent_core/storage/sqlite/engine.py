"""The synchronous core of one StateStore: opening state.db (journal mode, migrations, write probe) and
closing it, plus the translation of file-level SQLite errors into ``StateUnavailableError``.

Invariants: after ``open_engine`` returns, the database is at the latest schema and writable; every
write goes through the engine's single ``WriteGate`` from the store's single writer thread; in WAL mode
the engine's ``WalCheckpointer`` thread keeps the -wal file bounded, and appends never checkpoint.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import StateError, StateUnavailableError
from .connection import JournalMode, apply_journal_mode, connect, is_file_problem, unavailable
from .forget import truncate_wal
from .schema import AGENT_LADDER, Ladder, migrate, refuse_newer, split_shared_ladder
from .settings import StateSettings
from .sidecar import claim_if_new, open_sidecar
from .wal_checkpointer import WalCheckpointer
from .writer import WriteGate

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StorePaths:
    """Where one home keeps its state files."""

    db: Path
    sidecar: Path
    write_lock: Path

    @classmethod
    def for_home(cls, home: Path, settings: StateSettings) -> StorePaths:
        db = home / settings.db_filename
        return cls(db, home / settings.search_filename, db.with_name(db.name + ".write.lock"))


class Engine:
    """The writer connection, its gate and the journal mode it ended up with."""

    def __init__(
        self,
        paths: StorePaths,
        gate: WriteGate,
        journal_mode: JournalMode,
        checkpointer: WalCheckpointer | None = None,
    ) -> None:
        self.paths = paths
        self.gate = gate
        self.journal_mode = journal_mode
        self.checkpointer = checkpointer

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return translate_errors(self.paths.db, lambda: self.gate.run(fn))

    def truncate_wal(self) -> bool:
        """Empty the -wal file now (after a forgetting: its old frames still hold deleted rows); False when
        readers kept it busy. Nothing to do outside WAL mode."""
        if self.journal_mode != "wal":
            return True
        return translate_errors(self.paths.db, lambda: self.gate.run_outside_transaction(truncate_wal))

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.stop(5.0)
        # Best effort: fold the WAL back so the files at rest are small; other processes may still be busy.
        with contextlib.suppress(sqlite3.Error, StateError):
            self.gate.run_outside_transaction(
                lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            )
        self.gate.close()
        self.gate.connection.close()


def open_engine(
    paths: StorePaths, settings: StateSettings, log: logging.Logger, ladders: Sequence[Ladder] = ()
) -> Engine:
    """Open state.db for writing: pragmas, WAL (or the DELETE fallback), a database any ladder of which is
    newer refused, a release-0.1 database's shared version recorded and split into per-owner ladders (even
    when ``ladders`` is empty), the agent's ladder then ``ladders`` in order, sidecar tables."""
    try:
        paths.db.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateUnavailableError(paths.db, f"its directory is not usable ({exc.strerror})") from None
    # Appends must never pay for a checkpoint; the WAL checkpointer thread runs them instead.
    conn = connect(paths.db, busy_timeout_ms=settings.busy_timeout_ms, wal_autocheckpoint=0)
    lock_path = paths.write_lock if settings.use_write_lock_file else None
    try:
        gate = WriteGate(conn, paths.db, lock_path, settings)
    except OSError as exc:
        conn.close()
        raise StateUnavailableError(paths.db, f"cannot create lock file {paths.write_lock}: {exc}") from None
    try:
        translate_errors(paths.db, lambda: gate.run_outside_transaction(_incremental_vacuum_when_new))
        mode = translate_errors(
            paths.db, lambda: gate.run_outside_transaction(lambda c: apply_journal_mode(c, paths.db, log))
        )
        conn.execute(f"PRAGMA journal_size_limit={settings.journal_size_limit_bytes}")
        # Deleted rows (a forgotten conversation, an erased person) leave zeros, not their text, in freed
        # space and pages; it costs nothing on the append path, which frees nothing.
        conn.execute("PRAGMA secure_delete=ON")
        every = (AGENT_LADDER, *ladders)
        translate_errors(paths.db, functools.partial(refuse_newer, conn, paths.db, every))
        translate_errors(paths.db, functools.partial(split_shared_ladder, gate, every))
        for ladder in every:
            translate_errors(paths.db, functools.partial(migrate, gate, paths.db, ladder))
        # An empty transaction proves we can take the write lock (read-only files fail here, not later).
        translate_errors(paths.db, lambda: gate.run(lambda c: None))
    except BaseException:
        gate.close()
        conn.close()
        raise
    db_uuid = str(conn.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])
    _ensure_sidecar(paths.sidecar, db_uuid, settings, log)
    checkpointer = None
    if mode == "wal":
        checkpointer = WalCheckpointer(paths.db, lock_path, settings, log)
        checkpointer.start()
    return Engine(paths, gate, mode, checkpointer)


def _incremental_vacuum_when_new(conn: sqlite3.Connection) -> None:
    """A new database gets ``auto_vacuum=INCREMENTAL`` (possible only before its first table and before
    WAL), so retention can hand free pages back in short steps instead of a full ``VACUUM``."""
    if int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]) == 0:
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")


def _ensure_sidecar(path: Path, db_uuid: str, settings: StateSettings, log: logging.Logger) -> None:
    try:
        conn = open_sidecar(path, busy_timeout_ms=settings.busy_timeout_ms)
        try:
            claim_if_new(conn, db_uuid, settings.trigram_scope)
        finally:
            conn.close()
    except (sqlite3.Error, StateError) as exc:
        # The indexer rebuilds a damaged sidecar once it holds the index lock; searches wait for that.
        log.warning("search index %s could not be opened (%s); it will be rebuilt", path, exc)


def translate_errors(path: Path, fn: Callable[[], T]) -> T:
    """Run ``fn``; an SQLite error about the file itself becomes one clear ``StateUnavailableError``."""
    try:
        return fn()
    except sqlite3.DatabaseError as exc:
        if is_file_problem(exc):
            raise unavailable(path, exc) from None
        raise
