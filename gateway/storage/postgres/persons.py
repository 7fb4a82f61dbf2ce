"""Persons, their platform accounts and one-time link codes in PostgreSQL: the SQL and ``PgIdentity``.

Invariants (the port's, ``gateway.storage.identity``), kept with several hosts at once: an account maps to
exactly one person (the accounts primary key); a first sight inserts the account and its person in one
statement whose person insert runs only when the account insert won (``ON CONFLICT DO NOTHING``), so
concurrent first sights on any host agree on one person and no person is left without its account; a
redemption locks the code row (``FOR UPDATE``) before anything else, so of two hosts redeeming one code
exactly one links and the other then reads it used; issuing locks the person row first, so the per-person
budget holds across hosts; code expiry and the issue window are measured on ``mg_now()``. Re-keying
rewrites every column that may carry an account id, in one transaction, locking the rows it rewrites; the
old values' dead row versions stay in the table files until (auto)vacuum reclaims them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import LiteralString

from agent_core.storage.errors import StateError
from agent_core.storage.postgres.conversations import new_id
from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.identity import AccountRecord, IssuedLinkCode, RedeemStatus, Redemption

__all__ = ["PgIdentity", "account_person", "ensure_account", "new_person_id"]

_CODE_DRAWS = 8


def new_person_id() -> str:
    """A fresh, unguessable person id (``p_`` + time-ordered random base32), safe as a directory name."""
    return new_id("p")


async def account_person(conn: Conn, platform: str, account_id: str) -> str | None:
    """The person id of an account, or None for an account never seen."""
    cursor = await conn.execute(
        "SELECT person_id FROM accounts WHERE platform = %s AND account_id = %s", (platform, account_id)
    )
    row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def ensure_account(conn: Conn, platform: str, account_id: str, display_name: str | None) -> str:
    """The account's person id, creating person and account on first sight (inside the caller's
    transaction); a concurrent first sight waits on the account key and then reads the winner's person."""
    existing = await account_person(conn, platform, account_id)
    if existing is not None:
        return existing
    # The foreign key is checked at the end of the statement, when the person row exists; the person is
    # inserted only for an account row that was inserted.
    cursor = await conn.execute(
        """WITH account AS (
                INSERT INTO accounts(platform, account_id, person_id, created_at)
                VALUES (%(platform)s, %(account)s, %(person)s, mg_now())
                ON CONFLICT (platform, account_id) DO NOTHING RETURNING person_id, created_at),
            person AS (
                INSERT INTO persons(id, display_name, created_at)
                SELECT person_id, %(name)s, created_at FROM account RETURNING id)
        SELECT id FROM person""",
        {"platform": platform, "account": account_id, "person": new_person_id(), "name": display_name},
    )
    row = await cursor.fetchone()
    if row is not None:
        return str(row[0])
    winner = await account_person(conn, platform, account_id)
    if winner is None:  # only a rename racing this first sight can get here
        raise StateError(f"account {platform}:{account_id} vanished while it was first seen")
    return winner


async def accounts_of(conn: Conn, person_id: str) -> tuple[AccountRecord, ...]:
    """Every account of a person, oldest first."""
    cursor = await conn.execute(
        "SELECT platform, account_id, person_id, created_at FROM accounts WHERE person_id = %s "
        "ORDER BY created_at, platform, account_id",
        (person_id,),
    )
    return tuple(AccountRecord(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in await cursor.fetchall())


async def issue_link_code(
    conn: Conn, person_id: str, *, ttl_s: float, per_window: int, window_s: float, new_code: Callable[[], str]
) -> IssuedLinkCode:
    """Unless the person's budget is spent, store a new code and void the person's older open codes.

    Only the newest code works, so a code shown by mistake is voided by asking for another."""
    locked = await (
        await conn.execute("SELECT mg_now() FROM persons WHERE id = %s FOR UPDATE", (person_id,))
    ).fetchone()
    if locked is None:
        raise StateError(f"no person {person_id!r} to issue a link code for")
    now = float(locked[0])
    cursor = await conn.execute(
        "SELECT created_at FROM link_codes WHERE person_id = %s AND created_at > %s ORDER BY created_at",
        (person_id, now - window_s),
    )
    recent = [float(r[0]) for r in await cursor.fetchall()]
    if len(recent) >= per_window:
        # The budget frees up when the oldest code in the window ages out of it.
        return IssuedLinkCode(None, recent[len(recent) - per_window] + window_s - now)
    await conn.execute(
        "UPDATE link_codes SET used_at = %s, used_by = 'superseded' WHERE person_id = %s AND used_at IS NULL",
        (now, person_id),
    )
    # A collision with any code ever issued is astronomically rare; draw again rather than reuse a code.
    for _ in range(_CODE_DRAWS):
        code = new_code()
        inserted = await (
            await conn.execute(
                "INSERT INTO link_codes(code, person_id, created_at, expires_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (code) DO NOTHING RETURNING code",
                (code, person_id, now, now + ttl_s),
            )
        ).fetchone()
        if inserted is not None:
            return IssuedLinkCode(code)
    raise StateError("could not allocate a unique link code")


async def void_link_code(conn: Conn, code: str, reason: str) -> bool:
    """Mark an open code used without linking anything (e.g. it was shown in a group); True if it was open."""
    cursor = await conn.execute(
        "UPDATE link_codes SET used_at = mg_now(), used_by = %s WHERE code = %s AND used_at IS NULL",
        (reason, code),
    )
    return cursor.rowcount == 1


async def redeem_link_code(conn: Conn, code: str, platform: str, account_id: str) -> Redemption:
    """Join the account to the code's person (creating the account if new) and use up the code.

    The code row is locked first: a concurrent redemption waits, then finds it used. The account's
    previous person is left as it is (its memory and conversations are never merged)."""
    row = await (
        await conn.execute(
            "SELECT person_id, used_at IS NOT NULL, mg_now() >= expires_at FROM link_codes WHERE code = %s "
            "FOR UPDATE",
            (code,),
        )
    ).fetchone()
    if row is None:
        return Redemption(RedeemStatus.UNKNOWN)
    person_id, used, expired = str(row[0]), bool(row[1]), bool(row[2])
    if used:
        return Redemption(RedeemStatus.USED, person_id)
    if expired:
        return Redemption(RedeemStatus.EXPIRED, person_id)
    previous = await _lock_account(conn, platform, account_id)
    if previous is None:
        created = await (
            await conn.execute(
                "INSERT INTO accounts(platform, account_id, person_id, created_at) "
                "VALUES (%s, %s, %s, mg_now()) ON CONFLICT (platform, account_id) DO NOTHING RETURNING 1",
                (platform, account_id, person_id),
            )
        ).fetchone()
        if created is None:  # a first sight of the account committed meanwhile: move that one
            previous = await _lock_account(conn, platform, account_id)
    if previous == person_id:
        return Redemption(RedeemStatus.SAME_PERSON, person_id, previous)
    if previous is not None:
        await conn.execute(
            "UPDATE accounts SET person_id = %s WHERE platform = %s AND account_id = %s",
            (person_id, platform, account_id),
        )
    await conn.execute(
        "UPDATE link_codes SET used_at = mg_now(), used_by = %s WHERE code = %s",
        (f"{platform}:{account_id}", code),
    )
    return Redemption(RedeemStatus.LINKED, person_id, previous)


async def _lock_account(conn: Conn, platform: str, account_id: str) -> str | None:
    cursor = await conn.execute(
        "SELECT person_id FROM accounts WHERE platform = %s AND account_id = %s FOR UPDATE",
        (platform, account_id),
    )
    row = await cursor.fetchone()
    return None if row is None else str(row[0])


# Every column that may carry an account's id: as itself, inside a session key or a chat reference, or as
# the first part of an event id (and of the keys and reply references derived from event ids).
_ACCOUNT_ID_COLUMNS: tuple[tuple[LiteralString, LiteralString], ...] = (
    ("accounts", "account_id"),
    ("access_notices", "account_id"),
    ("pairing_requests", "account_id"),
    ("link_codes", "used_by"),
    ("conversations", "session_key"),
    ("segments", "session_key"),
    ("segments", "user_id"),
    ("segments", "chat_id"),
    ("messages", "platform_message_id"),
    ("pending_messages", "platform_message_id"),
    ("inbound_events", "event_id"),
    ("turn_jobs", "chat_ref"),
    ("turn_jobs", "reply_to"),
    ("outbox", "chat_ref"),
    ("outbox", "reply_to"),
    ("outbox", "idempotency_key"),
)
_ID_TOKEN_PATTERN = "[A-Za-z0-9_%-]+"
_ID_TOKEN = re.compile(_ID_TOKEN_PATTERN)


async def platform_account_ids(conn: Conn, platform: str) -> set[str]:
    """Every account id of ``platform`` the database mentions: accounts, notices, pairing, event ids."""
    cursor = await conn.execute(
        "SELECT account_id FROM accounts WHERE platform = %(p)s "
        "UNION SELECT account_id FROM access_notices WHERE platform = %(p)s "
        "UNION SELECT account_id FROM pairing_requests WHERE platform = %(p)s "
        "UNION SELECT split_part(event_id, ':', 1) FROM inbound_events WHERE platform = %(p)s",
        {"p": platform},
    )
    return {str(row[0]) for row in await cursor.fetchall()}


async def rename_account_ids(conn: Conn, renames: Mapping[str, str]) -> int:
    """Replace every whole-token occurrence of each old id by its new id wherever ids are kept.

    ``renames`` maps each form an old id takes to the same form of its new id; old ids are matched as
    whole tokens (runs of letters, digits, ``_``, ``-`` and ``%``), as on SQLite. The server finds the rows
    that carry an old token and locks them; the rewrite is the same Python substitution SQLite runs.
    Returns the rows changed."""
    if not renames:
        return 0
    old = list(renames)
    changed = 0
    for table, column in _ACCOUNT_ID_COLUMNS:
        found = await conn.execute(
            f"SELECT ctid::text, {column} FROM {table} WHERE {column} IS NOT NULL AND EXISTS ("
            f"SELECT 1 FROM regexp_matches({column}, %s, 'g') AS token WHERE token[1] = ANY(%s)) FOR UPDATE",
            (_ID_TOKEN_PATTERN, old),
        )
        rows = [
            (_ID_TOKEN.sub(lambda m: renames.get(m.group(0), m.group(0)), str(value)), ctid)
            for ctid, value in await found.fetchall()
        ]
        if rows:
            async with conn.cursor() as cursor:
                await cursor.executemany(f"UPDATE {table} SET {column} = %s WHERE ctid = %s::tid", rows)
            changed += len(rows)
    return changed


async def _rekey(conn: Conn, platform: str, forms: Callable[[str], Mapping[str, str]]) -> int:
    renames: dict[str, str] = {}
    rekeyed = 0
    for account_id in sorted(await platform_account_ids(conn, platform)):
        renamed = forms(account_id)
        rekeyed += bool(renamed)
        renames.update(renamed)
    await rename_account_ids(conn, renames)
    return rekeyed


class PgIdentity:
    """The ``IdentityRepository`` on PostgreSQL; reads on one snapshot (one-statement reads outside a
    transaction: one round trip), each write one transaction."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def account_person(self, platform: str, account_id: str) -> str | None:
        return await self._db.run_autocommit_read(lambda c: account_person(c, platform, account_id))

    async def ensure_account(self, platform: str, account_id: str, display_name: str | None) -> str:
        return await self._db.run_write(lambda c: ensure_account(c, platform, account_id, display_name))

    async def accounts_of(self, person_id: str) -> tuple[AccountRecord, ...]:
        return await self._db.run_autocommit_read(lambda c: accounts_of(c, person_id))

    async def issue_link_code(
        self,
        person_id: str,
        *,
        ttl_s: float,
        per_window: int,
        window_s: float,
        new_code: Callable[[], str],
    ) -> IssuedLinkCode:
        return await self._db.run_write(
            lambda c: issue_link_code(
                c, person_id, ttl_s=ttl_s, per_window=per_window, window_s=window_s, new_code=new_code
            )
        )

    async def void_link_code(self, code: str, reason: str) -> bool:
        return await self._db.run_write(lambda c: void_link_code(c, code, reason))

    async def redeem_link_code(self, code: str, platform: str, account_id: str) -> Redemption:
        return await self._db.run_write(lambda c: redeem_link_code(c, code, platform, account_id))

    async def platform_account_ids(self, platform: str) -> frozenset[str]:
        return frozenset(await self._db.run_autocommit_read(lambda c: platform_account_ids(c, platform)))

    async def rekey_accounts(self, platform: str, forms: Callable[[str], Mapping[str, str]]) -> int:
        return await self._db.run_write(lambda c: _rekey(c, platform, forms))
