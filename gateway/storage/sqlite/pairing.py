"""DM pairing requests and the refusal notices sent to unknown accounts: their SQL and ``SqlitePairing``.

Invariants: one pairing request per platform account (a UNIQUE constraint), so re-sending returns the same
code; a new code is issued only while fewer than ``per_window`` codes were issued on that platform within
``window_s`` (checked and inserted in one write transaction, so concurrent processes cannot overshoot);
an account is admitted by pairing only while its request is ``approved``.
The functions take a sqlite3 connection; ``SqlitePairing`` runs the reads on a reader and each write as
one ``run_write`` transaction, with ``now`` from its clock.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_core.storage.sqlite import StateStore
from gateway.storage.pairing import PairingDecision, PairingRequest, PairingState, PairingTicket

_COLUMNS = "code, platform, account_id, display_name, created_at, state, decided_at, decided_by"


def _row(values: Sequence[Any]) -> PairingRequest:
    code, platform, account_id, name, created, state, decided_at, decided_by = values
    return PairingRequest(
        code=str(code),
        platform=str(platform),
        account_id=str(account_id),
        display_name=None if name is None else str(name),
        created_at=float(created),
        state=PairingState(str(state)),
        decided_at=None if decided_at is None else float(decided_at),
        decided_by=None if decided_by is None else str(decided_by),
    )


def request_for(conn: sqlite3.Connection, platform: str, account_id: str) -> PairingRequest | None:
    """The account's pairing request, or None."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM pairing_requests WHERE platform = ? AND account_id = ?",
        (platform, account_id),
    ).fetchone()
    return None if row is None else _row(row)


def request_by_code(conn: sqlite3.Connection, code: str) -> PairingRequest | None:
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


def list_requests(conn: sqlite3.Connection, state: PairingState | None = None) -> tuple[PairingRequest, ...]:
    """Requests (of one state, or all), oldest first."""
    if state is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM pairing_requests ORDER BY created_at, code").fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE state = ? ORDER BY created_at, code",
            (state.value,),
        ).fetchall()
    return tuple(_row(r) for r in rows)


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
) -> PairingTicket:
    """The account's existing request, or a new pending one if the platform's budget allows."""
    existing = request_for(conn, platform, account_id)
    if existing is not None:
        return PairingTicket(existing, issued=False)
    recent = conn.execute(
        "SELECT created_at FROM pairing_requests WHERE platform = ? AND created_at > ? ORDER BY created_at",
        (platform, now - window_s),
    ).fetchall()
    if len(recent) >= per_window:
        # The budget frees up when the oldest code in the window ages out of it.
        oldest = float(recent[len(recent) - per_window][0])
        return PairingTicket(None, issued=False, retry_after_s=max(0.0, oldest + window_s - now))
    for _ in range(8):
        code = new_code()
        cursor = conn.execute(
            "INSERT OR IGNORE INTO pairing_requests(code, platform, account_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (code, platform, account_id, display_name, now),
        )
        if cursor.rowcount == 1:
            return PairingTicket(request_by_code(conn, code), issued=True)
    raise sqlite3.IntegrityError("could not allocate a unique pairing code")


def decide(
    conn: sqlite3.Connection, code: str, state: PairingState, now: float, decided_by: str
) -> PairingDecision | None:
    """Set a request's state; None for an unknown code, and nothing written when it already had ``state``."""
    before = request_by_code(conn, code)
    if before is None:
        return None
    if before.state is state:
        return PairingDecision(state, before)
    conn.execute(
        "UPDATE pairing_requests SET state = ?, decided_at = ?, decided_by = ? WHERE code = ?",
        (state.value, now, decided_by, code),
    )
    after = request_by_code(conn, code)
    assert after is not None  # the row was read in this transaction
    return PairingDecision(before.state, after)


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


class SqlitePairing:
    """The ``PairingRepository`` on state.db; ``clock`` (backend configuration) times requests and notices."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def open_request(
        self,
        platform: str,
        account_id: str,
        display_name: str | None,
        *,
        per_window: int,
        window_s: float,
        new_code: Callable[[], str],
    ) -> PairingTicket:
        def open_(conn: sqlite3.Connection) -> PairingTicket:
            return open_request(
                conn,
                platform=platform,
                account_id=account_id,
                display_name=display_name,
                now=self._clock(),
                window_s=window_s,
                per_window=per_window,
                new_code=new_code,
            )

        return await self._state.run_write(open_)

    async def is_approved(self, platform: str, account_id: str) -> bool:
        return await self._state.run_read(
            functools.partial(is_approved, platform=platform, account_id=account_id)
        )

    async def get(self, code: str) -> PairingRequest | None:
        return await self._state.run_read(functools.partial(request_by_code, code=code))

    async def list_requests(self, state: PairingState | None = None) -> tuple[PairingRequest, ...]:
        return await self._state.run_read(functools.partial(list_requests, state=state))

    async def decide(self, code: str, state: PairingState, decided_by: str) -> PairingDecision | None:
        def decide_(conn: sqlite3.Connection) -> PairingDecision | None:
            return decide(conn, code, state, self._clock(), decided_by)

        return await self._state.run_write(decide_)

    async def claim_notice(self, platform: str, account_id: str, kind: str, *, interval_s: float) -> bool:
        def claim(conn: sqlite3.Connection) -> bool:
            return claim_notice(conn, platform, account_id, kind, self._clock(), interval_s)

        return await self._state.run_write(claim)
