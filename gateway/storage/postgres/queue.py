"""The turn queue on PostgreSQL: ``PgTurnQueue`` implements ``TurnQueueRepository`` (and ``InboundLedger``),
and finishing a job (outbox row + job done, with any error or stop note's rows) is one transaction here.

Invariants: every port method that promises one transaction is one ``run_write``; a read of one statement
runs alone in autocommit (its own snapshot, no BEGIN/COMMIT round trips), so an idle worker's claim costs
one indexed read. Finishing locks the job's row first (``FOR UPDATE``: a reaper skips it meanwhile), checks
that the caller still holds the job, and writes the reply's outbox row in the transaction that marks the
job done, keyed by the job id, so a reply is queued exactly once; it tells other hosts when the freed
conversation has a job waiting (``pg_notify('mnemogate_jobs', '')``, delivered at commit). Stopping takes
the conversation's row lock first, like enqueue and claim. Enqueue lives in ``admission``, claims and
leases in ``claims``; every time is the server's (``mg_now()``), never a host's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agent_core.storage.postgres.conversations import tip_segment_id
from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.messages import PreparedMessage, insert_messages, prepare
from agent_core.storage.records import NewMessage
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
from .admission import JOBS_CHANNEL, enqueue_turn, lock_live, queue_state
from .claims import claim_jobs, has_runnable, release_jobs, renew_leases
from .outbox import add_outbox

__all__ = ["JOBS_CHANNEL", "PgTurnQueue", "finish_job", "stop_conversation"]

T = TypeVar("T")


class PgTurnQueue:
    """``TurnQueueRepository`` (and ``InboundLedger``) on an opened ``PgDatabase``."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def seen(self, platform: str, event_id: str) -> bool:
        return await self._read(lambda c: ledger.seen(c, platform, event_id))

    async def record_event(self, platform: str, event_id: str, *, kind: str) -> bool:
        return await self._db.run_write(lambda c: ledger.record_event(c, platform, event_id, kind=kind))

    async def enqueue(self, request: TurnRequest, rule: AdmissionRule) -> Enqueued:
        message = prepare(request.message)
        return await self._db.run_write(lambda c: enqueue_turn(c, request, message, rule))

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
        # A lock-free look first, so idle workers on many hosts take no locks just to find nothing; a
        # worker told of a job just queued goes straight to the claim (the look would find it anyway).
        if not expect_work and not await self._read(has_runnable):
            return []
        return await self._db.run_write(
            lambda c: claim_jobs(
                c, holder, lease_s=lease_s, limit=limit, max_attempts=max_attempts, budget=budget
            )
        )

    async def renew(self, holder: str, conversation_ids: Sequence[str], *, lease_s: float) -> list[str]:
        ids = list(conversation_ids)
        return await self._db.run_write(lambda c: renew_leases(c, holder, ids, lease_s=lease_s))

    async def interrupt(self, job_id: int) -> Interrupt:
        return await self._read(lambda c: interrupt_flag(c, job_id))

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
        closing = _Closing(
            state=state,
            error=error,
            reply=reply,
            appended=prepare(reply.append) if reply is not None and reply.append is not None else None,
            note=prepare(note) if note is not None else None,
        )
        return await self._db.run_write(lambda c: finish_job(c, job_id, holder, closing))

    async def release(self, holder: str, job_ids: Sequence[int]) -> int:
        ids = list(job_ids)
        return await self._db.run_write(lambda c: release_jobs(c, holder, ids))

    async def stop(self, conversation_id: str) -> QueueState:
        return await self._db.run_write(lambda c: stop_conversation(c, conversation_id))

    async def stop_live(self, session_key: str) -> QueueState | None:
        async def stop(conn: Conn) -> QueueState | None:
            live = await lock_live(conn, session_key)
            return None if live is None else await _stop_locked(conn, live.id)

        return await self._db.run_write(stop)

    async def queue_state(self, conversation_id: str) -> QueueState:
        return await self._read(lambda c: queue_state(c, conversation_id))

    async def running_target(self, conversation_id: str) -> ReplyTarget | None:
        return await self._read(lambda c: running_target(c, conversation_id))

    async def jobs(self, conversation_id: str | None = None) -> list[JobRecord]:
        return await self._read(lambda c: list_jobs(c, conversation_id))

    async def leases(self) -> list[LeaseRecord]:
        return await self._read(list_leases)

    async def _read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` (ONE statement) in autocommit: its own snapshot, one round trip."""
        return await self._db.run_autocommit_read(work)


@dataclass(frozen=True, slots=True)
class _Closing:
    """How a job closes, with its rows already through the redaction boundary."""

    state: str
    error: str | None
    reply: JobReply | None
    appended: PreparedMessage | None
    note: PreparedMessage | None


async def finish_job(conn: Conn, job_id: int, holder: str, closing: _Closing) -> bool:
    """Mark the job done/failed, drop its lease and queue its reply, atomically; False if no longer ours."""
    cursor = await conn.execute(
        "SELECT conversation_id, state, claimed_by, platform, chat_ref, reply_to FROM turn_jobs "
        "WHERE id = %s FOR UPDATE",
        (job_id,),
    )
    job = await cursor.fetchone()
    if job is None or job[1] != "running" or job[2] != holder:
        return False
    conversation_id = str(job[0])
    # The job closes, its lease goes, and if the conversation has a job waiting other hosts are told.
    await conn.execute(
        "WITH closed AS (UPDATE turn_jobs SET state = %s, finished_at = mg_now(), error = %s WHERE id = %s), "
        "freed AS (DELETE FROM leases WHERE conversation_id = %s AND holder = %s) "
        "SELECT pg_notify(%s, '') FROM turn_jobs WHERE conversation_id = %s AND state = 'queued' LIMIT 1",
        (closing.state, closing.error, job_id, conversation_id, holder, JOBS_CHANNEL, conversation_id),
    )
    if closing.note is not None:
        await _append_to_tip(conn, conversation_id, closing.note)
    reply = closing.reply
    if reply is not None and job[3] is not None and job[4] is not None:
        message_id = reply.message_id
        if closing.appended is not None:
            message_id = await _append_to_tip(conn, conversation_id, closing.appended)
        await add_outbox(
            conn,
            conversation_id=conversation_id,
            platform=str(job[3]),
            chat_ref=str(job[4]),
            text=reply.text,
            idempotency_key=f"turn:{job_id}",
            kind=reply.kind,
            job_id=job_id,
            message_id=message_id,
            reply_to=job[5],
        )
    return True


async def _append_to_tip(conn: Conn, conversation_id: str, message: PreparedMessage) -> int:
    (message_id,) = await insert_messages(conn, await tip_segment_id(conn, conversation_id), [message])
    return message_id


async def stop_conversation(conn: Conn, conversation_id: str) -> QueueState:
    """Cancel queued jobs and ask the running turn to stop, under the conversation's row lock."""
    await conn.execute("SELECT 1 FROM conversations WHERE id = %s FOR UPDATE", (conversation_id,))
    return await _stop_locked(conn, conversation_id)


async def _stop_locked(conn: Conn, conversation_id: str) -> QueueState:
    """What there was to stop: the queued jobs fail as stopped, the running one is flagged, and the held
    messages are dropped (what the user asked to drop never reaches the transcript)."""
    cursor = await conn.execute(
        "WITH cancelled AS (UPDATE turn_jobs SET state = 'failed', error = 'stopped', finished_at = mg_now() "
        "WHERE conversation_id = %s AND state = 'queued' RETURNING id), "
        "flagged AS (UPDATE turn_jobs SET interrupt = %s WHERE conversation_id = %s AND state = 'running' "
        "RETURNING id), "
        "dropped AS (DELETE FROM pending_messages WHERE conversation_id = %s) "
        "SELECT (SELECT count(*) FROM flagged), (SELECT count(*) FROM cancelled)",
        (conversation_id, int(Interrupt.STOP), conversation_id, conversation_id),
    )
    row = await cursor.fetchone()
    assert row is not None  # a SELECT without FROM yields one row
    return QueueState(running=int(row[0]), queued=int(row[1]))


async def interrupt_flag(conn: Conn, job_id: int) -> Interrupt:
    row = await (await conn.execute("SELECT interrupt FROM turn_jobs WHERE id = %s", (job_id,))).fetchone()
    return Interrupt(int(row[0])) if row is not None else Interrupt.NONE


async def running_target(conn: Conn, conversation_id: str) -> ReplyTarget | None:
    # The running job of a conversation is unique (the conversation lease), and carries where to reply.
    cursor = await conn.execute(
        "SELECT chat_ref, reply_to FROM turn_jobs WHERE conversation_id = %s AND state = 'running' "
        "ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    )
    row = await cursor.fetchone()
    if row is None or not row[0]:
        return None
    return ReplyTarget(str(row[0]), row[1])


async def list_jobs(conn: Conn, conversation_id: str | None) -> list[JobRecord]:
    columns = "id, conversation_id, state, attempts, claimed_by, error, created_at, started_at, finished_at"
    if conversation_id is None:
        cursor = await conn.execute(f"SELECT {columns} FROM turn_jobs ORDER BY id")
    else:
        cursor = await conn.execute(
            f"SELECT {columns} FROM turn_jobs WHERE conversation_id = %s ORDER BY id", (conversation_id,)
        )
    return [
        JobRecord(int(r[0]), str(r[1]), str(r[2]), int(r[3]), r[4], r[5], float(r[6]), r[7], r[8])
        for r in await cursor.fetchall()
    ]


async def list_leases(conn: Conn) -> list[LeaseRecord]:
    cursor = await conn.execute(
        "SELECT conversation_id, holder, expires_at FROM leases ORDER BY conversation_id"
    )
    return [LeaseRecord(str(r[0]), str(r[1]), float(r[2])) for r in await cursor.fetchall()]
