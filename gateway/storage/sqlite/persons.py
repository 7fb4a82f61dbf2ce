"""Persons, their platform accounts and one-time link codes in state.db: the SQL and ``SqliteIdentity``.

Invariants: an account maps to exactly one person (the accounts primary key); an account is created
together with its person in one transaction, so no account ever names a missing person; an account moves
to another person only by redeeming an unexpired, unused link code, in the same transaction that marks
the code used, so a code joins at most one account; ``rename_account_ids`` rewrites an account's id in
every row that carries it, in one transaction, so no row is left naming the old id.
The functions take a sqlite3 connection; ``SqliteIdentity`` runs the reads on a reader and each write as
one ``run_write`` transaction, with ``now`` from its clock.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable, Mapping

from agent_core.storage import StateError
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.conversations import new_id
from gateway.storage.identity import AccountRecord, IssuedLinkCode, RedeemStatus, Redemption


def new_person_id() -> str:
    """A fresh, unguessable person id (``p_`` + time-ordered random base32), safe as a directory name."""
    return new_id("p")


def account_person(conn: sqlite3.Connection, platform: str, account_id: str) -> str | None:
    """The person id of an account, or None for an account never seen."""
    row = conn.execute(
        "SELECT person_id FROM accounts WHERE platform = ? AND account_id = ?", (platform, account_id)
    ).fetchone()
    return None if row is None else str(row[0])


def ensure_account(
    conn: sqlite3.Connection, platform: str, account_id: str, display_name: str | None, now: float
) -> tuple[str, bool]:
    """The account's person id, creating person and account on first sight; (person_id, created)."""
    existing = account_person(conn, platform, account_id)
    if existing is not None:
        return existing, False
    person_id = new_person_id()
    conn.execute(
        "INSERT INTO persons(id, display_name, created_at) VALUES (?, ?, ?)", (person_id, display_name, now)
    )
    conn.execute(
        "INSERT INTO accounts(platform, account_id, person_id, created_at) VALUES (?, ?, ?, ?)",
        (platform, account_id, person_id, now),
    )
    return person_id, True


def accounts_of(conn: sqlite3.Connection, person_id: str) -> tuple[AccountRecord, ...]:
    """Every account of a person, oldest first."""
    rows = conn.execute(
        "SELECT platform, account_id, person_id, created_at FROM accounts WHERE person_id = ? "
        "ORDER BY created_at, platform, account_id",
        (person_id,),
    ).fetchall()
    return tuple(AccountRecord(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows)


def link_codes_since(conn: sqlite3.Connection, person_id: str, since: float) -> list[float]:
    """Creation times of the person's link codes issued after ``since``, oldest first."""
    rows = conn.execute(
        "SELECT created_at FROM link_codes WHERE person_id = ? AND created_at > ? ORDER BY created_at",
        (person_id, since),
    ).fetchall()
    return [float(r[0]) for r in rows]


def issue_link_code(
    conn: sqlite3.Connection, person_id: str, now: float, ttl_s: float, new_code: Callable[[], str]
) -> str:
    """Store a new code for ``person_id`` and void the person's older open codes; return the code.

    Only the newest code works, so a code shown by mistake is voided by asking for another.
    """
    conn.execute(
        "UPDATE link_codes SET used_at = ?, used_by = 'superseded' WHERE person_id = ? AND used_at IS NULL",
        (now, person_id),
    )
    # A collision with any code ever issued is astronomically rare; retry rather than reuse a code.
    for _ in range(8):
        code = new_code()
        cursor = conn.execute(
            "INSERT OR IGNORE INTO link_codes(code, person_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            (code, person_id, now, now + ttl_s),
        )
        if cursor.rowcount == 1:
            return code
    raise StateError("could not allocate a unique link code")


def void_link_code(conn: sqlite3.Connection, code: str, now: float, reason: str) -> bool:
    """Mark an open code used without linking anything (e.g. it was shown in a group); True if it was open."""
    cursor = conn.execute(
        "UPDATE link_codes SET used_at = ?, used_by = ? WHERE code = ? AND used_at IS NULL",
        (now, reason, code),
    )
    return cursor.rowcount == 1


def redeem_link_code(
    conn: sqlite3.Connection, code: str, platform: str, account_id: str, now: float
) -> Redemption:
    """Join the account to the code's person (creating the account if new) and use up the code.

    The account's previous person is left as it is (its memory and conversations are never merged).
    """
    row = conn.execute(
        "SELECT person_id, expires_at, used_at FROM link_codes WHERE code = ?", (code,)
    ).fetchone()
    if row is None:
        return Redemption(RedeemStatus.UNKNOWN)
    person_id, expires_at, used_at = str(row[0]), float(row[1]), row[2]
    if used_at is not None:
        return Redemption(RedeemStatus.USED, person_id)
    if now >= expires_at:
        return Redemption(RedeemStatus.EXPIRED, person_id)
    previous = account_person(conn, platform, account_id)
    if previous == person_id:
        return Redemption(RedeemStatus.SAME_PERSON, person_id, previous)
    if previous is None:
        conn.execute(
            "INSERT INTO accounts(platform, account_id, person_id, created_at) VALUES (?, ?, ?, ?)",
            (platform, account_id, person_id, now),
        )
    else:
        conn.execute(
            "UPDATE accounts SET person_id = ? WHERE platform = ? AND account_id = ?",
            (person_id, platform, account_id),
        )
    conn.execute(
        "UPDATE link_codes SET used_at = ?, used_by = ? WHERE code = ?",
        (now, f"{platform}:{account_id}", code),
    )
    return Redemption(RedeemStatus.LINKED, person_id, previous)


# Every column that may carry an account's id: as itself, inside a session key or a chat reference, or as
# the first part of an event id (and of the keys and reply references derived from event ids).
_ACCOUNT_ID_COLUMNS = (
    ("accounts", "account_id"),
    ("access_notices", "account_id"),
    ("pairing_requests", "account_id"),
    ("link_codes", "used_by"),
    ("conversations", "session_key"),
    ("sessions", "session_key"),
    ("sessions", "user_id"),
    ("sessions", "chat_id"),
    ("messages", "platform_message_id"),
    ("pending_messages", "platform_message_id"),
    ("inbound_events", "event_id"),
    ("turn_jobs", "chat_ref"),
    ("turn_jobs", "reply_to"),
    ("outbox", "chat_ref"),
    ("outbox", "reply_to"),
    ("outbox", "idempotency_key"),
)
_ID_TOKEN = re.compile(r"[A-Za-z0-9_%-]+")


def platform_account_ids(conn: sqlite3.Connection, platform: str) -> set[str]:
    """Every account id of ``platform`` that state.db mentions: accounts, notices, pairing, event ids."""
    found: set[str] = set()
    for table in ("accounts", "access_notices", "pairing_requests"):
        rows = conn.execute(f"SELECT DISTINCT account_id FROM {table} WHERE platform = ?", (platform,))
        found.update(str(row[0]) for row in rows)
    events = conn.execute("SELECT event_id FROM inbound_events WHERE platform = ?", (platform,))
    found.update(str(row[0]).partition(":")[0] for row in events)
    return found


def rename_account_ids(conn: sqlite3.Connection, renames: Mapping[str, str]) -> int:
    """Replace every whole-token occurrence of each old id by its new id wherever ids are kept.

    ``renames`` maps each form an old id takes (as is, and percent-escaped as in session keys) to the
    same form of its new id. Old ids are matched as whole tokens (runs of letters, digits, ``_``, ``-``
    and ``%``), so only an id itself is rewritten, never part of another. Freed space is zeroed
    (``secure_delete``) so the old values do not linger in the file. Returns the rows changed.
    """
    if not renames:
        return 0

    def rename(value: str | None) -> str | None:
        if value is None:
            return None
        return _ID_TOKEN.sub(lambda m: renames.get(m.group(0), m.group(0)), value)

    def mentions(value: str | None) -> bool:
        return value is not None and any(m.group(0) in renames for m in _ID_TOKEN.finditer(value))

    conn.create_function("mnemogate_rename_id", 1, rename, deterministic=True)
    conn.create_function("mnemogate_mentions_id", 1, mentions, deterministic=True)
    conn.execute("PRAGMA secure_delete = ON")
    changed = 0
    try:
        for table, column in _ACCOUNT_ID_COLUMNS:
            cursor = conn.execute(
                f"UPDATE {table} SET {column} = mnemogate_rename_id({column}) "
                f"WHERE mnemogate_mentions_id({column})"
            )
            changed += max(0, cursor.rowcount)
    finally:
        conn.execute("PRAGMA secure_delete = OFF")
    return changed


class SqliteIdentity:
    """The ``IdentityRepository`` on state.db; ``clock`` (backend configuration) stamps and expires codes."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def account_person(self, platform: str, account_id: str) -> str | None:
        return await self._state.run_read(
            functools.partial(account_person, platform=platform, account_id=account_id)
        )

    async def ensure_account(self, platform: str, account_id: str, display_name: str | None) -> str:
        def ensure(conn: sqlite3.Connection) -> str:
            return ensure_account(conn, platform, account_id, display_name, self._clock())[0]

        return await self._state.run_write(ensure)

    async def accounts_of(self, person_id: str) -> tuple[AccountRecord, ...]:
        return await self._state.run_read(functools.partial(accounts_of, person_id=person_id))

    async def issue_link_code(
        self,
        person_id: str,
        *,
        ttl_s: float,
        per_window: int,
        window_s: float,
        new_code: Callable[[], str],
    ) -> IssuedLinkCode:
        def issue(conn: sqlite3.Connection) -> IssuedLinkCode:
            now = self._clock()
            recent = link_codes_since(conn, person_id, now - window_s)
            if len(recent) >= per_window:
                # The budget frees up when the oldest code in the window ages out of it.
                return IssuedLinkCode(None, recent[len(recent) - per_window] + window_s - now)
            return IssuedLinkCode(issue_link_code(conn, person_id, now, ttl_s, new_code))

        return await self._state.run_write(issue)

    async def void_link_code(self, code: str, reason: str) -> bool:
        def void(conn: sqlite3.Connection) -> bool:
            return void_link_code(conn, code, self._clock(), reason)

        return await self._state.run_write(void)

    async def redeem_link_code(self, code: str, platform: str, account_id: str) -> Redemption:
        def redeem(conn: sqlite3.Connection) -> Redemption:
            return redeem_link_code(conn, code, platform, account_id, self._clock())

        return await self._state.run_write(redeem)

    async def platform_account_ids(self, platform: str) -> frozenset[str]:
        found = await self._state.run_read(functools.partial(platform_account_ids, platform=platform))
        return frozenset(found)

    async def rekey_accounts(self, platform: str, forms: Callable[[str], Mapping[str, str]]) -> int:
        def rekey(conn: sqlite3.Connection) -> int:
            renames: dict[str, str] = {}
            rekeyed = 0
            for account_id in sorted(platform_account_ids(conn, platform)):
                renamed = forms(account_id)
                rekeyed += bool(renamed)
                renames.update(renamed)
            rename_account_ids(conn, renames)
            return rekeyed

        return await self._state.run_write(rekey)
