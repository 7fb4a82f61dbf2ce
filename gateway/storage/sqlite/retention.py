"""Retention on SQLite: ``SqliteRetention``, the retention port over state.db (rules in retention_rules.py).

Invariants: each pruning call is one ``run_write`` (a short ``BEGIN IMMEDIATE`` transaction) deleting at most
``limit`` rows and adding them to ``retention_totals`` in the same transaction; cut-off times are taken
inside that transaction; tool outputs are stubbed by ``SqliteToolOutputStubs`` (state.db and the search
sidecar kept in step); space is handed back only by ``PRAGMA incremental_vacuum`` in steps of at most
``max_bytes`` (never a full ``VACUUM``, which would hold the write lock for the whole file) and only on a
database created with ``auto_vacuum=INCREMENTAL`` (every state.db this release creates).
"""

from __future__ import annotations

import json
import sqlite3
import time

from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.conversations import end_conversation
from agent_core.storage.sqlite.tool_output_stubs import SqliteToolOutputStubs
from gateway.storage.retention import (
    RETENTION_END_REASON,
    RetentionCounts,
    RetentionCutoffs,
    RetentionKind,
    RunClaim,
    SpaceReport,
)

from . import retention_rules as rules

_IDS_PER_STATEMENT = 500
_AUTO_VACUUM_INCREMENTAL = 2
_MAX_VACUUM_STEPS = 10_000


class SqliteRetention:
    """The retention port over one opened ``StateStore``."""

    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._stubs = SqliteToolOutputStubs(state)

    async def preview(self, cutoffs: RetentionCutoffs) -> RetentionCounts:
        return await self._state.run_read(lambda c: _preview(c, cutoffs, time.time()))

    async def prune_given_up_outbox(self, *, older_than_s: float, limit: int) -> int:
        return await self._state.run_write(lambda c: _prune_outbox(c, time.time() - older_than_s, limit))

    async def prune_ledger(self, *, older_than_s: float, limit: int) -> int:
        return await self._state.run_write(lambda c: _prune_ledger(c, time.time() - older_than_s, limit))

    async def prune_jobs(self, *, older_than_s: float, limit: int) -> int:
        return await self._state.run_write(lambda c: _prune_jobs(c, time.time() - older_than_s, limit))

    async def prune_schedule_runs(self, *, older_than_s: float, limit: int) -> int:
        return await self._state.run_write(lambda c: _prune_runs(c, time.time() - older_than_s, limit))

    async def stub_tool_outputs(self, *, older_than_s: float, min_chars: int, limit: int, day: str) -> int:
        stubbed = await self._stubs.stub(older_than_s=older_than_s, min_chars=min_chars, limit=limit, day=day)
        if stubbed:
            await self._state.run_write(lambda c: rules.add_total(c, "tool_outputs", stubbed))
        return stubbed

    async def end_idle_conversations(self, *, idle_s: float, limit: int) -> list[str]:
        # Found on a reader (a scan of the live conversations), re-checked and ended under the write lock.
        sql = f"SELECT c.id {rules.IDLE_CONVERSATIONS} LIMIT :limit"
        found = await self._state.run_read(
            lambda c: [str(r[0]) for r in c.execute(sql, {"cut": time.time() - idle_s, "limit": limit})]
        )
        if not found:
            return []
        return await self._state.run_write(lambda c: _end_idle(c, found, time.time(), idle_s))

    async def expired_conversations(self, *, idle_s: float, grace_s: float, limit: int) -> list[str]:
        params = _expiry_params(time.time(), idle_s, grace_s)
        sql = f"SELECT c.id {rules.EXPIRED_CONVERSATIONS} ORDER BY c.ended_at LIMIT :limit"
        return await self._state.run_read(
            lambda c: [str(r[0]) for r in c.execute(sql, {**params, "limit": limit})]
        )

    async def count_deleted_conversations(self, count: int) -> None:
        await self._state.run_write(lambda c: rules.add_total(c, "conversations_deleted", count))

    async def removed_totals(self) -> RetentionCounts:
        return await self._state.run_read(_totals)

    async def claim_run(self, holder: str, *, lease_s: float, every_s: float) -> RunClaim:
        return await self._state.run_write(lambda c: _claim(c, holder, time.time(), lease_s, every_s))

    async def finish_run(self, holder: str) -> None:
        await self._state.run_write(lambda c: _finish(c, holder, time.time()))

    async def space(self) -> SpaceReport:
        return await self._state.run_read(_space)

    async def reclaim_space(self, *, min_free_fraction: float, max_bytes: int) -> SpaceReport:
        before = await self._state.run_read(_space)
        if before.mode != "incremental" or before.free_fraction < min_free_fraction:
            return before
        reclaimed = 0
        for _ in range(_MAX_VACUUM_STEPS):
            freed, left = await self._state.run_write(lambda c: _vacuum_step(c, max_bytes))
            reclaimed += freed
            if freed == 0 or left == 0:
                break
        after = await self._state.run_read(_space)
        return SpaceReport(after.mode, after.file_bytes, after.free_bytes, reclaimed)


def _preview(conn: sqlite3.Connection, cutoffs: RetentionCutoffs, now: float) -> RetentionCounts:
    counts: dict[RetentionKind, int] = {}
    simple: tuple[tuple[RetentionKind, float | None, str], ...] = (
        ("outbox_given_up", cutoffs.outbox_given_up_s, rules.GIVEN_UP_OUTBOX),
        ("ledger", cutoffs.ledger_s, rules.LEDGER),
        ("turn_jobs_done", cutoffs.jobs_s, rules.FINISHED_JOBS + " AND state = 'done'"),
        ("turn_jobs_failed", cutoffs.jobs_s, rules.FINISHED_JOBS + " AND state = 'failed'"),
        ("schedule_runs", cutoffs.schedule_runs_s, rules.SCHEDULE_RUNS),
    )
    for kind, age, rule in simple:
        if age is not None:
            counts[kind] = rules.count(conn, rule, {"cut": now - age})
    if cutoffs.tool_outputs_s is not None:
        params = {"cut": now - cutoffs.tool_outputs_s, "min_chars": cutoffs.tool_output_min_chars}
        counts["tool_outputs"] = rules.count(conn, rules.LARGE_TOOL_OUTPUTS, params)
    idle = cutoffs.conversation_idle_s
    if idle is not None:
        counts["conversations_ended"] = rules.count(conn, rules.IDLE_CONVERSATIONS, {"cut": now - idle})
        expiry = _expiry_params(now, idle, cutoffs.conversation_grace_s)
        counts["conversations_deleted"] = rules.count(conn, rules.EXPIRED_CONVERSATIONS, expiry)
    return RetentionCounts(counts)


def _expiry_params(now: float, idle_s: float, grace_s: float) -> dict[str, object]:
    return {"grace_cut": now - grace_s, "full_cut": now - idle_s - grace_s}


def _delete_ids(conn: sqlite3.Connection, table: str, ids: list[int]) -> None:
    for start in range(0, len(ids), _IDS_PER_STATEMENT):
        part = ids[start : start + _IDS_PER_STATEMENT]
        marks = ",".join("?" * len(part))
        if table == "outbox":
            conn.execute(f"DELETE FROM outbox_chunks WHERE outbox_id IN ({marks})", part)
        conn.execute(f"DELETE FROM {table} WHERE id IN ({marks})", part)


def _prune_outbox(conn: sqlite3.Connection, cut: float, limit: int) -> int:
    sql = f"SELECT id {rules.GIVEN_UP_OUTBOX} ORDER BY id LIMIT :limit"
    ids = [int(r[0]) for r in conn.execute(sql, {"cut": cut, "limit": limit})]
    _delete_ids(conn, "outbox", ids)
    rules.add_total(conn, "outbox_given_up", len(ids))
    return len(ids)


def _prune_ledger(conn: sqlite3.Connection, cut: float, limit: int) -> int:
    cursor = conn.execute(
        "DELETE FROM inbound_events WHERE (platform, event_id) IN "
        f"(SELECT platform, event_id {rules.LEDGER} ORDER BY received_at LIMIT :limit)",
        {"cut": cut, "limit": limit},
    )
    rules.add_total(conn, "ledger", cursor.rowcount)
    return cursor.rowcount


def _prune_jobs(conn: sqlite3.Connection, cut: float, limit: int) -> int:
    sql = f"SELECT id, state {rules.FINISHED_JOBS} ORDER BY finished_at LIMIT :limit"
    rows = [(int(r[0]), str(r[1])) for r in conn.execute(sql, {"cut": cut, "limit": limit})]
    _delete_ids(conn, "turn_jobs", [job_id for job_id, _ in rows])
    rules.add_total(conn, "turn_jobs_done", sum(1 for _, state in rows if state == "done"))
    rules.add_total(conn, "turn_jobs_failed", sum(1 for _, state in rows if state == "failed"))
    return len(rows)


def _prune_runs(conn: sqlite3.Connection, cut: float, limit: int) -> int:
    sql = f"SELECT r.id {rules.SCHEDULE_RUNS} ORDER BY r.id LIMIT :limit"
    ids = [int(r[0]) for r in conn.execute(sql, {"cut": cut, "limit": limit})]
    _delete_ids(conn, "schedule_runs", ids)
    rules.add_total(conn, "schedule_runs", len(ids))
    return len(ids)


def _end_idle(conn: sqlite3.Connection, found: list[str], now: float, idle_s: float) -> list[str]:
    sql = f"SELECT c.id {rules.IDLE_CONVERSATIONS} AND c.id IN (SELECT value FROM json_each(:ids))"
    ids = [str(r[0]) for r in conn.execute(sql, {"cut": now - idle_s, "ids": json.dumps(found)})]
    ended = [cid for cid in ids if end_conversation(conn, cid, RETENTION_END_REASON, now)]
    rules.add_total(conn, "conversations_ended", len(ended))
    return ended


def _totals(conn: sqlite3.Connection) -> RetentionCounts:
    rows = conn.execute("SELECT kind, removed FROM retention_totals ORDER BY kind")
    return RetentionCounts.of_rows(rows)


def _claim(conn: sqlite3.Connection, holder: str, now: float, lease_s: float, every_s: float) -> RunClaim:
    row = conn.execute("SELECT holder, expires_at, finished_at FROM retention_run WHERE id = 1").fetchone()
    finished = float(row[2]) if row is not None and row[2] is not None else None
    if row is not None and row[0] is not None and row[0] != holder and float(row[1]) > now:
        return RunClaim(False, f"running in {row[0]}", finished)
    renewing = row is not None and row[0] == holder
    if not renewing and finished is not None and now - finished < every_s:
        return RunClaim(False, "ran recently", finished)
    conn.execute(
        "INSERT INTO retention_run(id, holder, expires_at, finished_at) VALUES (1, ?, ?, NULL) "
        "ON CONFLICT(id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
        (holder, now + lease_s),
    )
    return RunClaim(True, "", finished)


def _finish(conn: sqlite3.Connection, holder: str, now: float) -> None:
    conn.execute(
        "UPDATE retention_run SET holder = NULL, expires_at = 0, finished_at = ? WHERE id = 1 AND holder = ?",
        (now, holder),
    )


def _space(conn: sqlite3.Connection) -> SpaceReport:
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    incremental = int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) == _AUTO_VACUUM_INCREMENTAL
    return SpaceReport("incremental" if incremental else "none", pages * page_size, free * page_size)


def _vacuum_step(conn: sqlite3.Connection, max_bytes: int) -> tuple[int, int]:
    """Hand back up to ``max_bytes`` of free pages inside the caller's transaction; the bytes freed and the
    free pages left.

    Each execution of ``incremental_vacuum`` moves one page here (the sqlite3 module steps the pragma once),
    so the step is a bounded loop over single pages."""
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    pages = min(free, max(1, max_bytes // page_size))
    for _ in range(pages):
        conn.execute("PRAGMA incremental_vacuum(1)").fetchall()
    after = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return (free - after) * page_size, after
