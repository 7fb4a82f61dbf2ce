"""The turn queue on SQLite: ``SqliteTurnQueue`` implements ``TurnQueueRepository`` over state.db, and
finishing a job (outbox row + job done, with any error or stop note's rows) is one transaction here.

Invariants: every port method that promises one transaction is one ``run_write``; finishing checks that
the caller still holds the job, and the reply's outbox row is written in the transaction that marks the
job done, keyed by the job id, so a reply is queued exactly once. Enqueue lives in ``admission``, claims
and leases in ``claims``; the clock of leases and timestamps is this class's (``clock``), never a caller's.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_core.storage.records import NewMessage
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.conversations import live_conversation, tip_segment_id
from agent_core.storage.sqlite.messages import PreparedMessage, insert_messages, prepare
from gateway.storage.budgets import BudgetGate
from gateway.storage.queue import (
    AdmissionRule,
    ClaimedJob,
    Enqueued,
    Interrupt,
    JobRecord,
    JobReply,
    LeaseRecord,
    QueueState,
    ReplyTarget,
    TurnRequest,
)

from . import ledger
from .admission import enqueue_turn, queue_state
from .claims import claim_jobs, has_runnable, release_jobs, renew_leases
from .outbox import add_outbox

__all__ = ["SqliteTurnQueue", "finish_job", "queue_state", "stop_conversation"]


class SqliteTurnQueue:
    """``TurnQueueRepository`` (and ``InboundLedger``) on an opened ``StateStore``."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def seen(self, platform: str, event_id: str) -> bool:
        return await self._state.run_read(lambda c: ledger.seen(c, platform, event_id))

    async def record_event(self, platform: str, event_id: str, *, kind: str) -> bool:
        now = self._clock()
        return await self._state.run_write(
            lambda c: ledger.record_event(c, platform, event_id, kind=kind, now=now)
        )

    async def enqueue(self, request: TurnRequest, rule: AdmissionRule) -> Enqueued:
        now = self._clock()
        message = prepare(request.message, now)
        return await self._state.run_write(lambda c: enqueue_turn(c, request, message, rule, now))

    async def claim(
        self,
        holder: str,
        *,
        lease_s: float,
        limit: int,
        max_attempts: int,
        expect_work: bool = False,
        budget: BudgetGate | None = None,
    ) -> list[ClaimedJob]:
        if limit <= 0:
            return []
        # A reader first, so idle workers polling many processes never queue for the write lock; a
        # worker told of a job just queued goes straight to the write (the look would find it anyway).
        if not expect_work and not await self._state.run_read(lambda c: has_runnable(c, self._clock())):
            return []
        return await self._state.run_write(
            lambda c: claim_jobs(
                c,
                holder,
                now=self._clock(),
                lease_s=lease_s,
                limit=limit,
                max_attempts=max_attempts,
                budget=budget,
            )
        )

    async def renew(self, holder: str, conversation_ids: Sequence[str], *, lease_s: float) -> list[str]:
        ids = list(conversation_ids)
        return await self._state.run_write(
            lambda c: renew_leases(c, holder, ids, now=self._clock(), lease_s=lease_s)
        )

    async def interrupt(self, job_id: int) -> Interrupt:
        return await self._state.run_read(lambda c: interrupt_flag(c, job_id))

    async def finish(
        self,
        job_id: int,
        holder: str,
        *,
        state: str,
        error: str | None = None,
        reply: JobReply | None = None,
        note: NewMessage | None = None,
    ) -> bool:
        now = self._clock()
        closing = _Closing(
            state=state,
            error=error,
            reply=reply,
            appended=prepare(reply.append, now) if reply is not None and reply.append is not None else None,
            note=prepare(note, now) if note is not None else None,
        )
        # finished_at is stamped under the write lock, so stamps follow commit order (the metrics scrape's
        # watermark on finished_at never skips a turn that committed late).
        return await self._state.run_write(
            lambda c: finish_job(c, job_id, holder, closing, now=self._clock())
        )

    async def release(self, holder: str, job_ids: Sequence[int]) -> int:
        ids = list(job_ids)
        return await self._state.run_write(lambda c: release_jobs(c, holder, ids))

    async def stop(self, conversation_id: str) -> QueueState:
        # Stamped under the write lock, like finish: finished_at follows commit order.
        return await self._state.run_write(lambda c: stop_conversation(c, conversation_id, self._clock()))

    async def stop_live(self, session_key: str) -> QueueState | None:
        def stop(conn: sqlite3.Connection) -> QueueState | None:
            live = live_conversation(conn, session_key)
            return None if live is None else stop_conversation(conn, live.id, self._clock())

        return await self._state.run_write(stop)

    async def queue_state(self, conversation_id: str) -> QueueState:
        return await self._state.run_read(lambda c: queue_state(c, conversation_id))

    async def running_target(self, conversation_id: str) -> ReplyTarget | None:
        return await self._state.run_read(lambda c: running_target(c, conversation_id))

    async def jobs(self, conversation_id: str | None = None) -> list[JobRecord]:
        return await self._state.run_read(lambda c: list_jobs(c, conversation_id))

    async def leases(self) -> list[LeaseRecord]:
        return await self._state.run_read(list_leases)


@dataclass(frozen=True, slots=True)
class _Closing:
    """How a job closes, with its rows already through the redaction boundary."""

    state: str
    error: str | None
    reply: JobReply | None
    appended: PreparedMessage | None
    note: PreparedMessage | None


def finish_job(conn: sqlite3.Connection, job_id: int, holder: str, closing: _Closing, *, now: float) -> bool:
    """Mark the job done/failed, drop its lease and queue its reply, atomically; False if no longer ours."""
    job = conn.execute(
        "SELECT conversation_id, state, claimed_by, platform, chat_ref, reply_to FROM turn_jobs WHERE id = ?",
        (job_id,),
    ).fetchone()
    if job is None or job[1] != "running" or job[2] != holder:
        return False
    conversation_id = str(job[0])
    conn.execute(
        "UPDATE turn_jobs SET state = ?, finished_at = ?, error = ? WHERE id = ?",
        (closing.state, now, closing.error, job_id),
    )
    conn.execute("DELETE FROM leases WHERE conversation_id = ? AND holder = ?", (conversation_id, holder))
    if closing.note is not None:
        _append_to_tip(conn, conversation_id, closing.note)
    reply = closing.reply
    if reply is not None and job[3] is not None and job[4] is not None:
        message_id = reply.message_id
        if closing.appended is not None:
            message_id = _append_to_tip(conn, conversation_id, closing.appended)
        add_outbox(
            conn,
            conversation_id=conversation_id,
            platform=str(job[3]),
            chat_ref=str(job[4]),
            text=reply.text,
            idempotency_key=f"turn:{job_id}",
            kind=reply.kind,
            now=now,
            job_id=job_id,
            message_id=message_id,
            reply_to=job[5],
        )
    return True


def _append_to_tip(conn: sqlite3.Connection, conversation_id: str, message: PreparedMessage) -> int:
    (message_id,) = insert_messages(conn, tip_segment_id(conn, conversation_id), conversation_id, [message])
    return message_id


def stop_conversation(conn: sqlite3.Connection, conversation_id: str, now: float) -> QueueState:
    """Cancel queued jobs and ask the running turn to stop; returns what there was to stop."""
    state = queue_state(conn, conversation_id)
    conn.execute(
        "UPDATE turn_jobs SET state = 'failed', error = 'stopped', finished_at = ? "
        "WHERE conversation_id = ? AND state = 'queued'",
        (now, conversation_id),
    )
    conn.execute(
        "UPDATE turn_jobs SET interrupt = ? WHERE conversation_id = ? AND state = 'running'",
        (int(Interrupt.STOP), conversation_id),
    )
    # What the user asked to drop never reaches the transcript.
    conn.execute("DELETE FROM pending_messages WHERE conversation_id = ?", (conversation_id,))
    return state


def interrupt_flag(conn: sqlite3.Connection, job_id: int) -> Interrupt:
    row = conn.execute("SELECT interrupt FROM turn_jobs WHERE id = ?", (job_id,)).fetchone()
    return Interrupt(int(row[0])) if row is not None else Interrupt.NONE


def running_target(conn: sqlite3.Connection, conversation_id: str) -> ReplyTarget | None:
    # The running job of a conversation is unique (the conversation lease), and carries where to reply.
    row = conn.execute(
        "SELECT chat_ref, reply_to FROM turn_jobs WHERE conversation_id = ? AND state = 'running' "
        "ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    ).fetchone()
    if row is None or not row[0]:
        return None
    return ReplyTarget(str(row[0]), row[1])


def list_jobs(conn: sqlite3.Connection, conversation_id: str | None) -> list[JobRecord]:
    sql = (
        "SELECT id, conversation_id, state, attempts, claimed_by, error, created_at, started_at, finished_at "
        "FROM turn_jobs"
    )
    if conversation_id is None:
        rows = conn.execute(sql + " ORDER BY id").fetchall()
    else:
        rows = conn.execute(sql + " WHERE conversation_id = ? ORDER BY id", (conversation_id,)).fetchall()
    return [
        JobRecord(int(r[0]), str(r[1]), str(r[2]), int(r[3]), r[4], r[5], float(r[6]), r[7], r[8])
        for r in rows
    ]


def list_leases(conn: sqlite3.Connection) -> list[LeaseRecord]:
    rows = conn.execute("SELECT conversation_id, holder, expires_at FROM leases ORDER BY conversation_id")
    return [LeaseRecord(str(r[0]), str(r[1]), float(r[2])) for r in rows]
