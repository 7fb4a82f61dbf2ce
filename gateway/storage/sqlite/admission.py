"""Enqueue on SQLite: the ledger row, the conversation, and what the busy policy decided, in ONE transaction.

Invariants: the ledger insert comes first and a duplicate event stops the transaction before anything else
is written, so an inbound event yields at most one user message and at most one job; the arriving message
lands exactly where the ``Admission`` says (the tip, or held in ``pending_messages`` for a job); held
messages join the tip segment in arrival order when their job is claimed (``release_pending``).
"""

from __future__ import annotations

import sqlite3

from agent_core.actor import Actor
from agent_core.storage.records import EndReason, NewSegment
from agent_core.storage.sqlite.conversations import (
    end_conversation,
    ensure_conversation,
    live_conversation,
    tip_segment_id,
)
from agent_core.storage.sqlite.messages import PreparedMessage, insert_messages
from gateway.storage.queue import (
    AdmissionRule,
    ConversationQueue,
    Enqueued,
    Interrupt,
    Placement,
    QueuedJob,
    QueueState,
    TurnRequest,
)

from .ledger import record_event, set_event_conversation
from .outbox import add_outbox


def enqueue_turn(
    conn: sqlite3.Connection, request: TurnRequest, message: PreparedMessage, rule: AdmissionRule, now: float
) -> Enqueued:
    """Call inside ONE write transaction; the platform may be acknowledged once it commits."""
    actor = request.actor
    if not record_event(conn, actor.platform, request.event_id, kind="turn", now=now):
        return Enqueued(duplicate=True)
    ended_idle = _end_if_idle(conn, request, now)
    conversation, _ = ensure_conversation(conn, request.session_key, request.principal, NewSegment(), now)
    set_event_conversation(conn, actor.platform, request.event_id, conversation.id)
    queue = conversation_queue(conn, conversation.id)
    admission = rule.admit(queue, actor)
    if admission.placement is Placement.JOIN:
        if admission.join_job is None:
            raise ValueError("an admission that joins a job must name the job")
        job_id, coalesced = admission.join_job, True
    else:
        job_id, coalesced = _insert_job(conn, conversation.id, request, now), False
    if admission.placement is Placement.TIP:
        insert_messages(conn, conversation.tip_session_id, conversation.id, [message])
    else:
        hold_message(conn, conversation.id, job_id, message)
    if admission.interrupt_running:
        conn.execute(
            "UPDATE turn_jobs SET interrupt = max(interrupt, ?) "
            "WHERE conversation_id = ? AND state = 'running'",
            (int(Interrupt.NEWER), conversation.id),
        )
    if admission.ack_text:
        add_outbox(
            conn,
            conversation_id=conversation.id,
            platform=actor.platform,
            chat_ref=request.chat_ref,
            text=admission.ack_text,
            idempotency_key=f"ack:{job_id}",
            kind="ack",
            now=now,
            job_id=job_id,
            reply_to=request.reply_to,
        )
    behind = admission.placement is Placement.WAIT and queue.running > 0
    return Enqueued(False, conversation.id, job_id, coalesced, behind_running=behind, ended_idle=ended_idle)


def conversation_queue(conn: sqlite3.Connection, conversation_id: str) -> ConversationQueue:
    """The conversation's queue as the busy policy sees it: counts and the newest waiting job's sender."""
    state = queue_state(conn, conversation_id)
    newest = None
    if state.queued:
        row = conn.execute(
            "SELECT id, person_id, is_admin, platform, schedule_run_id FROM turn_jobs "
            "WHERE conversation_id = ? AND state = 'queued' ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        if row is not None:
            actor = job_actor(conversation_id, row[1], row[2], row[3])
            newest = QueuedJob(int(row[0]), actor, joinable=row[4] is None)
    return ConversationQueue(state.running, state.queued, newest)


def job_actor(conversation_id: str, person_id: object, is_admin: object, platform: object) -> Actor:
    """The actor a job row runs for (rows written before persons existed have no person)."""
    return Actor(
        person_id=str(person_id) if person_id is not None else "",
        conversation_id=conversation_id,
        is_admin=bool(is_admin),
        platform=str(platform) if platform is not None else "unknown",
    )


def queue_state(conn: sqlite3.Connection, conversation_id: str) -> QueueState:
    rows = conn.execute(
        "SELECT state, count(*) FROM turn_jobs WHERE conversation_id = ? AND state IN ('queued', 'running') "
        "GROUP BY state",
        (conversation_id,),
    ).fetchall()
    counts = {str(state): int(n) for state, n in rows}
    return QueueState(running=counts.get("running", 0), queued=counts.get("queued", 0))


def _insert_job(conn: sqlite3.Connection, conversation_id: str, request: TurnRequest, now: float) -> int:
    actor = request.actor
    cursor = conn.execute(
        "INSERT INTO turn_jobs(conversation_id, created_at, person_id, is_admin, platform, chat_ref, "
        "reply_to) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            conversation_id,
            now,
            actor.person_id,
            int(actor.is_admin),
            actor.platform,
            request.chat_ref,
            request.reply_to,
        ),
    )
    return int(cursor.lastrowid or 0)


def hold_message(
    conn: sqlite3.Connection, conversation_id: str, job_id: int, message: PreparedMessage
) -> None:
    """Hold a message for its job until the job is claimed (see ``release_pending``): one that arrived
    mid-turn, or a scheduled run's."""
    conn.execute(
        "INSERT INTO pending_messages(conversation_id, job_id, role, content, author, platform_message_id, "
        "created_at, api_content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            conversation_id,
            job_id,
            message.role,
            message.content,
            message.author,
            message.platform_message_id,
            message.created_at,
            message.api_content,
        ),
    )


def release_pending(conn: sqlite3.Connection, conversation_id: str, job_id: int) -> None:
    """Move the job's held messages into the tip segment, in arrival order, after everything there."""
    rows = conn.execute(
        "SELECT role, content, author, platform_message_id, created_at, api_content FROM pending_messages "
        "WHERE conversation_id = ? AND job_id = ? ORDER BY id",
        (conversation_id, job_id),
    ).fetchall()
    if not rows:
        return
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
            api_content=r[5],
            created_at=float(r[4]),
        )
        for r in rows
    ]
    insert_messages(conn, tip_segment_id(conn, conversation_id), conversation_id, prepared)
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
    # Active when it last had a message, or was reopened (a chat window made it live again).
    row = conn.execute(
        "SELECT max(coalesce((SELECT max(created_at) FROM messages WHERE conversation_id = c.id), "
        "c.created_at), coalesce(c.reopened_at, 0)) FROM conversations c WHERE c.id = ?",
        (live.id,),
    ).fetchone()
    last = float(row[0]) if row is not None and row[0] is not None else live.created_at
    if now - last < request.idle_after_s:
        return None
    end_conversation(conn, live.id, EndReason.IDLE.value, now)
    return live.id
