"""Erasure of a person's gateway rows in state.db: SQL and ``SqliteErasure`` (``gateway.storage.erasure``).

Invariants: each method is one write transaction on the store's writer (whose connection deletes with
``secure_delete``), followed by a TRUNCATE checkpoint so the WAL's old frames do not keep deleted text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection

from agent_core.storage.sqlite import StateStore
from gateway.storage.erasure import ConversationRowsForgotten, PersonFootprint, PersonRowsErased

_IN = "(SELECT value FROM json_each(?))"
_PAIRS = (
    "(SELECT json_extract(value, '$[0]') AS platform, json_extract(value, '$[1]') AS id FROM json_each(?))"
)


def footprint(conn: sqlite3.Connection, person_id: str) -> PersonFootprint:
    person = conn.execute("SELECT 1 FROM persons WHERE id = ?", (person_id,)).fetchone() is not None
    conversations = tuple(
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM conversations WHERE person_id = ? ORDER BY created_at", (person_id,)
        )
    )
    accounts = tuple(
        (str(r[0]), str(r[1]))
        for r in conn.execute("SELECT platform, account_id FROM accounts WHERE person_id = ?", (person_id,))
    )
    chats = tuple(
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT DISTINCT platform, chat_id FROM sessions WHERE person_id = ? AND chat_type = 'dm' "
            "AND platform IS NOT NULL AND chat_id IS NOT NULL",
            (person_id,),
        )
    )
    return PersonFootprint(person_id, person or bool(conversations), conversations, accounts, chats)


def forget_conversation_rows(
    conn: sqlite3.Connection, conversation_ids: Collection[str]
) -> ConversationRowsForgotten:
    ids = json.dumps(sorted(set(conversation_ids)))
    conn.execute(
        "DELETE FROM outbox_chunks WHERE outbox_id IN "
        f"(SELECT id FROM outbox WHERE conversation_id IN {_IN})",
        (ids,),
    )
    outbox = conn.execute(f"DELETE FROM outbox WHERE conversation_id IN {_IN}", (ids,)).rowcount
    held = conn.execute(f"DELETE FROM pending_messages WHERE conversation_id IN {_IN}", (ids,)).rowcount
    jobs = conn.execute(f"DELETE FROM turn_jobs WHERE conversation_id IN {_IN}", (ids,)).rowcount
    conn.execute(f"DELETE FROM leases WHERE conversation_id IN {_IN}", (ids,))
    ledger = conn.execute(
        f"UPDATE inbound_events SET conversation_id = NULL WHERE conversation_id IN {_IN}", (ids,)
    ).rowcount
    conn.execute(
        f"DELETE FROM schedule_runs WHERE conversation_id IN {_IN} OR schedule_id IN "
        f"(SELECT id FROM schedules WHERE conversation_id IN {_IN})",
        (ids, ids),
    )
    schedules = conn.execute(f"DELETE FROM schedules WHERE conversation_id IN {_IN}", (ids,)).rowcount
    return ConversationRowsForgotten(jobs, outbox, held, schedules, ledger)


def erase_person_rows(conn: sqlite3.Connection, found: PersonFootprint) -> PersonRowsErased:
    person_id = found.person_id
    accounts = json.dumps([list(pair) for pair in found.accounts])
    keys = json.dumps([list(pair) for pair in (*found.accounts, *found.direct_chats)])
    conn.execute(
        "DELETE FROM schedule_runs WHERE schedule_id IN (SELECT id FROM schedules WHERE person_id = ?)",
        (person_id,),
    )
    schedules = conn.execute("DELETE FROM schedules WHERE person_id = ?", (person_id,)).rowcount
    chats = json.dumps([list(pair) for pair in found.direct_chats])
    direct = (
        "SELECT o.id FROM outbox o JOIN "
        + _PAIRS
        + " p ON json_extract(o.chat_ref, '$.platform') = p.platform "
        "AND json_extract(o.chat_ref, '$.chat_id') = p.id AND json_extract(o.chat_ref, '$.kind') = 'dm'"
    )
    conn.execute(f"DELETE FROM outbox_chunks WHERE outbox_id IN ({direct})", (chats,))
    conn.execute(f"DELETE FROM outbox WHERE id IN ({direct})", (chats,))
    # Their turns in conversations of others (a shared thread): the replies queued for them, what they sent
    # while a turn ran, and the jobs.
    theirs = "SELECT id FROM outbox WHERE job_id IN (SELECT id FROM turn_jobs WHERE person_id = ?)"
    conn.execute(f"DELETE FROM outbox_chunks WHERE outbox_id IN ({theirs})", (person_id,))
    conn.execute(f"DELETE FROM outbox WHERE id IN ({theirs})", (person_id,))
    conn.execute("DELETE FROM pending_messages WHERE author = ?", (person_id,))
    conn.execute("DELETE FROM person_timezones WHERE person_id = ?", (person_id,))
    conn.execute("DELETE FROM turn_jobs WHERE person_id = ?", (person_id,))
    codes = conn.execute("DELETE FROM link_codes WHERE person_id = ?", (person_id,)).rowcount
    pairing = conn.execute(
        f"DELETE FROM pairing_requests WHERE (platform, account_id) IN (SELECT platform, id FROM {_PAIRS})",
        (accounts,),
    ).rowcount
    conn.execute(
        f"DELETE FROM access_notices WHERE (platform, account_id) IN (SELECT platform, id FROM {_PAIRS})",
        (accounts,),
    )
    checkpoints = conn.execute(
        f"DELETE FROM adapter_checkpoints WHERE (platform, key) IN (SELECT platform, id FROM {_PAIRS})",
        (keys,),
    ).rowcount
    # Usage keeps its numbers (totals still add up) but no longer names the person; their budget state goes.
    conn.execute("UPDATE usage_log SET person_id = NULL WHERE person_id = ?", (person_id,))
    conn.execute("DELETE FROM budget_notices WHERE person_id = ?", (person_id,))
    budget_key = f"person:{person_id}"
    conn.execute("DELETE FROM budget_slots WHERE scope_key = ?", (budget_key,))
    conn.execute("DELETE FROM budget_watermarks WHERE scope_key = ?", (budget_key,))
    removed_accounts = conn.execute("DELETE FROM accounts WHERE person_id = ?", (person_id,)).rowcount
    person = conn.execute("DELETE FROM persons WHERE id = ?", (person_id,)).rowcount > 0
    return PersonRowsErased(removed_accounts, codes, pairing, schedules, checkpoints, person)


class SqliteErasure:
    """The ``ErasureRepository`` on state.db."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def footprint(self, person_id: str) -> PersonFootprint:
        return await self._state.run_read(lambda c: footprint(c, person_id))

    async def forget_conversation_rows(self, conversation_ids: Collection[str]) -> ConversationRowsForgotten:
        if not conversation_ids:
            return ConversationRowsForgotten()
        ids = tuple(conversation_ids)
        forgotten = await self._state.run_write(lambda c: forget_conversation_rows(c, ids))
        await self._state.truncate_wal()
        return forgotten

    async def erase_person_rows(self, footprint: PersonFootprint) -> PersonRowsErased:
        erased = await self._state.run_write(lambda c: erase_person_rows(c, footprint))
        await self._state.truncate_wal()
        return erased
