"""Opening SQLite connections for the state store: pragmas, the WAL-or-DELETE decision, error translation.

Invariants: the database file is only ever opened through sqlite3 (a plain ``open()`` of it would drop
SQLite's POSIX locks); an unusable file surfaces as ONE ``StateUnavailableError`` naming the file.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Literal

from ..errors import StateUnavailableError

JournalMode = Literal["wal", "delete"]

# SQLITE_PROTOCOL on network/virtualised mounts reads "locking protocol"; FUSE mounts that refuse the
# pragma surface SQLITE_AUTH, "not authorized".
WAL_INCOMPATIBLE_MARKERS = ("locking protocol", "not authorized")
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
# The file itself is broken: retrying cannot help, and the start-up check refuses it.
_DAMAGE_CODES = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
_REASONS = {
    "SQLITE_NOTADB": "not an SQLite database (corrupt or a foreign file)",
    "SQLITE_CORRUPT": "the database disk image is malformed",
    "SQLITE_CANTOPEN": "cannot be opened (missing directory, not a regular file, or no permission)",
    "SQLITE_READONLY": "is read-only (no write permission on the file or its directory)",
    "SQLITE_PERM": "permission denied",
    "SQLITE_IOERR": "disk I/O error",
    "SQLITE_FULL": "the disk is full",
}


def wal_unsupported(exc: sqlite3.Error) -> bool:
    """True when a failed ``PRAGMA journal_mode=WAL`` means the filesystem cannot do WAL safely."""
    text = str(exc).lower()
    return any(marker in text for marker in WAL_INCOMPATIBLE_MARKERS)


def is_busy(exc: sqlite3.Error) -> bool:
    """True for "database is locked/busy" errors, which are retried rather than surfaced at once."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF) in _BUSY_CODES:
        return True
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def unavailable(path: Path, exc: sqlite3.Error) -> StateUnavailableError:
    """Translate an SQLite error about the file itself into the store's one-line error."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    reason = next((text for prefix, text in _REASONS.items() if name.startswith(prefix)), str(exc))
    return StateUnavailableError(path, reason, damaged=name.startswith(_DAMAGE_CODES))


def is_file_problem(exc: sqlite3.Error) -> bool:
    """True when the error is about the database file (corrupt, unreadable), not about a statement."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return any(name.startswith(prefix) for prefix in _REASONS)


def connect(path: Path, *, busy_timeout_ms: int, wal_autocheckpoint: int | None = None) -> sqlite3.Connection:
    """Open ``path`` with the store's pragmas and prove it is a readable database, or raise one error."""
    try:
        is_dir = path.is_dir()
    except OSError as exc:
        raise StateUnavailableError(path, f"cannot be inspected ({exc.strerror})") from None
    if is_dir:
        raise StateUnavailableError(path, "is a directory, not a database file")
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            path, timeout=busy_timeout_ms / 1000.0, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        if wal_autocheckpoint is not None:
            conn.execute(f"PRAGMA wal_autocheckpoint={int(wal_autocheckpoint)}")
        # Reading the schema forces SQLite to parse the header: garbage files fail here, not later.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        if is_busy(exc):
            raise
        raise unavailable(path, exc) from None
    return conn


def apply_journal_mode(conn: sqlite3.Connection, label: Path, log: logging.Logger) -> JournalMode:
    """Put the database in WAL mode, or fall back to DELETE with one warning where WAL cannot work."""
    current = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    if current == "wal":
        return "wal"
    try:
        mode = str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
    except sqlite3.DatabaseError as exc:
        if not wal_unsupported(exc):
            raise
        conn.execute("PRAGMA journal_mode=DELETE")
        log.warning(
            "state database %s: WAL is not supported on this filesystem (%s); using journal_mode=DELETE "
            "— concurrent readers will block writers; put the home directory on a local disk",
            label,
            exc,
        )
        return "delete"
    if mode != "wal":
        log.warning("state database %s: SQLite kept journal_mode=%s instead of WAL", label, mode)
        return "delete"
    return "wal"
