"""The SQL of retention on SQLite: which rows each kind may remove, as one condition per kind that both the
preview (a count) and the pruning (a delete of the oldest ``limit``) use, so a dry run counts what a run
removes.

Invariants: every statement here takes its ages as cut-off times (``now - age``) computed by the caller
under the write lock; every condition excludes what is still in use (undelivered outbox rows, queued or
running jobs and their held messages, a schedule's latest run, conversations with work queued or an active
schedule); each condition is served by an index (migrations: gateway step 14, agent step 11), so a run
never scans the messages.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from gateway.storage.retention import RETENTION_END_REASON, TOOL_OUTPUT_FLOOR_CHARS

# Queued or running work, an undelivered reply or an active schedule keeps a conversation (and its rows).
_BUSY_CONVERSATION = (
    "c.id NOT IN (SELECT conversation_id FROM turn_jobs WHERE state IN ('queued', 'running')) "
    "AND c.id NOT IN (SELECT conversation_id FROM schedules WHERE state = 'active') "
    "AND c.id NOT IN (SELECT conversation_id FROM pending_messages)"
)

# A reply of a schedule run that is kept stays with it (the run's delivery status is read from it).
_OF_KEPT_RUN = (
    "(SELECT id FROM turn_jobs WHERE schedule_run_id IS NOT NULL "
    "AND schedule_run_id IN (SELECT id FROM schedule_runs))"
)

GIVEN_UP_OUTBOX = (
    "FROM outbox WHERE state = 'failed' AND created_at < :cut "
    f"AND (job_id IS NULL OR job_id NOT IN {_OF_KEPT_RUN})"
)

LEDGER = "FROM inbound_events INDEXED BY inbound_events_received WHERE received_at < :cut"

FINISHED_JOBS = (
    "FROM turn_jobs WHERE finished_at < :cut AND state IN ('done', 'failed') "
    "AND id NOT IN (SELECT job_id FROM outbox WHERE state IN ('pending', 'sending') AND job_id IS NOT NULL) "
    "AND id NOT IN (SELECT job_id FROM pending_messages) "
    "AND (schedule_run_id IS NULL OR schedule_run_id NOT IN (SELECT id FROM schedule_runs))"
)

SCHEDULE_RUNS = (
    "FROM schedule_runs r WHERE r.fired_at < :cut "
    "AND r.id <> (SELECT max(l.id) FROM schedule_runs l WHERE l.schedule_id = r.schedule_id) "
    "AND r.id NOT IN (SELECT schedule_run_id FROM turn_jobs "
    "WHERE schedule_run_id IS NOT NULL AND state IN ('queued', 'running'))"
)

# The floor term is written out so the planner can use the partial index messages_large_tool_outputs.
LARGE_TOOL_OUTPUTS = (
    f"FROM messages WHERE role = 'tool' AND length(content) > {TOOL_OUTPUT_FLOOR_CHARS} "
    "AND length(content) > :min_chars AND created_at < :cut"
)

# A conversation's last activity: its start, its reopening, its tip's start, its tip's newest message (the
# tip holds the newest messages; ORDER BY id DESC LIMIT 1 on messages_conversation is one index seek).
_ACTIVITY = (
    "max(c.created_at, coalesce(c.reopened_at, 0), "
    "coalesce((SELECT s.started_at FROM sessions s WHERE s.id = c.tip_session_id), 0), "
    "coalesce((SELECT m.created_at FROM messages m WHERE m.conversation_id = c.id "
    "AND m.session_id = c.tip_session_id ORDER BY m.id DESC LIMIT 1), 0))"
)

IDLE_CONVERSATIONS = (
    f"FROM conversations c WHERE c.ended_at IS NULL AND c.created_at < :cut AND {_ACTIVITY} < :cut "
    f"AND {_BUSY_CONVERSATION}"
)

# Ended by retention: deleted ``grace`` after the end; ended otherwise (new, reset, idle…): its end was its
# last activity, so deleted ``idle + grace`` after it.
EXPIRED_CONVERSATIONS = (
    "FROM conversations c INDEXED BY conversations_ended WHERE c.ended_at IS NOT NULL "
    f"AND c.ended_at < :grace_cut AND (c.end_reason = '{RETENTION_END_REASON}' OR c.ended_at < :full_cut) "
    f"AND {_BUSY_CONVERSATION} "
    "AND c.id NOT IN (SELECT conversation_id FROM outbox WHERE state IN ('pending', 'sending'))"
)


def count(conn: sqlite3.Connection, rule: str, params: Mapping[str, object]) -> int:
    """How many rows ``rule`` (one of the conditions above) selects now."""
    return int(conn.execute(f"SELECT count(*) {rule}", params).fetchone()[0])


def add_total(conn: sqlite3.Connection, kind: str, removed: int) -> None:
    """Add ``removed`` to ``kind``'s cluster-wide total, inside the caller's transaction."""
    if removed:
        conn.execute(
            "INSERT INTO retention_totals(kind, removed) VALUES (?, ?) "
            "ON CONFLICT(kind) DO UPDATE SET removed = removed + excluded.removed",
            (kind, removed),
        )
