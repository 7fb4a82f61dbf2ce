"""Start-up integrity of state.db: refuse a file that lost the home's data, check the rest on a time
budget, and move a damaged file aside when the operator asks for a new database.

Invariants: a missing state.db, or an empty one in a home that shows no sign of use, is a fresh start;
an empty state.db next to a non-empty -wal (never opened: SQLite would delete that WAL), search.db or
curated memories, a file SQLite cannot read as a database, and one that fails ``PRAGMA quick_check`` are
refused with one ``StateDamagedError``, never silently replaced by a new database; the check stops after
``integrity_check_s`` (a larger database is checked only in part when it opens); a damaged file is only
ever moved (to ``state.db.corrupt-<UTC time>``, its journals first; a move killed halfway is finished
under the same name), never deleted, and only while no other process has the home open.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agent_core.fsync import fsync_directory

from ..errors import StateDamagedError, StateUnavailableError
from .backup import exclusive_home
from .connection import connect, is_busy
from .engine import StorePaths
from .settings import StateSettings
from .sidecar import remove_sidecar

# Directories of a home whose files prove it has been used (the curated memory of agent_core.memory).
HOME_DATA_DIRS = ("memories",)
_MAX_PROBLEMS = 3
_JOURNALS = ("-wal", "-journal")
_REASON_CHARS = 300


@dataclass(frozen=True, slots=True)
class SetAside:
    """A damaged state.db that was moved out of the way so a new one can start."""

    moved_to: Path
    reason: str


def check_at_start(paths: StorePaths, settings: StateSettings, log: logging.Logger) -> None:
    """Raise ``StateDamagedError`` when state.db must not be opened (see the module invariants)."""
    damage = find_damage(paths, settings, log)
    if damage is not None:
        raise damage


def find_damage(paths: StorePaths, settings: StateSettings, log: logging.Logger) -> StateDamagedError | None:
    """The reason state.db is unusable as this home's database, or None when it may be opened."""
    db = paths.db
    try:
        info = db.stat()
    except OSError:
        return None  # missing is a fresh start; anything else is for connect() to report
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_size == 0:
        # Never connect to it: SQLite deletes the -wal of a 0-byte database, and with it any data left.
        used = signs_of_use(paths)
        if not used:
            return None
        return StateDamagedError(db, f"it is empty (0 bytes) while this home holds data ({', '.join(used)})")
    try:
        conn = connect(db, busy_timeout_ms=settings.busy_timeout_ms)
    except StateUnavailableError as exc:
        if exc.damaged:
            return StateDamagedError(db, exc.reason)
        raise
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            return None  # another process holds it mid-recovery; the store's own open reports real trouble
        raise
    try:
        problem = _quick_check(conn, settings.integrity_check_s, db, log)
    finally:
        conn.close()
    return None if problem is None else StateDamagedError(db, f"it fails its integrity check ({problem})")


def signs_of_use(paths: StorePaths) -> list[str]:
    """What in the home shows it held data: a non-empty state.db-wal or search.db, or any file under its
    data dirs."""
    found = []
    for path in (_with_suffix(paths.db, "-wal"), paths.sidecar):
        if _has_content(path):
            found.append(path.name)
    for name in HOME_DATA_DIRS:
        if _holds_a_file(paths.db.parent / name):
            found.append(f"{name}/")
    return found


def set_aside_damaged(
    home: Path, settings: StateSettings | None = None, *, log: logging.Logger
) -> SetAside | None:
    """Move a damaged state.db (and its journals) aside and drop search.db; None when state.db is usable.

    A damaged file is only moved while no other process has the home open (else ``HomeInUseError``); a
    usable one is left alone without that check, so running processes are no obstacle. Must run before
    this process opens a store on ``home`` (see ``exclusive_home``).
    """
    settings = settings or StateSettings()
    paths = StorePaths.for_home(home, settings)
    if find_damage(paths, settings, log) is None:
        return None
    with exclusive_home(home, settings):
        damage = find_damage(paths, settings, log)  # again: another process may have replaced it meanwhile
        if damage is None:
            return None
        target = _free_name(paths.db)
        # A journal left beside the new state.db would be replayed into it: journals move first.
        for suffix in _JOURNALS:
            with contextlib.suppress(FileNotFoundError):
                os.replace(_with_suffix(paths.db, suffix), _with_suffix(target, suffix))
        with contextlib.suppress(FileNotFoundError):
            _with_suffix(paths.db, "-shm").unlink()
        os.replace(paths.db, target)
        remove_sidecar(paths.sidecar)
        fsync_directory(home)
    return SetAside(target, damage.reason)


def _quick_check(conn: sqlite3.Connection, budget_s: float, db: Path, log: logging.Logger) -> str | None:
    if budget_s <= 0:
        return None
    # Most of the check is one VDBE step, which a progress handler cannot stop; interrupt() can. SQLite
    # forgets an interrupt that lands before the statement starts, so it is repeated until the check ends.
    guard = threading.Lock()
    finished = threading.Event()

    def interrupt_when_over_budget() -> None:
        if finished.wait(budget_s):
            return
        while True:
            with guard:
                if finished.is_set():
                    return
                conn.interrupt()
            if finished.wait(min(budget_s, 0.05)):
                return

    stopper = threading.Thread(target=interrupt_when_over_budget, name="state-integrity-budget", daemon=True)
    stopper.start()
    try:
        rows = conn.execute(f"PRAGMA quick_check({_MAX_PROBLEMS})").fetchall()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_INTERRUPT":
            log.info(
                "state database %s: integrity check stopped after %g s (state.integrity_check_s); "
                "the rest of the file is unchecked",
                db,
                budget_s,
            )
            return None
        if is_busy(exc):
            return None
        return _one_line(str(exc))
    finally:
        with guard:
            finished.set()
    problems = [str(row[0]) for row in rows if str(row[0]) != "ok"]
    return _one_line("; ".join(problems)) if problems else None


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _REASON_CHARS else flat[: _REASON_CHARS - 1] + "…"


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _holds_a_file(root: Path) -> bool:
    return any(files for _, _, files in os.walk(root))  # stops at the first directory with a file


def _free_name(db: Path) -> Path:
    """A new ``state.db.corrupt-<time>``, or the name of a move aside killed after its journals moved
    (so the damaged file joins them), where no journal of state.db would replace one already there."""
    for journal in (
        *db.parent.glob(f"{db.name}.corrupt-*-wal"),
        *db.parent.glob(f"{db.name}.corrupt-*-journal"),
    ):
        interrupted = journal.with_name(journal.name.rsplit("-", 1)[0])
        if not interrupted.exists() and not any(
            _with_suffix(db, suffix).exists() and _with_suffix(interrupted, suffix).exists()
            for suffix in _JOURNALS
        ):
            return interrupted
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    candidate = db.with_name(f"{db.name}.corrupt-{stamp}")
    n = 1
    while any(_with_suffix(candidate, suffix).exists() for suffix in ("", *_JOURNALS)):
        candidate = db.with_name(f"{db.name}.corrupt-{stamp}-{n}")
        n += 1
    return candidate


def _with_suffix(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)
