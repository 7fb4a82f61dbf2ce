"""Enqueue on PostgreSQL: the ledger row, the conversation and what the busy policy decided, in ONE write.

Invariants: the ledger insert comes first and a duplicate event stops the transaction before anything else
is written, so an inbound event yields at most one user message and at most one job. Next the live
conversation's row is locked (``SELECT … FOR UPDATE``) before anything about it is read, so the enqueues
of one conversation (and its claims and stops, which take the same lock) run one after another and see
each other's commits: the queue the busy policy judges is the committed one, and job and held-message ids
of one conversation grow in the order their enqueues commit. Creating the conversation races on the
partial unique index ``conversations_live_key``; the loser locks the winner's row. An idle end first takes
the session key's advisory lock (as ``/new`` does), so the two replace a conversation in one order. Lock
order, shared with ``claims`` and ``queue``: conversation row, job rows, lease, segment rows, the outbox's
chat lock (a claim that takes one out of this order skips a locked row, never waits for it), so these
transactions never deadlock one another. A new job sends ``pg_notify('mnemogate_jobs', '')`` at commit.
"""

from __future__ import annotations

from agent_core.actor import Actor
from agent_core.storage.postgres.conversations import (
    CONVERSATION_COLUMNS,
    LiveConversationChurnError,
    conversation_from_row,
    end_conversation,
    ensure_conversation,
    lock_session_key,
)
from agent_core.storage.postgres.engine import Conn
from agent_core.storage.postgres.messages import PreparedMessage, insert_messages
from agent_core.storage.records import ConversationRecord, EndReason, NewSegment
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

JOBS_CHANNEL = "mnemogate_jobs"
"""The LISTEN/NOTIFY channel told when a job becomes claimable (payload empty)."""

_LOCK_ATTEMPTS = 8  # each failed attempt means another host created and ended the key's conversation


async def enqueue_turn(
    conn: Conn, request: TurnRequest, message: PreparedMessage, rule: AdmissionRule
) -> Enqueued:
    """Call inside ONE write transaction; the platform may be acknowledged once it commits."""
    actor = request.actor
    if not await record_event(conn, actor.platform, request.event_id, kind="turn"):
        return Enqueued(duplicate=True)
    if request.idle_after_s is not None:
        await lock_session_key(conn, request.session_key)
    conversation, created = await lock_live_or_create(conn, request)
    ended_idle = None
    if not created and await _quiet_for(conn, conversation, request.idle_after_s):
        await end_conversation(conn, conversation.id, EndReason.IDLE.value)
        ended_idle = conversation.id
        conversation, _ = await lock_live_or_create(conn, request)
    await set_event_conversation(conn, actor.platform, request.event_id, conversation.id)
    queue = await conversation_queue(conn, conversation.id)
    admission = rule.admit(queue, actor)
    if admission.placement is Placement.JOIN:
        if admission.join_job is None:
            raise ValueError("an admission that joins a job must name the job")
        job_id, coalesced = admission.join_job, True
    else:
        job_id, coalesced = await _insert_job(conn, conversation.id, request), False
    if admission.interrupt_running:  # job rows before segment rows (the lock order)
        await conn.execute(
            "UPDATE turn_jobs SET interrupt = GREATEST(interrupt, %s) "
            "WHERE conversation_id = %s AND state = 'running'",
            (int(Interrupt.NEWER), conversation.id),
        )
    if admission.placement is Placement.TIP:
        await insert_messages(conn, conversation.tip_session_id, [message])
    else:
        await hold_message(conn, conversation.id, job_id, message)
    if admission.ack_text:
        await add_outbox(
            conn,
            conversation_id=conversation.id,
            platform=actor.platform,
            chat_ref=request.chat_ref,
            text=admission.ack_text,
            idempotency_key=f"ack:{job_id}",
            kind="ack",
            job_id=job_id,
            reply_to=request.reply_to,
        )
    behind = admission.placement is Placement.WAIT and queue.running > 0
    return Enqueued(False, conversation.id, job_id, coalesced, behind_running=behind, ended_idle=ended_idle)


async def lock_live(conn: Conn, session_key: str) -> ConversationRecord | None:
    """The key's live conversation with its row locked to the end of the transaction (None: there is none).

    Read committed: a row another transaction is changing is waited for and then re-checked, so a
    conversation that ended meanwhile is not returned.
    """
    cursor = await conn.execute(
        f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE session_key = %s AND ended_at IS NULL "
        "FOR UPDATE",
        (session_key,),
    )
    row = await cursor.fetchone()
    return None if row is None else conversation_from_row(row)


async def lock_live_or_create(conn: Conn, request: TurnRequest) -> tuple[ConversationRecord, bool]:
    """The key's live conversation, locked; True when this transaction created it (its row is ours)."""
    for _ in range(_LOCK_ATTEMPTS):
        live = await lock_live(conn, request.session_key)
        if live is not None:
            return live, False
        record, created = await ensure_conversation(
            conn, request.session_key, request.principal, NewSegment()
        )
        if created:
            return record, True
        # Another transaction created it and committed: lock that one on the next round.
    raise LiveConversationChurnError(request.session_key, _LOCK_ATTEMPTS)


async def conversation_queue(conn: Conn, conversation_id: str) -> ConversationQueue:
    """The conversation's queue as the busy policy sees it: counts and the newest waiting job's sender."""
    cursor = await conn.execute(
        "SELECT r.running, r.queued, n.id, n.person_id, n.is_admin, n.platform, n.schedule_run_id FROM "
        "(SELECT count(*) FILTER (WHERE state = 'running') AS running, "
        "count(*) FILTER (WHERE state = 'queued') AS queued "
        "FROM turn_jobs WHERE conversation_id = %s AND state IN ('queued', 'running')) r "
        "LEFT JOIN LATERAL (SELECT id, person_id, is_admin, platform, schedule_run_id FROM turn_jobs "
        "WHERE conversation_id = %s AND state = 'queued' ORDER BY id DESC LIMIT 1) n ON true",
        (conversation_id, conversation_id),
    )
    row = await cursor.fetchone()
    assert row is not None  # an aggregate always yields one row
    newest = None
    if row[2] is not None:
        actor = job_actor(conversation_id, row[3], row[4], row[5])
        newest = QueuedJob(int(row[2]), actor, joinable=row[6] is None)
    return ConversationQueue(int(row[0]), int(row[1]), newest)


def job_actor(conversation_id: str, person_id: object, is_admin: object, platform: object) -> Actor:
    """The actor a job row runs for (rows written before persons existed have no person)."""
    return Actor(
        person_id=str(person_id) if person_id is not None else "",
        conversation_id=conversation_id,
        is_admin=bool(is_admin),
        platform=str(platform) if platform is not None else "unknown",
    )


async def queue_state(conn: Conn, conversation_id: str) -> QueueState:
    cursor = await conn.execute(
        "SELECT count(*) FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state = 'queued') "
        "FROM turn_jobs WHERE conversation_id = %s AND state IN ('queued', 'running')",
        (conversation_id,),
    )
    row = await cursor.fetchone()
    assert row is not None  # an aggregate always yields one row
    return QueueState(running=int(row[0]), queued=int(row[1]))


async def _insert_job(conn: Conn, conversation_id: str, request: TurnRequest) -> int:
    actor = request.actor
    cursor = await conn.execute(
        "WITH job AS (INSERT INTO turn_jobs(conversation_id, created_at, person_id, is_admin, platform, "
        "chat_ref, reply_to) VALUES (%s, mg_now(), %s, %s, %s, %s, %s) RETURNING id) "
        "SELECT id, pg_notify(%s, '') FROM job",
        (
            conversation_id,
            actor.person_id,
            actor.is_admin,
            actor.platform,
            request.chat_ref,
            request.reply_to,
            JOBS_CHANNEL,
        ),
    )
    row = await cursor.fetchone()
    assert row is not None  # INSERT … RETURNING yields the row it wrote
    return int(row[0])


async def hold_message(conn: Conn, conversation_id: str, job_id: int, message: PreparedMessage) -> None:
    """Hold a message for its job until the job is claimed (see ``release_pending``): one that arrived
    mid-turn, or a scheduled run's."""
    await conn.execute(
        "INSERT INTO pending_messages(conversation_id, job_id, role, content, author, platform_message_id, "
        "created_at, api_content) VALUES (%s, %s, %s, %s, %s, %s, COALESCE(%s, mg_now()), %s)",
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


async def release_pending(conn: Conn, conversation_id: str, job_id: int, segment_id: str) -> None:
    """Move the job's held messages into the tip segment ``segment_id``, in arrival order, after the rest.

    The caller holds the conversation's row lock, so no enqueue adds to what is moved here meanwhile.
    """
    cursor = await conn.execute(
        "DELETE FROM pending_messages WHERE conversation_id = %s AND job_id = %s "
        "RETURNING id, role, content, author, platform_message_id, created_at, api_content",
        (conversation_id, job_id),
    )
    rows = sorted(await cursor.fetchall(), key=lambda r: int(r[0]))
    if not rows:
        return
    prepared = [
        PreparedMessage(
            role=str(r[1]),
            content=r[2],
            tool_calls=None,
            tool_call_id=None,
            tool_name=None,
            reasoning=None,
            author=r[3],
            platform_message_id=r[4],
            api_content=r[6],
            created_at=float(r[5]),
        )
        for r in rows
    ]
    await insert_messages(conn, segment_id, prepared)


async def _quiet_for(conn: Conn, conversation: ConversationRecord, idle_after_s: float | None) -> bool:
    """Whether the (locked) conversation is idle and its last message (or its reopening, when later) is
    ``idle_after_s`` old or older."""
    if idle_after_s is None:
        return False
    cursor = await conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM turn_jobs WHERE conversation_id = %s "
        "AND state IN ('queued', 'running')) AND mg_now() - GREATEST(COALESCE("
        "(SELECT max(created_at) FROM messages WHERE conversation_id = %s), %s), "
        "(SELECT reopened_at FROM conversations WHERE id = %s)) >= %s",
        (conversation.id, conversation.id, conversation.created_at, conversation.id, idle_after_s),
    )
    row = await cursor.fetchone()
    return bool(row is not None and row[0])
