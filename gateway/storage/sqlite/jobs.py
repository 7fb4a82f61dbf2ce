"""The durable turn queue: enqueue (ledger + message + job in one transaction), leases, claim and finish.

Invariants: an inbound event yields at most one user message and at most one job (the ledger insert comes
first and aborts the rest on a duplicate); a turn answers ONE sender (a message joins the newest queued job
only when it is the same person's, else it waits for a job of its own) and a conversation has at most one
live lease, so at most one turn runs per conversation across every
process; a lease that expires (its holder died) returns the job to the queue; finishing checks that the
caller still holds the job, and the reply's outbox row is written in the same transaction that marks the
job done, keyed by the job id, so a reply is queued exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.storage.records import EndReason, NewSegment, Principal
from agent_core.storage.sqlite.conversations import end_conversation, ensure_conversation, live_conversation
from agent_core.storage.sqlite.messages import PreparedMessage, insert_messages

from .ledger import record_event, set_event_conversation
from .outbox import add_outbox

INTERRUPT_NEWER = 1
INTERRUPT_STOP = 2


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything one inbound message contributes to the queue."""

    platform: str
    event_id: str
    session_key: str
    principal: Principal
    person_id: str
    is_admin: bool
    chat_ref: str
    reply_to: str | None
    message: PreparedMessage
    interrupt_running: bool = False
    idle_after_s: float | None = None
    ack_text: str | None = None


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What enqueue did; ``behind_running``: a new job waits for a running turn (and was acknowledged)."""

    duplicate: bool
    conversation_id: str | None = None
    job_id: int | None = None
    coalesced: bool = False
    behind_running: bool = False
    ended_idle: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    id: int
    conversation_id: str
    person_id: str | None
    is_admin: bool
    platform: str | None
    chat_ref: str | None
    reply_to: str | None
    attempts: int


@dataclass(frozen=True, slots=True)
class QueueState:
    running: int
    queued: int


@dataclass(frozen=True, slots=True)
class JobReply:
    """The reply a finished job queues; ``append``: an assistant row to persist first (unexpected errors)."""

    text: str
    kind: str = "reply"
    message_id: int | None = None
    append: PreparedMessage | None = None


def enqueue_turn(conn: sqlite3.Connection, request: TurnRequest, now: float) -> Enqueued:
    """Call inside ONE write transaction; the platform may be acknowledged once it commits."""
    if not record_event(conn, request.platform, request.event_id, kind="turn", now=now):
        return Enqueued(duplicate=True)
    ended_idle = _end_if_idle(conn, request, now)
    conversation, _ = ensure_conversation(conn, request.session_key, request.principal, NewSegment(), now)
    set_event_conversation(conn, request.platform, request.event_id, conversation.id)
    state = queue_state(conn, conversation.id)
    if not state.running and not state.queued:
        insert_messages(conn, conversation.tip_session_id, conversation.id, [request.message])
    else:
        # A turn answers one sender with that sender's rights: a message joins the newest queued job
        # only when it is the same person's; otherwise it waits for a job of its own.
        newest = conn.execute(
            "SELECT id, person_id, is_admin FROM turn_jobs WHERE conversation_id = ? AND state = 'queued' "
            "ORDER BY id DESC LIMIT 1",
            (conversation.id,),
        ).fetchone()
        if newest is not None and newest[1] == request.person_id and bool(newest[2]) == request.is_admin:
            _stash(conn, conversation.id, int(newest[0]), request.message)
            return Enqueued(False, conversation.id, int(newest[0]), coalesced=True, ended_idle=ended_idle)
    cursor = conn.execute(
        "INSERT INTO turn_jobs(conversation_id, created_at, person_id, is_admin, platform, chat_ref, "
        "reply_to) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            conversation.id,
            now,
            request.person_id,
            int(request.is_admin),
            request.platform,
            request.chat_ref,
            request.reply_to,
        ),
    )
    job_id = int(cursor.lastrowid or 0)
    behind = state.running > 0
    if behind or state.queued:
        _stash(conn, conversation.id, job_id, request.message)
    if behind:
        if request.interrupt_running:
            conn.execute(
                "UPDATE turn_jobs SET interrupt = max(interrupt, ?) "
                "WHERE conversation_id = ? AND state = 'running'",
                (INTERRUPT_NEWER, conversation.id),
            )
        if request.ack_text:
            add_outbox(
                conn,
                conversation_id=conversation.id,
                platform=request.platform,
                chat_ref=request.chat_ref,
                text=request.ack_text,
                idempotency_key=f"ack:{job_id}",
                kind="ack",
                now=now,
                job_id=job_id,
                reply_to=request.reply_to,
            )
    return Enqueued(False, conversation.id, job_id, behind_running=behind, ended_idle=ended_idle)


def _stash(conn: sqlite3.Connection, conversation_id: str, job_id: int, message: PreparedMessage) -> None:
    """Hold a message that arrived mid-turn until the next turn is claimed (see ``_release_pending``)."""
    conn.execute(
        "INSERT INTO pending_messages(conversation_id, job_id, role, content, author, platform_message_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            conversation_id,
            job_id,
            message.role,
            message.content,
            message.author,
            message.platform_message_id,
            message.created_at,
        ),
    )


def _release_pending(conn: sqlite3.Connection, conversation_id: str, job_id: int) -> None:
    """Move the job's held messages into the tip segment, in arrival order, after everything there."""
    rows = conn.execute(
        "SELECT role, content, author, platform_message_id, created_at FROM pending_messages "
        "WHERE conversation_id = ? AND job_id = ? ORDER BY id",
        (conversation_id, job_id),
    ).fetchall()
    if not rows:
        return
    tip = conn.execute("SELECT tip_session_id FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    prepared = [
        PreparedMessage(
            role=str(r[0]),
            content=r[1],
            tool_calls=None,
            tool_call_id=None,
            tool_name=None,
            reasoning=None,
            author=r[2],
            platform_message_id=r[3],
            api_content=None,
            created_at=float(r[4]),
        )
        for r in rows
    ]
    insert_messages(conn, str(tip[0]), conversation_id, prepared)
    conn.execute(
        "DELETE FROM pending_messages WHERE conversation_id = ? AND job_id = ?", (conversation_id, job_id)
    )


def _end_if_idle(conn: sqlite3.Connection, request: TurnRequest, now: float) -> str | None:
    if request.idle_after_s is None:
        return None
    live = live_conversation(conn, request.session_key)
    if live is None:
        return None
    busy = queue_state(conn, live.id)
    if busy.running or busy.queued:
        return None
    row = conn.execute(
        "SELECT max(created_at) FROM messages WHERE conversation_id = ?", (live.id,)
    ).fetchone()
    last = float(row[0]) if row is not None and row[0] is not None else live.created_at
    if now - last < request.idle_after_s:
        return None
    end_conversation(conn, live.id, EndReason.IDLE.value, now)
    return live.id


def queue_state(conn: sqlite3.Connection, conversation_id: str) -> QueueState:
    rows = conn.execute(
        "SELECT state, count(*) FROM turn_jobs WHERE conversation_id = ? AND state IN ('queued', 'running') "
        "GROUP BY state",
        (conversation_id,),
    ).fetchall()
    counts = {str(state): int(n) for state, n in rows}
    return QueueState(running=counts.get("running", 0), queued=counts.get("queued", 0))


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
    conn: sqlite3.Connection, holder: str, *, now: float, lease_s: float, limit: int, max_attempts: int
) -> list[ClaimedJob]:
    """Claim up to ``limit`` runnable jobs, one per conversation, each under a fresh lease."""
    _reap_expired(conn, now, max_attempts)
    if limit <= 0:
        return []
    candidates = conn.execute(
        "SELECT conversation_id, min(id) FROM turn_jobs j WHERE state = 'queued' AND NOT EXISTS "
        "(SELECT 1 FROM leases l WHERE l.conversation_id = j.conversation_id) "
        "GROUP BY conversation_id ORDER BY min(id) LIMIT ?",
        (limit,),
    ).fetchall()
    claimed = []
    for conversation_id, job_id in candidates:
        # Later queued jobs (other senders in a shared conversation) keep their own turns.
        conn.execute(
            "UPDATE turn_jobs SET state = 'running', claimed_by = ?, started_at = ?, finished_at = NULL, "
            "attempts = attempts + 1, interrupt = 0 WHERE id = ?",
            (holder, now, job_id),
        )
        conn.execute(
            "INSERT OR REPLACE INTO leases(conversation_id, holder, expires_at) VALUES (?, ?, ?)",
            (conversation_id, holder, now + lease_s),
        )
        _release_pending(conn, conversation_id, int(job_id))
        claimed.append(_claimed(conn, int(job_id)))
    return claimed


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
                    text="Sorry — I couldn't finish answering that. Please send it again.",
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
    return ClaimedJob(
        id=int(row[0]),
        conversation_id=str(row[1]),
        person_id=row[2],
        is_admin=bool(row[3]),
        platform=row[4],
        chat_ref=row[5],
        reply_to=row[6],
        attempts=int(row[7]),
    )


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


def interrupt_flag(conn: sqlite3.Connection, job_id: int) -> int:
    row = conn.execute("SELECT interrupt FROM turn_jobs WHERE id = ?", (job_id,)).fetchone()
    return int(row[0]) if row is not None else 0


def finish_job(
    conn: sqlite3.Connection,
    job_id: int,
    holder: str,
    *,
    now: float,
    state: str,
    error: str | None = None,
    reply: JobReply | None = None,
    note: PreparedMessage | None = None,
) -> bool:
    """Mark the job done/failed, drop its lease and queue its reply, atomically; False if no longer ours.

    ``note`` is an assistant row recorded without being sent (a turn the user stopped).
    """
    job = conn.execute(
        "SELECT conversation_id, state, claimed_by, platform, chat_ref, reply_to FROM turn_jobs WHERE id = ?",
        (job_id,),
    ).fetchone()
    if job is None or job[1] != "running" or job[2] != holder:
        return False
    conversation_id = str(job[0])
    conn.execute(
        "UPDATE turn_jobs SET state = ?, finished_at = ?, error = ? WHERE id = ?", (state, now, error, job_id)
    )
    conn.execute("DELETE FROM leases WHERE conversation_id = ? AND holder = ?", (conversation_id, holder))
    if note is not None:
        _append_to_tip(conn, conversation_id, note)
    if reply is None or job[3] is None or job[4] is None:
        return True
    message_id = reply.message_id
    if reply.append is not None:
        message_id = _append_to_tip(conn, conversation_id, reply.append)
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
    tip = conn.execute("SELECT tip_session_id FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    (message_id,) = insert_messages(conn, str(tip[0]), conversation_id, [message])
    return message_id


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
        (INTERRUPT_STOP, conversation_id),
    )
    # What the user asked to drop never reaches the transcript.
    conn.execute("DELETE FROM pending_messages WHERE conversation_id = ?", (conversation_id,))
    return state


@dataclass(frozen=True, slots=True)
class TipTail:
    """The newest message of a conversation's tip segment."""

    role: str
    message_id: int
    has_tool_calls: bool
    content: str | None


def tip_tail(conn: sqlite3.Connection, conversation_id: str) -> TipTail | None:
    """The tip segment's newest message, or None for an empty segment."""
    row = conn.execute(
        "SELECT m.role, m.id, m.tool_calls IS NOT NULL, m.content FROM messages m "
        "WHERE m.conversation_id = ? AND m.session_id = "
        "(SELECT tip_session_id FROM conversations WHERE id = ?) ORDER BY m.id DESC LIMIT 1",
        (conversation_id, conversation_id),
    ).fetchone()
    return None if row is None else TipTail(str(row[0]), int(row[1]), bool(row[2]), row[3])
