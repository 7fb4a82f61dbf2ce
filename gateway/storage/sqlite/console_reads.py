"""The SQLite console reads: every query behind ``gateway.storage.console_reads``, and ``SqliteConsoleReads``.

Every function takes a reader ``sqlite3.Connection`` and returns the port's frozen records; none writes.
Each ``SqliteConsoleReads`` method is one ``StateStore.run_read``, so what one method returns is one
snapshot. Transcript pages are cut by message id, which follows commit order here (one writer).
"""

from __future__ import annotations

import sqlite3

from agent_core.storage.audit import MemoryAuditRecord
from agent_core.storage.records import MessageRecord
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.messages import MESSAGE_COLUMNS, message_from_row
from gateway.storage.admin_reads import MAX_PAGE, Page
from gateway.storage.console_reads import ActivityBucket, FailedDelivery, LinkRecord, UsageTotals

_AUDIT_COLUMNS = "id, at, person_id, conversation_id, actor, store, action, old_text, new_text"


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def transcript(
    conn: sqlite3.Connection, conversation_id: str, *, after_id: int, limit: int
) -> tuple[MessageRecord, ...]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND id > ? ORDER BY id LIMIT ?",
        (conversation_id, after_id, _clamp(limit)),
    ).fetchall()
    return tuple(message_from_row(row) for row in rows)


def activity(conn: sqlite3.Connection, *, since: float, bucket_s: int) -> tuple[ActivityBucket, ...]:
    width = max(1, bucket_s)
    found: dict[int, list[int]] = {}
    turns = conn.execute(
        """SELECT CAST((finished_at - ?) / ? AS INTEGER), sum(state = 'done'), sum(state = 'failed')
           FROM turn_jobs WHERE state IN ('done', 'failed') AND finished_at >= ? GROUP BY 1""",
        (since, width, since),
    ).fetchall()
    for bucket, done, failed in turns:
        found.setdefault(int(bucket), [0, 0, 0])[0:2] = [int(done), int(failed)]
    deliveries = conn.execute(
        """SELECT CAST((created_at - ?) / ? AS INTEGER), count(*) FROM outbox
           WHERE state = 'failed' AND created_at >= ? GROUP BY 1""",
        (since, width, since),
    ).fetchall()
    for bucket, failed in deliveries:
        found.setdefault(int(bucket), [0, 0, 0])[2] = int(failed)
    return tuple(ActivityBucket(since + bucket * width, *counts) for bucket, counts in sorted(found.items()))


def usage_since(conn: sqlite3.Connection, since: float) -> UsageTotals:
    row = conn.execute(
        """SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
                  coalesce(sum(cost_usd), 0) FROM usage_log WHERE at >= ?""",
        (since,),
    ).fetchone()
    calls, input_tokens, output_tokens, cache_read, cache_write = (int(value) for value in row[:5])
    return UsageTotals(calls, input_tokens, output_tokens, cache_read, cache_write, float(row[5]))


def audit_log(
    conn: sqlite3.Connection, *, person_id: str | None, limit: int, offset: int
) -> Page[MemoryAuditRecord]:
    where, params = ("WHERE person_id = ?", [person_id]) if person_id is not None else ("", [])
    total = int(conn.execute(f"SELECT count(*) FROM memory_audit {where}", params).fetchone()[0])
    limit, offset = _clamp(limit), max(0, offset)
    rows = conn.execute(
        f"SELECT {_AUDIT_COLUMNS} FROM memory_audit {where} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    records = tuple(
        MemoryAuditRecord(int(r[0]), float(r[1]), r[2], r[3], str(r[4]), str(r[5]), str(r[6]), r[7], r[8])
        for r in rows
    )
    return Page(records, total, limit, offset)


def link_history(conn: sqlite3.Connection, person_id: str) -> tuple[LinkRecord, ...]:
    rows = conn.execute(
        """SELECT created_at, expires_at, used_at, used_by FROM link_codes WHERE person_id = ?
           ORDER BY created_at DESC LIMIT ?""",
        (person_id, MAX_PAGE),
    ).fetchall()
    return tuple(
        LinkRecord(float(r[0]), float(r[1]), None if r[2] is None else float(r[2]), r[3]) for r in rows
    )


def failed_deliveries(conn: sqlite3.Connection, *, limit: int, offset: int) -> Page[FailedDelivery]:
    total = int(conn.execute("SELECT count(*) FROM outbox WHERE state = 'failed'").fetchone()[0])
    limit, offset = _clamp(limit), max(0, offset)
    rows = conn.execute(
        """SELECT id, conversation_id, platform, chat_ref, kind, text, attempts, created_at, error
           FROM outbox WHERE state = 'failed' ORDER BY id DESC LIMIT ? OFFSET ?""",
        (limit, offset),
    ).fetchall()
    found = tuple(
        FailedDelivery(
            int(r[0]), str(r[1]), r[2], str(r[3]), str(r[4]), str(r[5]), int(r[6]), float(r[7]), r[8]
        )
        for r in rows
    )
    return Page(found, total, limit, offset)


class SqliteConsoleReads:
    """``ConsoleReads`` over state.db; each method is one read on the store's reader connections."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def transcript(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRecord, ...]:
        return await self._state.run_read(
            lambda c: transcript(c, conversation_id, after_id=after_id, limit=limit)
        )

    async def activity(self, *, since: float, bucket_s: int) -> tuple[ActivityBucket, ...]:
        return await self._state.run_read(lambda c: activity(c, since=since, bucket_s=bucket_s))

    async def usage_since(self, since: float) -> UsageTotals:
        return await self._state.run_read(lambda c: usage_since(c, since))

    async def audit_log(
        self, *, person_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> Page[MemoryAuditRecord]:
        return await self._state.run_read(
            lambda c: audit_log(c, person_id=person_id, limit=limit, offset=offset)
        )

    async def link_history(self, person_id: str) -> tuple[LinkRecord, ...]:
        return await self._state.run_read(lambda c: link_history(c, person_id))

    async def failed_deliveries(self, *, limit: int = 50, offset: int = 0) -> Page[FailedDelivery]:
        return await self._state.run_read(lambda c: failed_deliveries(c, limit=limit, offset=offset))
