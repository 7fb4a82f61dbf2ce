"""Claims on PostgreSQL: jobs claimed under per-conversation leases, renewed, reaped when expired, released.

Invariants: a conversation has at most one row in ``leases`` (its primary key), so at most one turn runs
per conversation across every host. A claim locks the conversations it takes ``FOR UPDATE SKIP LOCKED``
(the lock enqueue and stop take first), so many hosts claim at once without waiting for one another and
a conversation being enqueued to is simply left for the next claim; under that lock it re-checks, on
committed rows, that the conversation has no lease and takes its oldest queued job (later jobs of a shared
conversation keep their own turns). Leases are measured on the server's clock (``mg_now()``). A lease that
expired (its holder died) is reaped before any claim: the running job's row is locked first, skipping
one that its holder is finishing or releasing right now, then the lease; the job is re-queued, or failed
with a notice once it has used ``max_attempts``. Every lock is taken in the order ``admission`` states.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.storage.postgres.engine import Conn
from gateway.storage.budgets import BudgetGate, Verdict
from gateway.storage.queue import ClaimedJob, TipTail

from .admission import JOBS_CHANNEL, job_actor, release_pending
from .budgets import budget_decision, refuse_job
from .outbox import add_outbox, is_message_queued

WORKER_LOST_TEXT = "Sorry — I couldn't finish answering that. Please send it again."
_CANDIDATE_SLACK = 16  # conversations looked at beyond ``limit``, for those other hosts hold right now

# One indexed look, without locks, so an idle worker spends one round trip to find nothing.
_RUNNABLE = """SELECT EXISTS (SELECT 1 FROM leases WHERE expires_at < (SELECT mg_now()))
    OR EXISTS (SELECT 1 FROM turn_jobs j WHERE j.state = 'queued'
               AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.conversation_id = j.conversation_id))"""

# The conversations whose oldest queued job is oldest, without a lease, locked unless another host holds
# them (LIMIT counts only the rows locked here).
_CANDIDATES = """SELECT c.id, c.tip_segment_id FROM conversations c
    JOIN (SELECT conversation_id, min(id) AS first FROM turn_jobs j WHERE state = 'queued'
          AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.conversation_id = j.conversation_id)
          GROUP BY conversation_id ORDER BY first LIMIT %s) q ON q.conversation_id = c.id
    ORDER BY q.first LIMIT %s
    FOR UPDATE OF c SKIP LOCKED"""

# Under the conversation's lock: its oldest queued job runs under a new lease, if it still has none.
_TAKE_OLDEST = """WITH job AS (
        UPDATE turn_jobs SET state = 'running', claimed_by = %(holder)s, started_at = mg_now(),
            finished_at = NULL, attempts = attempts + 1, interrupt = 0
        WHERE id = (SELECT min(id) FROM turn_jobs WHERE conversation_id = %(c)s AND state = 'queued')
          AND NOT EXISTS (SELECT 1 FROM leases WHERE conversation_id = %(c)s)
        RETURNING id, person_id, is_admin, platform, chat_ref, reply_to, attempts, started_at),
    lease AS (
        INSERT INTO leases(conversation_id, holder, expires_at)
        SELECT %(c)s, %(holder)s, started_at + %(lease_s)s FROM job)
    SELECT id, person_id, is_admin, platform, chat_ref, reply_to, attempts FROM job"""

# The running jobs under expired leases, locked unless their holder is finishing or releasing them now;
# an expired lease that no running job explains is dropped on the way (it would block its conversation).
_LOCK_EXPIRED_JOBS = """WITH orphans AS (
        DELETE FROM leases l WHERE l.expires_at < (SELECT mg_now()) AND NOT EXISTS
            (SELECT 1 FROM turn_jobs j WHERE j.conversation_id = l.conversation_id AND j.state = 'running'))
    SELECT j.id, j.conversation_id FROM turn_jobs j
    JOIN leases l ON l.conversation_id = j.conversation_id
    WHERE l.expires_at < (SELECT mg_now()) AND j.state = 'running'
    FOR UPDATE OF j SKIP LOCKED"""

# The locked jobs' leases, re-checked on the committed row (a renewal that won keeps its lease).
_DROP_EXPIRED_LEASES = """DELETE FROM leases
    WHERE expires_at < (SELECT mg_now()) AND conversation_id = ANY(%s) RETURNING conversation_id"""

_REQUEUE_OR_FAIL = """UPDATE turn_jobs SET
        state = CASE WHEN attempts < %(max)s THEN 'queued' ELSE 'failed' END,
        claimed_by = CASE WHEN attempts < %(max)s THEN NULL ELSE claimed_by END,
        finished_at = CASE WHEN attempts < %(max)s THEN finished_at ELSE mg_now() END,
        error = CASE WHEN attempts < %(max)s THEN error ELSE 'worker lost' END
    WHERE id = ANY(%(ids)s) AND state = 'running'
    RETURNING id, conversation_id, state, platform, chat_ref"""


async def has_runnable(conn: Conn) -> bool:
    """Whether a claim could find something: a queued job of a conversation without a lease, or a lease
    that expired (a cheap read, so idle workers take no locks just to find nothing)."""
    row = await (await conn.execute(_RUNNABLE)).fetchone()
    return bool(row is not None and row[0])


async def claim_jobs(
    conn: Conn,
    holder: str,
    *,
    lease_s: float,
    limit: int,
    max_attempts: int,
    budget: BudgetGate | None = None,
) -> list[ClaimedJob]:
    """Claim up to ``limit`` runnable jobs, one per conversation, each under a fresh lease; with a
    ``budget``, a job its budget refuses is closed with its notice and one that must wait stays queued."""
    await _reap_expired(conn, max_attempts)
    if limit <= 0:
        return []
    locked = limit if budget is None else limit + _CANDIDATE_SLACK
    cursor = await conn.execute(_CANDIDATES, (limit + _CANDIDATE_SLACK, locked))
    claimed: list[ClaimedJob] = []
    now = await _server_now(conn) if budget is not None else 0.0
    for conversation_id, tip_segment in await cursor.fetchall():
        if len(claimed) >= limit:
            break
        if budget is not None and not await _admitted(
            conn, budget, holder, str(conversation_id), str(tip_segment), now
        ):
            continue
        job = await _take_oldest(conn, str(conversation_id), holder, lease_s)
        if job is not None:
            await release_pending(conn, job.conversation_id, job.id, str(tip_segment))
            tail = await tip_tail(conn, job.conversation_id)
            claimed.append(ClaimedJob(job.id, job.actor, job.chat_ref, job.reply_to, job.attempts, tail=tail))
    return claimed


async def _server_now(conn: Conn) -> float:
    row = await (await conn.execute("SELECT mg_now()")).fetchone()
    return float(row[0]) if row is not None else 0.0


async def _admitted(
    conn: Conn, budget: BudgetGate, holder: str, conversation_id: str, tip_segment: str, now: float
) -> bool:
    """Ask the budget about the conversation's oldest job (its row lock is held) if it will call the
    model: run it, leave it queued, or refuse it here."""
    cursor = await conn.execute(
        "SELECT id, person_id, is_admin, platform, chat_ref, reply_to FROM turn_jobs "
        "WHERE conversation_id = %s AND state = 'queued' ORDER BY id LIMIT 1",
        (conversation_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return True  # nothing left to take; _take_oldest finds the same
    job_id = int(row[0])
    if not await _calls_model(conn, conversation_id, job_id):
        return True
    actor = job_actor(conversation_id, row[1], row[2], row[3])
    decision = await budget_decision(conn, budget, actor, now)
    if decision.verdict is Verdict.ADMIT:
        return True
    if decision.refusal is not None:
        await release_pending(conn, conversation_id, job_id, tip_segment)
        await refuse_job(conn, job_id, holder, actor, (row[4], row[5]), decision.refusal)
    return False


async def _calls_model(conn: Conn, conversation_id: str, job_id: int) -> bool:
    """Whether running the job calls the model: not when what it answers is already an assistant message
    (a scheduled fixed message, or a reply a previous run stored), which the lane just queues."""
    cursor = await conn.execute(
        "SELECT role FROM pending_messages WHERE conversation_id = %s AND job_id = %s "
        "ORDER BY id DESC LIMIT 1",
        (conversation_id, job_id),
    )
    held = await cursor.fetchone()
    if held is not None:
        return str(held[0]) != "assistant"
    tail = await tip_tail(conn, conversation_id)
    return tail is None or tail.role != "assistant" or tail.has_tool_calls


async def _take_oldest(conn: Conn, conversation_id: str, holder: str, lease_s: float) -> ClaimedJob | None:
    params = {"holder": holder, "c": conversation_id, "lease_s": lease_s}
    row = await (await conn.execute(_TAKE_OLDEST, params)).fetchone()
    if row is None:
        return None  # a lease appeared, or the jobs went, between the look and the lock
    return ClaimedJob(
        id=int(row[0]),
        actor=job_actor(conversation_id, row[1], row[2], row[3]),
        chat_ref=row[4],
        reply_to=row[5],
        attempts=int(row[6]),
    )


async def _reap_expired(conn: Conn, max_attempts: int) -> None:
    """Jobs whose worker died go back to the queue; one that keeps killing workers fails with a notice."""
    locked = await (await conn.execute(_LOCK_EXPIRED_JOBS)).fetchall()
    if not locked:
        return
    conversations = sorted({str(r[1]) for r in locked})
    dropped = await (await conn.execute(_DROP_EXPIRED_LEASES, (conversations,))).fetchall()
    reaped = {str(r[0]) for r in dropped}
    ids = [int(r[0]) for r in locked if str(r[1]) in reaped]
    if not ids:
        return
    rows = await (await conn.execute(_REQUEUE_OR_FAIL, {"max": max_attempts, "ids": ids})).fetchall()
    if any(r[2] == "queued" for r in rows):
        await conn.execute("SELECT pg_notify(%s, '')", (JOBS_CHANNEL,))
    for job_id, conversation_id, state, platform, chat_ref in rows:
        if state == "failed" and platform is not None and chat_ref is not None:
            await add_outbox(
                conn,
                conversation_id=str(conversation_id),
                platform=str(platform),
                chat_ref=str(chat_ref),
                text=WORKER_LOST_TEXT,
                idempotency_key=f"turn:{job_id}",
                kind="error",
                job_id=int(job_id),
            )


async def tip_tail(conn: Conn, conversation_id: str) -> TipTail | None:
    """The tip segment's newest message, or None for an empty segment."""
    cursor = await conn.execute(
        "SELECT m.role, m.id, m.tool_calls IS NOT NULL, m.content FROM messages m "
        "WHERE m.conversation_id = %s AND m.segment_id = "
        "(SELECT tip_segment_id FROM conversations WHERE id = %s) ORDER BY m.id DESC LIMIT 1",
        (conversation_id, conversation_id),
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    role, message_id, has_tool_calls = str(row[0]), int(row[1]), bool(row[2])
    # Only a final assistant reply can be a stored-but-unqueued answer worth recovering.
    queued = role == "assistant" and not has_tool_calls and await is_message_queued(conn, message_id)
    return TipTail(role, message_id, has_tool_calls, row[3], queued=queued)


async def renew_leases(
    conn: Conn, holder: str, conversation_ids: Sequence[str], *, lease_s: float
) -> list[str]:
    """Extend this holder's leases; returns the conversations whose lease it no longer holds."""
    if not conversation_ids:
        return []
    cursor = await conn.execute(
        "UPDATE leases SET expires_at = mg_now() + %s WHERE holder = %s AND conversation_id = ANY(%s) "
        "RETURNING conversation_id",
        (lease_s, holder, list(conversation_ids)),
    )
    kept = {str(r[0]) for r in await cursor.fetchall()}
    return [c for c in conversation_ids if c not in kept]


async def release_jobs(conn: Conn, holder: str, job_ids: Sequence[int]) -> int:
    """Give jobs back to the queue (drain): they run again elsewhere, from their pending messages.

    The job rows are locked before their leases (the update feeds the delete); other hosts are told."""
    if not job_ids:
        return 0
    cursor = await conn.execute(
        "WITH job AS (UPDATE turn_jobs SET state = 'queued', claimed_by = NULL, started_at = NULL "
        "WHERE id = ANY(%s) AND state = 'running' AND claimed_by = %s RETURNING conversation_id), "
        "gone AS (DELETE FROM leases l USING job WHERE l.conversation_id = job.conversation_id "
        "AND l.holder = %s) SELECT count(*) FROM job",
        (list(job_ids), holder, holder),
    )
    row = await cursor.fetchone()
    released = int(row[0]) if row is not None else 0
    if released:
        await conn.execute("SELECT pg_notify(%s, '')", (JOBS_CHANNEL,))
    return released
