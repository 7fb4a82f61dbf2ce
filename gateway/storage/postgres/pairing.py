"""DM pairing requests and refusal notices in PostgreSQL: their SQL and ``PgPairing``.

Invariants (the port's, ``gateway.storage.pairing``), kept with several hosts at once: one pairing request
per platform account ever (a UNIQUE constraint); opening a request takes the platform's advisory lock
(``pg_advisory_xact_lock(PAIRING_LOCK, hashtext(platform))``) before it looks again, counts the window and
inserts, so concurrent hosts neither overshoot the platform's budget nor open two requests for one account
(a code that collides with any other request's is drawn again: ``ON CONFLICT DO NOTHING``); a decision
locks its request row first; a notice is claimed by one upsert whose update only happens when the last
one is at least ``interval_s`` old, so two hosts never both send it. Every time is ``mg_now()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agent_core.storage.errors import StateError
from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.pairing import PairingDecision, PairingRequest, PairingState, PairingTicket

__all__ = ["PAIRING_LOCK", "PgPairing"]

PAIRING_LOCK = 0x70616972  # "pair": the advisory-lock class of opening a platform's pairing requests
_CODE_DRAWS = 8
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


async def request_for(conn: Conn, platform: str, account_id: str) -> PairingRequest | None:
    """The account's pairing request, or None."""
    cursor = await conn.execute(
        f"SELECT {_COLUMNS} FROM pairing_requests WHERE platform = %s AND account_id = %s",
        (platform, account_id),
    )
    row = await cursor.fetchone()
    return None if row is None else _row(row)


async def request_by_code(conn: Conn, code: str, *, lock: bool = False) -> PairingRequest | None:
    """The request with this code (row-locked when ``lock``), or None."""
    query = f"SELECT {_COLUMNS} FROM pairing_requests WHERE code = %s"
    cursor = await conn.execute(query + " FOR UPDATE" if lock else query, (code,))
    row = await cursor.fetchone()
    return None if row is None else _row(row)


async def is_approved(conn: Conn, platform: str, account_id: str) -> bool:
    """True when an admin approved this account's pairing request (and has not denied it since)."""
    cursor = await conn.execute(
        "SELECT 1 FROM pairing_requests WHERE platform = %s AND account_id = %s AND state = 'approved'",
        (platform, account_id),
    )
    return await cursor.fetchone() is not None


async def list_requests(conn: Conn, state: PairingState | None = None) -> tuple[PairingRequest, ...]:
    """Requests (of one state, or all), oldest first."""
    if state is None:
        cursor = await conn.execute(f"SELECT {_COLUMNS} FROM pairing_requests ORDER BY created_at, code")
    else:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE state = %s ORDER BY created_at, code",
            (state.value,),
        )
    return tuple(_row(r) for r in await cursor.fetchall())


async def open_request(
    conn: Conn,
    *,
    platform: str,
    account_id: str,
    display_name: str | None,
    window_s: float,
    per_window: int,
    new_code: Callable[[], str],
) -> PairingTicket:
    """The account's existing request, or a new pending one if the platform's budget allows."""
    existing = await request_for(conn, platform, account_id)
    if existing is not None:
        return PairingTicket(existing, issued=False)
    locked = await (
        await conn.execute(
            "SELECT mg_now() FROM (SELECT pg_advisory_xact_lock(%s::integer, hashtext(%s))) AS platform_lock",
            (PAIRING_LOCK, platform),
        )
    ).fetchone()
    assert locked is not None  # the statement always returns its one row
    now = float(locked[0])
    existing = await request_for(conn, platform, account_id)  # another host may have opened it meanwhile
    if existing is not None:
        return PairingTicket(existing, issued=False)
    cursor = await conn.execute(
        "SELECT created_at FROM pairing_requests WHERE platform = %s AND created_at > %s ORDER BY created_at",
        (platform, now - window_s),
    )
    recent = [float(r[0]) for r in await cursor.fetchall()]
    if len(recent) >= per_window:
        # The budget frees up when the oldest code in the window ages out of it.
        oldest = recent[len(recent) - per_window]
        return PairingTicket(None, issued=False, retry_after_s=max(0.0, oldest + window_s - now))
    for _ in range(_CODE_DRAWS):
        inserted = await (
            await conn.execute(
                "INSERT INTO pairing_requests(code, platform, account_id, display_name, created_at) "
                f"VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING {_COLUMNS}",
                (new_code(), platform, account_id, display_name, now),
            )
        ).fetchone()
        if inserted is not None:
            return PairingTicket(_row(inserted), issued=True)
    raise StateError("could not allocate a unique pairing code")


async def decide(conn: Conn, code: str, state: PairingState, decided_by: str) -> PairingDecision | None:
    """Set a request's state; None for an unknown code, and nothing written when it already had ``state``."""
    before = await request_by_code(conn, code, lock=True)
    if before is None:
        return None
    if before.state is state:
        return PairingDecision(state, before)
    cursor = await conn.execute(
        "UPDATE pairing_requests SET state = %s, decided_at = mg_now(), decided_by = %s WHERE code = %s "
        f"RETURNING {_COLUMNS}",
        (state.value, decided_by, code),
    )
    after = await cursor.fetchone()
    assert after is not None  # the row is locked by this transaction
    return PairingDecision(before.state, _row(after))


async def claim_notice(conn: Conn, platform: str, account_id: str, kind: str, interval_s: float) -> bool:
    """True (and recorded) if this account was not sent a ``kind`` notice within ``interval_s``."""
    cursor = await conn.execute(
        "INSERT INTO access_notices(platform, account_id, kind, sent_at) VALUES (%s, %s, %s, mg_now()) "
        "ON CONFLICT (platform, account_id, kind) DO UPDATE SET sent_at = excluded.sent_at "
        "WHERE excluded.sent_at - access_notices.sent_at >= %s RETURNING 1",
        (platform, account_id, kind, interval_s),
    )
    return await cursor.fetchone() is not None


class PgPairing:
    """The ``PairingRepository`` on PostgreSQL; reads on one snapshot, each write one transaction."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

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
        return await self._db.run_write(
            lambda c: open_request(
                c,
                platform=platform,
                account_id=account_id,
                display_name=display_name,
                window_s=window_s,
                per_window=per_window,
                new_code=new_code,
            )
        )

    async def is_approved(self, platform: str, account_id: str) -> bool:
        return await self._db.run_read(lambda c: is_approved(c, platform, account_id))

    async def get(self, code: str) -> PairingRequest | None:
        return await self._db.run_read(lambda c: request_by_code(c, code))

    async def list_requests(self, state: PairingState | None = None) -> tuple[PairingRequest, ...]:
        return await self._db.run_read(lambda c: list_requests(c, state))

    async def decide(self, code: str, state: PairingState, decided_by: str) -> PairingDecision | None:
        return await self._db.run_write(lambda c: decide(c, code, state, decided_by))

    async def claim_notice(self, platform: str, account_id: str, kind: str, *, interval_s: float) -> bool:
        return await self._db.run_write(lambda c: claim_notice(c, platform, account_id, kind, interval_s))
