"""Claims on SQLite: jobs claimed under per-conversation leases, renewed, reaped when expired, released.

Invariants: a conversation has at most one row in ``leases``, so at most one turn runs per conversation
across every process; a claim takes the oldest queued job of each conversation without a lease (later
jobs of a shared conversation keep their own turns); a lease that expired (its holder died) is reaped
before any claim, its job re-queued, or failed with a notice once it has used ``max_attempts``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from gateway.storage.budgets import BudgetGate, Verdict
from gateway.storage.queue import ClaimedJob, TipTail

from .admission import job_actor, release_pending
from .budgets import budget_decision, refuse_job
from .outbox import add_outbox, is_message_queued

WORKER_LOST_TEXT = "Sorry — I couldn't finish answering that. Please send it again."
_CANDIDATE_SLACK = 16  # conversations looked at beyond ``limit`` when a budget may leave some queued


def has_runnable(conn: sqlite3.Connection, now: float) -> bool:
    """A cheap read so idle workers do not take the write lock just to find nothing to claim."""
    if conn.execute("SELECT 1 FROM leases WHERE expires_at < ? LIMIT 1", (now,)).fetchone():
        return True
    row = conn.execute(
        "SELECT 1 FROM turn_jobs j WHERE j.state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM leases l WHERE l.conversation_id = j.conversation_id) LIMIT 1"
    ).fetchone()
    return row is not None


def claim_jobs(
    conn: sqlite3.Connection,
    holder: str,
    *,
    now: float,
    lease_s: float,
    limit: int,
    max_attempts: int,
    budget: BudgetGate | None = None,
) -> list[ClaimedJob]:
    """Claim up to ``limit`` runnable jobs, one per conversation, each under a fresh lease; with a
    ``budget``, a job its budget refuses is closed with its notice and one that must wait stays queued."""
    _reap_expired(conn, now, max_attempts)
    if limit <= 0:
        return []
    candidates = conn.execute(
        "SELECT conversation_id, min(id) FROM turn_jobs j WHERE state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM leases l WHERE l.conversation_id = j.conversation_id) "
        "GROUP BY conversation_id ORDER BY min(id) LIMIT ?",
        (limit if budget is None else limit + _CANDIDATE_SLACK,),
    ).fetchall()
    claimed: list[ClaimedJob] = []
    for conversation_id, job_id in candidates:
        if len(claimed) >= limit:
            break
        if budget is not None and not _admitted(conn, budget, holder, str(conversation_id), int(job_id), now):
            continue
        conn.execute(
            "UPDATE turn_jobs SET state = 'running', claimed_by = ?, started_at = ?, finished_at = NULL, "
            "attempts = attempts + 1, interrupt = 0 WHERE id = ?",
            (holder, now, job_id),
        )
        conn.execute(
            "INSERT OR REPLACE INTO leases(conversation_id, holder, expires_at) VALUES (?, ?, ?)",
            (conversation_id, holder, now + lease_s),
        )
        release_pending(conn, conversation_id, int(job_id))
        claimed.append(_claimed(conn, int(job_id)))
    return claimed


def _admitted(
    conn: sqlite3.Connection, budget: BudgetGate, holder: str, conversation_id: str, job_id: int, now: float
) -> bool:
    """Ask the budget about a job that will call the model: run it, leave it queued, or refuse it here."""
    if not _calls_model(conn, conversation_id, job_id):
        return True
    row = conn.execute(
        "SELECT person_id, is_admin, platform, chat_ref, reply_to FROM turn_jobs WHERE id = ?", (job_id,)
    ).fetchone()
    actor = job_actor(conversation_id, row[0], row[1], row[2])
    decision = budget_decision(conn, budget, actor, now)
    if decision.verdict is Verdict.ADMIT:
        return True
    if decision.refusal is not None:
        release_pending(conn, conversation_id, job_id)
        refuse_job(conn, job_id, holder, actor, (row[3], row[4]), decision.refusal, now)
    return False


def _calls_model(conn: sqlite3.Connection, conversation_id: str, job_id: int) -> bool:
    """Whether running the job calls the model: not when what it answers is already an assistant message
    (a scheduled fixed message, or a reply a previous run stored), which the lane just queues."""
    held = conn.execute(
        "SELECT role FROM pending_messages WHERE conversation_id = ? AND job_id = ? ORDER BY id DESC LIMIT 1",
        (conversation_id, job_id),
    ).fetchone()
    if held is not None:
        return str(held[0]) != "assistant"
    tail = tip_tail(conn, conversation_id)
    return tail is None or tail.role != "assistant" or tail.has_tool_calls


def _reap_expired(conn: sqlite3.Connection, now: float, max_attempts: int) -> None:
    """Jobs whose worker died go back to the queue; one that keeps killing workers fails with a notice."""
    expired = [
        str(r[0]) for r in conn.execute("SELECT conversation_id FROM leases WHERE expires_at < ?", (now,))
    ]
    for conversation_id in expired:
        conn.execute("DELETE FROM leases WHERE conversation_id = ?", (conversation_id,))
        for job_id, attempts, platform, chat_ref in conn.execute(
            "SELECT id, attempts, platform, chat_ref FROM turn_jobs WHERE conversation_id = ? "
            "AND state = 'running'",
            (conversation_id,),
        ).fetchall():
            if attempts < max_attempts:
                conn.execute(
                    "UPDATE turn_jobs SET state = 'queued', claimed_by = NULL WHERE id = ?", (job_id,)
                )
                continue
            conn.execute(
                "UPDATE turn_jobs SET state = 'failed', finished_at = ?, error = 'worker lost' WHERE id = ?",
                (now, job_id),
            )
            if platform is not None and chat_ref is not None:
                add_outbox(
                    conn,
                    conversation_id=conversation_id,
                    platform=str(platform),
                    chat_ref=str(chat_ref),
                    text=WORKER_LOST_TEXT,
                    idempotency_key=f"turn:{job_id}",
                    kind="error",
                    now=now,
                    job_id=int(job_id),
                )


def _claimed(conn: sqlite3.Connection, job_id: int) -> ClaimedJob:
    row = conn.execute(
        "SELECT id, conversation_id, person_id, is_admin, platform, chat_ref, reply_to, attempts "
        "FROM turn_jobs WHERE id = ?",
        (job_id,),
    ).fetchone()
    conversation_id = str(row[1])
    return ClaimedJob(
        id=int(row[0]),
        actor=job_actor(conversation_id, row[2], row[3], row[4]),
        chat_ref=row[5],
        reply_to=row[6],
        attempts=int(row[7]),
        tail=tip_tail(conn, conversation_id),
    )


def tip_tail(conn: sqlite3.Connection, conversation_id: str) -> TipTail | None:
    """The tip segment's newest message, or None for an empty segment."""
    row = conn.execute(
        "SELECT m.role, m.id, m.tool_calls IS NOT NULL, m.content FROM messages m "
        "WHERE m.conversation_id = ? AND m.session_id = "
        "(SELECT tip_session_id FROM conversations WHERE id = ?) ORDER BY m.id DESC LIMIT 1",
        (conversation_id, conversation_id),
    ).fetchone()
    if row is None:
        return None
    role, message_id, has_tool_calls = str(row[0]), int(row[1]), bool(row[2])
    # Only a final assistant reply can be a stored-but-unqueued answer worth recovering.
    queued = role == "assistant" and not has_tool_calls and is_message_queued(conn, message_id)
    return TipTail(role, message_id, has_tool_calls, row[3], queued=queued)


def renew_leases(
    conn: sqlite3.Connection, holder: str, conversation_ids: Sequence[str], *, now: float, lease_s: float
) -> list[str]:
    """Extend this holder's leases; returns the conversations whose lease it no longer holds."""
    lost = []
    for conversation_id in conversation_ids:
        cursor = conn.execute(
            "UPDATE leases SET expires_at = ? WHERE conversation_id = ? AND holder = ?",
            (now + lease_s, conversation_id, holder),
        )
        if cursor.rowcount == 0:
            lost.append(conversation_id)
    return lost


def release_jobs(conn: sqlite3.Connection, holder: str, job_ids: Sequence[int]) -> int:
    """Give jobs back to the queue (drain): they run again elsewhere, from their pending messages."""
    released = 0
    for job_id in job_ids:
        row = conn.execute(
            "SELECT conversation_id FROM turn_jobs WHERE id = ? AND state = 'running' AND claimed_by = ?",
            (job_id, holder),
        ).fetchone()
        if row is None:
            continue
        conn.execute(
            "UPDATE turn_jobs SET state = 'queued', claimed_by = NULL, started_at = NULL WHERE id = ?",
            (job_id,),
        )
        conn.execute("DELETE FROM leases WHERE conversation_id = ? AND holder = ?", (row[0], holder))
        released += 1
    return released
