"""DM pairing requests and the refusal notices sent to unknown accounts, as functions of a connection.

Invariants: one pairing request per platform account (a UNIQUE constraint), so re-sending returns the same
code; a new code is issued only while fewer than ``per_window`` codes were issued on that platform within
``window_s`` (checked and inserted in one write transaction, so concurrent processes cannot overshoot);
an account is admitted by pairing only while its request is ``approved``.
Run the read functions through ``StateStore.run_read`` and the write functions through ``run_write``.
"""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_COLUMNS = "code, platform, account_id, display_name, created_at, state, decided_at, decided_by"


class PairingState(enum.StrEnum):
    """Where a pairing request stands."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"


@dataclass(frozen=True)
class PairingRow:
    """One pairing request as stored."""

    code: str
    platform: str
    account_id: str
    display_name: str | None
    created_at: float
    state: PairingState
    decided_at: float | None = None
    decided_by: str | None = None


@dataclass(frozen=True)
class PairingOpen:
    """Result of asking for a code: the account's request (None when rate-limited) and whether it is new."""

    request: PairingRow | None
    issued: bool
    retry_after_s: float = 0.0


def _row(values: Sequence[Any]) -> PairingRow:
    code, platform, account_id, name, created, state, decided_at, decided_by = values
    return PairingRow(
        code=str(code),
        platform=str(platform),
        account_id=str(account_id),
        display_name=None if name is None else str(name),
        created_at=float(created),
        state=PairingState(str(state)),
        decided_at=None if decided_at is None else float(decided_at),
        decided_by=None if decided_by is None else str(decided_by),
    )


def request_for(conn: sqlite3.Connection, platform: str, account_id: str) -> PairingRow | None:
    """The account's pairing request, or None."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM pairing_requests WHERE platform = ? AND account_id = ?",
        (platform, account_id),
    ).fetchone()
    return None if row is None else _row(row)


def request_by_code(conn: sqlite3.Connection, code: str) -> PairingRow | None:
    """The request with this code, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM pairing_requests WHERE code = ?", (code,)).fetchone()
    return None if row is None else _row(row)


def is_approved(conn: sqlite3.Connection, platform: str, account_id: str) -> bool:
    """True when an admin approved this account's pairing request (and has not denied it since)."""
    row = conn.execute(
        "SELECT 1 FROM pairing_requests WHERE platform = ? AND account_id = ? AND state = 'approved'",
        (platform, account_id),
    ).fetchone()
    return row is not None


def list_requests(conn: sqlite3.Connection, state: PairingState | None = None) -> list[PairingRow]:
    """Requests (of one state, or all), oldest first."""
    if state is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM pairing_requests ORDER BY created_at, code").fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE state = ? ORDER BY created_at, code",
            (state.value,),
        ).fetchall()
    return [_row(r) for r in rows]


def open_request(
    conn: sqlite3.Connection,
    *,
    platform: str,
    account_id: str,
    display_name: str | None,
    now: float,
    window_s: float,
    per_window: int,
    new_code: Callable[[], str],
) -> PairingOpen:
    """The account's existing request, or a new pending one if the platform's budget allows."""
    existing = request_for(conn, platform, account_id)
    if existing is not None:
        return PairingOpen(existing, issued=False)
    recent = conn.execute(
        "SELECT created_at FROM pairing_requests WHERE platform = ? AND created_at > ? ORDER BY created_at",
        (platform, now - window_s),
    ).fetchall()
    if len(recent) >= per_window:
        # The budget frees up when the oldest code in the window ages out of it.
        oldest = float(recent[len(recent) - per_window][0])
        return PairingOpen(None, issued=False, retry_after_s=max(0.0, oldest + window_s - now))
    for _ in range(8):
        code = new_code()
        cursor = conn.execute(
            "INSERT OR IGNORE INTO pairing_requests(code, platform, account_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (code, platform, account_id, display_name, now),
        )
        if cursor.rowcount == 1:
            return PairingOpen(request_by_code(conn, code), issued=True)
    raise sqlite3.IntegrityError("could not allocate a unique pairing code")


def decide(
    conn: sqlite3.Connection, code: str, state: PairingState, now: float, decided_by: str
) -> tuple[PairingRow | None, PairingRow | None]:
    """Set a request's state; returns (before, after) — before is None for an unknown code.

    ``after`` equals ``before`` when the request already had that state (nothing is written).
    """
    before = request_by_code(conn, code)
    if before is None or before.state is state:
        return before, before
    conn.execute(
        "UPDATE pairing_requests SET state = ?, decided_at = ?, decided_by = ? WHERE code = ?",
        (state.value, now, decided_by, code),
    )
    return before, request_by_code(conn, code)


def claim_notice(
    conn: sqlite3.Connection, platform: str, account_id: str, kind: str, now: float, interval_s: float
) -> bool:
    """True (and recorded) if this account was not sent a ``kind`` notice within ``interval_s``."""
    row = conn.execute(
        "SELECT sent_at FROM access_notices WHERE platform = ? AND account_id = ? AND kind = ?",
        (platform, account_id, kind),
    ).fetchone()
    if row is not None and now - float(row[0]) < interval_s:
        return False
    conn.execute(
        "INSERT INTO access_notices(platform, account_id, kind, sent_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(platform, account_id, kind) DO UPDATE SET sent_at = excluded.sent_at",
        (platform, account_id, kind, now),
    )
    return True
