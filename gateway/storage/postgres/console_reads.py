"""The PostgreSQL console reads: every query behind ``gateway.storage.console_reads``, and ``PgConsoleReads``.

Invariants: nothing here writes; each method is one read-only snapshot (``run_read``); a transcript page is
cut by message id, which is exact here for one conversation because appends lock their segment row before
drawing ids and a compression switch holds the parent's lock, so a later segment's ids are all larger
(``agent_core.storage.postgres.messages``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_core.storage.audit import MemoryAuditRecord
from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.messages import MESSAGE_COLUMNS, message_from_row
from agent_core.storage.records import MessageRecord
from gateway.storage.admin_reads import MAX_PAGE, Page
from gateway.storage.console_reads import ActivityBucket, FailedDelivery, LinkRecord, UsageTotals

_AUDIT_COLUMNS = "id, at, person_id, conversation_id, actor, store, action, old_text, new_text"


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


async def _all(conn: Conn, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    return await (await conn.execute(query, params)).fetchall()


async def _count(conn: Conn, query: str, params: Sequence[object] = ()) -> int:
    row = await (await conn.execute(query, params)).fetchone()
    return 0 if row is None else int(row[0])


async def transcript(
    conn: Conn, conversation_id: str, *, after_id: int, limit: int
) -> tuple[MessageRecord, ...]:
    rows = await _all(
        conn,
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = %s AND id > %s ORDER BY id LIMIT %s",
        (conversation_id, after_id, _clamp(limit)),
    )
    return tuple(message_from_row(row) for row in rows)


async def activity(conn: Conn, *, since: float, bucket_s: int) -> tuple[ActivityBucket, ...]:
    width = max(1, bucket_s)
    found: dict[int, list[int]] = {}
    turns = await _all(
        conn,
        """SELECT floor((finished_at - %s) / %s)::bigint, count(*) FILTER (WHERE state = 'done'),
                  count(*) FILTER (WHERE state = 'failed')
           FROM turn_jobs WHERE state IN ('done', 'failed') AND finished_at >= %s GROUP BY 1""",
        (since, width, since),
    )
    for bucket, done, failed in turns:
        found.setdefault(int(bucket), [0, 0, 0])[0:2] = [int(done), int(failed)]
    deliveries = await _all(
        conn,
        """SELECT floor((created_at - %s) / %s)::bigint, count(*) FROM outbox
           WHERE state = 'failed' AND created_at >= %s GROUP BY 1""",
        (since, width, since),
    )
    for bucket, failed in deliveries:
        found.setdefault(int(bucket), [0, 0, 0])[2] = int(failed)
    return tuple(ActivityBucket(since + bucket * width, *counts) for bucket, counts in sorted(found.items()))


async def usage_since(conn: Conn, since: float) -> UsageTotals:
    rows = await _all(
        conn,
        """SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
                  coalesce(sum(cost_usd), 0) FROM usage_log WHERE at >= %s""",
        (since,),
    )
    row = rows[0]
    calls, input_tokens, output_tokens, cache_read, cache_write = (int(value) for value in row[:5])
    return UsageTotals(calls, input_tokens, output_tokens, cache_read, cache_write, float(row[5]))


async def audit_log(conn: Conn, *, person_id: str | None, limit: int, offset: int) -> Page[MemoryAuditRecord]:
    where, params = ("WHERE person_id = %s", [person_id]) if person_id is not None else ("", [])
    total = await _count(conn, f"SELECT count(*) FROM memory_audit {where}", params)
    limit, offset = _clamp(limit), max(0, offset)
    rows = await _all(
        conn,
        f"SELECT {_AUDIT_COLUMNS} FROM memory_audit {where} ORDER BY at DESC, id DESC LIMIT %s OFFSET %s",
        [*params, limit, offset],
    )
    records = tuple(
        MemoryAuditRecord(int(r[0]), float(r[1]), r[2], r[3], str(r[4]), str(r[5]), str(r[6]), r[7], r[8])
        for r in rows
    )
    return Page(records, total, limit, offset)


async def link_history(conn: Conn, person_id: str) -> tuple[LinkRecord, ...]:
    rows = await _all(
        conn,
        """SELECT created_at, expires_at, used_at, used_by FROM link_codes WHERE person_id = %s
           ORDER BY created_at DESC LIMIT %s""",
        (person_id, MAX_PAGE),
    )
    return tuple(
        LinkRecord(float(r[0]), float(r[1]), None if r[2] is None else float(r[2]), r[3]) for r in rows
    )


async def failed_deliveries(conn: Conn, *, limit: int, offset: int) -> Page[FailedDelivery]:
    total = await _count(conn, "SELECT count(*) FROM outbox WHERE state = 'failed'")
    limit, offset = _clamp(limit), max(0, offset)
    rows = await _all(
        conn,
        """SELECT id, conversation_id, platform, chat_ref, kind, text, attempts, created_at, error
           FROM outbox WHERE state = 'failed' ORDER BY id DESC LIMIT %s OFFSET %s""",
        (limit, offset),
    )
    found = tuple(
        FailedDelivery(
            int(r[0]), str(r[1]), r[2], str(r[3]), str(r[4]), str(r[5]), int(r[6]), float(r[7]), r[8]
        )
        for r in rows
    )
    return Page(found, total, limit, offset)


class PgConsoleReads:
    """``ConsoleReads`` over one ``PgDatabase``; each method is one read-only snapshot."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def transcript(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRecord, ...]:
        return await self._db.run_read(
            lambda c: transcript(c, conversation_id, after_id=after_id, limit=limit)
        )

    async def activity(self, *, since: float, bucket_s: int) -> tuple[ActivityBucket, ...]:
        return await self._db.run_read(lambda c: activity(c, since=since, bucket_s=bucket_s))

    async def usage_since(self, since: float) -> UsageTotals:
        return await self._db.run_read(lambda c: usage_since(c, since))

    async def audit_log(
        self, *, person_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> Page[MemoryAuditRecord]:
        return await self._db.run_read(
            lambda c: audit_log(c, person_id=person_id, limit=limit, offset=offset)
        )

    async def link_history(self, person_id: str) -> tuple[LinkRecord, ...]:
        return await self._db.run_read(lambda c: link_history(c, person_id))

    async def failed_deliveries(self, *, limit: int = 50, offset: int = 0) -> Page[FailedDelivery]:
        return await self._db.run_read(lambda c: failed_deliveries(c, limit=limit, offset=offset))
