"""Retention on PostgreSQL: ``PgRetention``, the retention port over one database shared by every host.

Invariants: every condition is the SQLite backend's (gateway/storage/sqlite/retention_rules.py) in this
dialect, used both by ``preview`` (a count) and by the pruning (a delete of the oldest ``limit``); each
pruning call is one transaction that locks its rows ``FOR UPDATE SKIP LOCKED`` (a row another host is
working on is left for the next batch, so hosts never wait on one another) and adds what it removed to
``retention_totals`` in the same transaction; ages are measured on the server's clock (``mg_now()``);
ending an idle conversation takes its session key's advisory lock first, then its row, like every other
end (the lock order of the README); the run's lease is a row on the server's clock. Space is left to
autovacuum: deleted rows' space is reused by later inserts and ``VACUUM FULL`` would lock the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import LiteralString

from agent_core.storage.postgres.conversations import KEY_LOCK_SPACE, end_conversation
from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.tool_output_stubs import stub_tool_outputs
from gateway.storage.retention import (
    RETENTION_END_REASON,
    RetentionCounts,
    RetentionCutoffs,
    RetentionKind,
    RunClaim,
    SpaceReport,
)

_BUSY_CONVERSATION: LiteralString = (
    "c.id NOT IN (SELECT conversation_id FROM turn_jobs WHERE state IN ('queued', 'running')) "
    "AND c.id NOT IN (SELECT conversation_id FROM schedules WHERE state = 'active') "
    "AND c.id NOT IN (SELECT conversation_id FROM pending_messages)"
)
_GIVEN_UP_OUTBOX: LiteralString = (
    "FROM outbox WHERE state = 'failed' AND created_at < mg_now() - %(age)s "
    "AND (job_id IS NULL OR job_id NOT IN (SELECT id FROM turn_jobs WHERE schedule_run_id IS NOT NULL "
    "AND schedule_run_id IN (SELECT id FROM schedule_runs)))"
)
_LEDGER: LiteralString = "FROM inbound_events WHERE received_at < mg_now() - %(age)s"
_FINISHED_JOBS: LiteralString = (
    "FROM turn_jobs WHERE finished_at < mg_now() - %(age)s AND state IN ('done', 'failed') "
    "AND id NOT IN (SELECT job_id FROM outbox WHERE state IN ('pending', 'sending') AND job_id IS NOT NULL) "
    "AND id NOT IN (SELECT job_id FROM pending_messages) "
    "AND (schedule_run_id IS NULL OR schedule_run_id NOT IN (SELECT id FROM schedule_runs))"
)
_SCHEDULE_RUNS: LiteralString = (
    "FROM schedule_runs r WHERE r.fired_at < mg_now() - %(age)s "
    "AND r.id <> (SELECT max(l.id) FROM schedule_runs l WHERE l.schedule_id = r.schedule_id) "
    "AND r.id NOT IN (SELECT schedule_run_id FROM turn_jobs "
    "WHERE schedule_run_id IS NOT NULL AND state IN ('queued', 'running'))"
)
# The floor term (TOOL_OUTPUT_FLOOR_CHARS) is written out so the partial index serves the scan.
_LARGE_TOOL_OUTPUTS: LiteralString = (
    "FROM messages WHERE role = 'tool' AND length(content) > 1000 AND length(content) > %(min_chars)s "
    "AND created_at < mg_now() - %(age)s"
)
_ACTIVITY: LiteralString = (
    "greatest(c.created_at, coalesce(c.reopened_at, 0), "
    "coalesce((SELECT s.started_at FROM segments s WHERE s.id = c.tip_segment_id), 0), "
    "coalesce((SELECT m.created_at FROM messages m WHERE m.conversation_id = c.id "
    "AND m.segment_id = c.tip_segment_id ORDER BY m.id DESC LIMIT 1), 0))"
)
_IDLE_CONVERSATIONS: LiteralString = (
    "FROM conversations c WHERE c.ended_at IS NULL AND c.created_at < mg_now() - %(age)s "
    "AND " + _ACTIVITY + " < mg_now() - %(age)s AND " + _BUSY_CONVERSATION
)
_EXPIRED_CONVERSATIONS: LiteralString = (
    "FROM conversations c WHERE c.ended_at IS NOT NULL AND c.ended_at < mg_now() - %(grace)s "
    "AND (c.end_reason = 'retention' OR c.ended_at < mg_now() - %(grace)s - %(idle)s) "
    "AND " + _BUSY_CONVERSATION + " "
    "AND c.id NOT IN (SELECT conversation_id FROM outbox WHERE state IN ('pending', 'sending'))"
)
_ADD_TOTAL: LiteralString = (
    "INSERT INTO retention_totals(kind, removed) VALUES (%s, %s) "
    "ON CONFLICT (kind) DO UPDATE SET removed = retention_totals.removed + excluded.removed"
)
assert RETENTION_END_REASON == "retention"  # written into _EXPIRED_CONVERSATIONS


class PgRetention:
    """The retention port over one ``PgDatabase``."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def preview(self, cutoffs: RetentionCutoffs) -> RetentionCounts:
        return await self._db.run_read(lambda conn: _preview(conn, cutoffs))

    async def prune_given_up_outbox(self, *, older_than_s: float, limit: int) -> int:
        async def work(conn: Conn) -> int:
            ids = await _ids(conn, "SELECT id " + _GIVEN_UP_OUTBOX, older_than_s, limit, order="id")
            await conn.execute("DELETE FROM outbox_chunks WHERE outbox_id = ANY(%s)", (ids,))
            await conn.execute("DELETE FROM outbox WHERE id = ANY(%s)", (ids,))
            return await _add(conn, "outbox_given_up", len(ids))

        return await self._db.run_write(work)

    async def prune_ledger(self, *, older_than_s: float, limit: int) -> int:
        async def work(conn: Conn) -> int:
            cursor = await conn.execute(
                "WITH doomed AS (SELECT platform, event_id " + _LEDGER + " ORDER BY received_at "
                "LIMIT %(limit)s FOR UPDATE SKIP LOCKED) DELETE FROM inbound_events e USING doomed d "
                "WHERE e.platform = d.platform AND e.event_id = d.event_id",
                {"age": older_than_s, "limit": limit},
            )
            return await _add(conn, "ledger", cursor.rowcount)

        return await self._db.run_write(work)

    async def prune_jobs(self, *, older_than_s: float, limit: int) -> int:
        async def work(conn: Conn) -> int:
            cursor = await conn.execute(
                "SELECT id, state " + _FINISHED_JOBS + " ORDER BY finished_at LIMIT %(limit)s "
                "FOR UPDATE SKIP LOCKED",
                {"age": older_than_s, "limit": limit},
            )
            rows = [(int(r[0]), str(r[1])) for r in await cursor.fetchall()]
            await conn.execute("DELETE FROM turn_jobs WHERE id = ANY(%s)", ([job for job, _ in rows],))
            await _add(conn, "turn_jobs_done", sum(1 for _, state in rows if state == "done"))
            await _add(conn, "turn_jobs_failed", sum(1 for _, state in rows if state == "failed"))
            return len(rows)

        return await self._db.run_write(work)

    async def prune_schedule_runs(self, *, older_than_s: float, limit: int) -> int:
        async def work(conn: Conn) -> int:
            ids = await _ids(conn, "SELECT r.id " + _SCHEDULE_RUNS, older_than_s, limit, order="r.id")
            await conn.execute("DELETE FROM schedule_runs WHERE id = ANY(%s)", (ids,))
            return await _add(conn, "schedule_runs", len(ids))

        return await self._db.run_write(work)

    async def stub_tool_outputs(self, *, older_than_s: float, min_chars: int, limit: int, day: str) -> int:
        async def work(conn: Conn) -> int:
            stubbed = await stub_tool_outputs(conn, older_than_s, min_chars, limit, day)
            return await _add(conn, "tool_outputs", stubbed)

        return await self._db.run_write(work)

    async def end_idle_conversations(self, *, idle_s: float, limit: int) -> list[str]:
        async def candidates(conn: Conn) -> list[tuple[str, str]]:
            cursor = await conn.execute(
                "SELECT c.id, c.session_key " + _IDLE_CONVERSATIONS + " LIMIT %(limit)s",
                {"age": idle_s, "limit": limit},
            )
            return [(str(r[0]), str(r[1])) for r in await cursor.fetchall()]

        ended: list[str] = []
        for conversation_id, session_key in await self._db.run_read(candidates):
            if await self._end_one(conversation_id, session_key, idle_s):
                ended.append(conversation_id)
        return ended

    async def _end_one(self, conversation_id: str, session_key: str, idle_s: float) -> bool:
        return await self._db.run_write(
            lambda conn: _end_if_idle(
                conn, conversation_id=conversation_id, session_key=session_key, idle_s=idle_s
            )
        )

    async def expired_conversations(self, *, idle_s: float, grace_s: float, limit: int) -> list[str]:
        async def read(conn: Conn) -> list[str]:
            cursor = await conn.execute(
                "SELECT c.id " + _EXPIRED_CONVERSATIONS + " ORDER BY c.ended_at LIMIT %(limit)s",
                {"idle": idle_s, "grace": grace_s, "limit": limit},
            )
            return [str(r[0]) for r in await cursor.fetchall()]

        return await self._db.run_read(read)

    async def count_deleted_conversations(self, count: int) -> None:
        await self._db.run_write(lambda conn: _add(conn, "conversations_deleted", count))

    async def removed_totals(self) -> RetentionCounts:
        async def read(conn: Conn) -> RetentionCounts:
            cursor = await conn.execute("SELECT kind, removed FROM retention_totals")
            return RetentionCounts.of_rows(await cursor.fetchall())

        return await self._db.run_read(read)

    async def claim_run(self, holder: str, *, lease_s: float, every_s: float) -> RunClaim:
        return await self._db.run_write(lambda conn: _claim(conn, holder, lease_s, every_s))

    async def finish_run(self, holder: str) -> None:
        await self._db.run_write(
            lambda conn: conn.execute(
                "UPDATE retention_run SET holder = NULL, expires_at = 0, finished_at = mg_now() "
                "WHERE id = 1 AND holder = %s",
                (holder,),
            )
        )

    async def space(self) -> SpaceReport:
        return SpaceReport("autovacuum")

    async def reclaim_space(self, *, min_free_fraction: float, max_bytes: int) -> SpaceReport:
        return SpaceReport("autovacuum")


async def _preview(conn: Conn, cutoffs: RetentionCutoffs) -> RetentionCounts:
    counts: dict[RetentionKind, int] = {}
    simple: tuple[tuple[RetentionKind, float | None, LiteralString], ...] = (
        ("outbox_given_up", cutoffs.outbox_given_up_s, _GIVEN_UP_OUTBOX),
        ("ledger", cutoffs.ledger_s, _LEDGER),
        ("turn_jobs_done", cutoffs.jobs_s, _FINISHED_JOBS + " AND state = 'done'"),
        ("turn_jobs_failed", cutoffs.jobs_s, _FINISHED_JOBS + " AND state = 'failed'"),
        ("schedule_runs", cutoffs.schedule_runs_s, _SCHEDULE_RUNS),
    )
    for kind, age, rule in simple:
        if age is not None:
            counts[kind] = await _count(conn, rule, {"age": age})
    if cutoffs.tool_outputs_s is not None:
        params = {"age": cutoffs.tool_outputs_s, "min_chars": cutoffs.tool_output_min_chars}
        counts["tool_outputs"] = await _count(conn, _LARGE_TOOL_OUTPUTS, params)
    idle = cutoffs.conversation_idle_s
    if idle is not None:
        counts["conversations_ended"] = await _count(conn, _IDLE_CONVERSATIONS, {"age": idle})
        expiry = {"idle": idle, "grace": cutoffs.conversation_grace_s}
        counts["conversations_deleted"] = await _count(conn, _EXPIRED_CONVERSATIONS, expiry)
    return RetentionCounts(counts)


async def _count(conn: Conn, rule: LiteralString, params: Mapping[str, object]) -> int:
    row = await (await conn.execute("SELECT count(*) " + rule, params)).fetchone()
    return int(row[0]) if row is not None else 0


async def _ids(
    conn: Conn, select: LiteralString, age: float, limit: int, *, order: LiteralString
) -> list[int]:
    cursor = await conn.execute(
        select + " ORDER BY " + order + " LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
        {"age": age, "limit": limit},
    )
    return [int(r[0]) for r in await cursor.fetchall()]


async def _add(conn: Conn, kind: RetentionKind, removed: int) -> int:
    if removed:
        await conn.execute(_ADD_TOTAL, (kind, removed))
    return removed


async def _end_if_idle(conn: Conn, *, conversation_id: str, session_key: str, idle_s: float) -> bool:
    """End one conversation if it is still idle: its key's lock, then its row (skipped when busy)."""
    locked = await (
        await conn.execute(
            "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (KEY_LOCK_SPACE, session_key)
        )
    ).fetchone()
    if locked is None or not locked[0]:
        return False  # someone is replacing this key's conversation right now: it is not idle
    cursor = await conn.execute(
        "SELECT c.id " + _IDLE_CONVERSATIONS + " AND c.id = %(id)s FOR UPDATE OF c SKIP LOCKED",
        {"age": idle_s, "id": conversation_id},
    )
    if await cursor.fetchone() is None:
        return False
    if not await end_conversation(conn, conversation_id, RETENTION_END_REASON):
        return False
    await _add(conn, "conversations_ended", 1)
    return True


async def _claim(conn: Conn, holder: str, lease_s: float, every_s: float) -> RunClaim:
    await conn.execute("INSERT INTO retention_run(id) VALUES (1) ON CONFLICT (id) DO NOTHING")
    cursor = await conn.execute(
        "SELECT holder, expires_at > mg_now(), finished_at, mg_now() - finished_at < %s "
        "FROM retention_run WHERE id = 1 FOR UPDATE",
        (every_s,),
    )
    row = await cursor.fetchone()
    assert row is not None
    finished = float(row[2]) if row[2] is not None else None
    if row[0] is not None and row[0] != holder and row[1]:
        return RunClaim(False, f"running in {row[0]}", finished)
    if row[0] != holder and row[3]:
        return RunClaim(False, "ran recently", finished)
    await conn.execute(
        "UPDATE retention_run SET holder = %s, expires_at = mg_now() + %s WHERE id = 1", (holder, lease_s)
    )
    return RunClaim(True, "", finished)
