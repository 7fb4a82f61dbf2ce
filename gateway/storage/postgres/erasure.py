"""Erasure of a person's gateway rows on PostgreSQL: SQL and ``PgErasure`` (``gateway.storage.erasure``).

Invariants: each method is one transaction; deleted rows' bytes stay in dead tuples until (auto)vacuum
(agent_core/storage/postgres/forget.py says why and docs/operations.md for how long).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import LiteralString

from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.erasure import ConversationRowsForgotten, PersonFootprint, PersonRowsErased

# Outbox rows sent to the person's direct chats outside a conversation of theirs (command replies, notices).
_DIRECT = (
    "SELECT o.id FROM outbox o JOIN unnest(%s::text[], %s::text[]) AS p(platform, chat_id) "
    "ON (o.chat_ref::jsonb ->> 'platform') = p.platform AND (o.chat_ref::jsonb ->> 'chat_id') = p.chat_id "
    "AND (o.chat_ref::jsonb ->> 'kind') = 'dm'"
)
_DIRECT_OUTBOX: tuple[LiteralString, ...] = (
    "DELETE FROM outbox_chunks WHERE outbox_id IN (" + _DIRECT + ")",
    "DELETE FROM outbox WHERE id IN (" + _DIRECT + ")",
)

# Their turns in conversations of others (a shared thread): replies queued for them, held messages.
_THEIRS = "SELECT id FROM outbox WHERE job_id IN (SELECT id FROM turn_jobs WHERE person_id = %s)"
_THEIR_TURNS: tuple[LiteralString, ...] = (
    "DELETE FROM outbox_chunks WHERE outbox_id IN (" + _THEIRS + ")",
    "DELETE FROM outbox WHERE id IN (" + _THEIRS + ")",
    "DELETE FROM pending_messages WHERE author = %s",
)


async def footprint(conn: Conn, person_id: str) -> PersonFootprint:
    person = await (await conn.execute("SELECT 1 FROM persons WHERE id = %s", (person_id,))).fetchone()
    conversations = await (
        await conn.execute(
            "SELECT id FROM conversations WHERE person_id = %s ORDER BY created_at", (person_id,)
        )
    ).fetchall()
    accounts = await (
        await conn.execute("SELECT platform, account_id FROM accounts WHERE person_id = %s", (person_id,))
    ).fetchall()
    chats = await (
        await conn.execute(
            "SELECT DISTINCT platform, chat_id FROM segments WHERE person_id = %s AND chat_type = 'dm' "
            "AND platform IS NOT NULL AND chat_id IS NOT NULL",
            (person_id,),
        )
    ).fetchall()
    ids = tuple(str(r[0]) for r in conversations)
    return PersonFootprint(
        person_id,
        person is not None or bool(ids),
        ids,
        tuple((str(r[0]), str(r[1])) for r in accounts),
        tuple((str(r[0]), str(r[1])) for r in chats),
    )


async def forget_conversation_rows(conn: Conn, conversation_ids: list[str]) -> ConversationRowsForgotten:
    ids = conversation_ids
    await conn.execute(
        "DELETE FROM outbox_chunks WHERE outbox_id IN "
        "(SELECT id FROM outbox WHERE conversation_id = ANY(%s))",
        (ids,),
    )
    outbox = await conn.execute("DELETE FROM outbox WHERE conversation_id = ANY(%s)", (ids,))
    held = await conn.execute("DELETE FROM pending_messages WHERE conversation_id = ANY(%s)", (ids,))
    jobs = await conn.execute("DELETE FROM turn_jobs WHERE conversation_id = ANY(%s)", (ids,))
    await conn.execute("DELETE FROM leases WHERE conversation_id = ANY(%s)", (ids,))
    ledger = await conn.execute(
        "UPDATE inbound_events SET conversation_id = NULL WHERE conversation_id = ANY(%s)", (ids,)
    )
    await conn.execute(
        "DELETE FROM schedule_runs WHERE conversation_id = ANY(%s) OR schedule_id IN "
        "(SELECT id FROM schedules WHERE conversation_id = ANY(%s))",
        (ids, ids),
    )
    schedules = await conn.execute("DELETE FROM schedules WHERE conversation_id = ANY(%s)", (ids,))
    return ConversationRowsForgotten(
        jobs.rowcount, outbox.rowcount, held.rowcount, schedules.rowcount, ledger.rowcount
    )


async def erase_person_rows(conn: Conn, found: PersonFootprint) -> PersonRowsErased:
    person_id = found.person_id
    platforms = [p for p, _ in found.accounts]
    account_ids = [a for _, a in found.accounts]
    keyed = (*found.accounts, *found.direct_chats)
    await conn.execute(
        "DELETE FROM schedule_runs WHERE schedule_id IN (SELECT id FROM schedules WHERE person_id = %s)",
        (person_id,),
    )
    schedules = await conn.execute("DELETE FROM schedules WHERE person_id = %s", (person_id,))
    chat_platforms = [p for p, _ in found.direct_chats]
    chat_ids = [c for _, c in found.direct_chats]
    for statement in _DIRECT_OUTBOX:
        await conn.execute(statement, (chat_platforms, chat_ids))
    for statement in _THEIR_TURNS:
        await conn.execute(statement, (person_id,))
    await conn.execute("DELETE FROM person_timezones WHERE person_id = %s", (person_id,))
    await conn.execute("DELETE FROM turn_jobs WHERE person_id = %s", (person_id,))
    codes = await conn.execute("DELETE FROM link_codes WHERE person_id = %s", (person_id,))
    pairing = await conn.execute(
        "DELETE FROM pairing_requests WHERE (platform, account_id) IN "
        "(SELECT * FROM unnest(%s::text[], %s::text[]))",
        (platforms, account_ids),
    )
    await conn.execute(
        "DELETE FROM access_notices WHERE (platform, account_id) IN "
        "(SELECT * FROM unnest(%s::text[], %s::text[]))",
        (platforms, account_ids),
    )
    checkpoints = await conn.execute(
        "DELETE FROM adapter_checkpoints WHERE (platform, key) IN "
        "(SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([p for p, _ in keyed], [k for _, k in keyed]),
    )
    # Usage keeps its numbers (totals still add up) but no longer names the person; their budget state goes.
    await conn.execute("UPDATE usage_log SET person_id = NULL WHERE person_id = %s", (person_id,))
    await conn.execute("DELETE FROM budget_notices WHERE person_id = %s", (person_id,))
    budget_key = f"person:{person_id}"
    await conn.execute("DELETE FROM budget_slots WHERE scope_key = %s", (budget_key,))
    await conn.execute("DELETE FROM budget_watermarks WHERE scope_key = %s", (budget_key,))
    accounts = await conn.execute("DELETE FROM accounts WHERE person_id = %s", (person_id,))
    person = await conn.execute("DELETE FROM persons WHERE id = %s", (person_id,))
    return PersonRowsErased(
        accounts.rowcount,
        codes.rowcount,
        pairing.rowcount,
        schedules.rowcount,
        checkpoints.rowcount,
        person.rowcount > 0,
    )


class PgErasure:
    """The ``ErasureRepository`` on PostgreSQL."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def footprint(self, person_id: str) -> PersonFootprint:
        return await self._db.run_read(lambda c: footprint(c, person_id))

    async def forget_conversation_rows(self, conversation_ids: Collection[str]) -> ConversationRowsForgotten:
        if not conversation_ids:
            return ConversationRowsForgotten()
        ids = sorted(set(conversation_ids))
        return await self._db.run_write(lambda c: forget_conversation_rows(c, ids))

    async def erase_person_rows(self, footprint: PersonFootprint) -> PersonRowsErased:
        return await self._db.run_write(lambda c: erase_person_rows(c, footprint))
