"""Schedules on PostgreSQL: ``PgSchedules`` implements ``ScheduleRepository`` over one ``PgDatabase``.

Invariants (the port's, ``gateway.storage.schedules``): firing claims due schedules
``FOR UPDATE SKIP LOCKED``, so hosts firing at once take disjoint schedules and never wait on one another;
an occurrence is fired once (the run's unique key) with its job and held message in the same statement.
The target conversations' rows are locked ``FOR UPDATE`` in id order first — the lock enqueue and claims
take first (``admission``), so a scheduled job is ordered among the conversation's jobs like any enqueue,
and two hosts firing into shared conversations lock them in one order and cannot deadlock. New jobs send
``pg_notify('mnemogate_jobs', '')`` at commit. Cancelling locks the schedule, then its conversation, then
the jobs it drops. Every stamp is the server's clock (``mg_now()``); the caller's ``now`` only decides what
is due.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, LiteralString, TypeVar

from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.messages import prepare
from gateway.storage.schedule_rows import run_from_row, schedule_from_row
from gateway.storage.schedules import (
    OPEN_STATES,
    SCHEDULE_STATES,
    DueSchedule,
    FiredRun,
    Firing,
    FiringRule,
    NewSchedule,
    ScheduleRecord,
    ScheduleRun,
    ScheduleState,
    ScheduleTarget,
    firing_outcome,
    target_state,
)

from .admission import JOBS_CHANNEL
from .outbox import OUTBOX_CHANNEL

__all__ = ["PgSchedules"]

T = TypeVar("T")
# In the order gateway.storage.schedule_rows reads them.
_COLUMNS = (
    "id, person_id, conversation_id, platform, chat_ref, kind, spec, timezone, action, text, state, reason, "
    "next_run_at, runs, missed, last_run_at, created_at, created_by, is_admin"
)
RUN_COLUMNS = (
    "r.id, r.schedule_id, r.occurrence_at, r.fired_at, r.conversation_id, j.id, r.kind, r.missed, "
    "j.state, j.error, o.state, o.attempts, o.error, o.text"
)
_RUNS = f"""SELECT {RUN_COLUMNS}
    FROM schedule_runs r LEFT JOIN turn_jobs j ON j.schedule_run_id = r.id
    LEFT JOIN outbox o ON o.idempotency_key = 'turn:' || j.id"""
_DUE = f"""SELECT {_COLUMNS} FROM schedules WHERE state = 'active' AND next_run_at <= %s
    ORDER BY next_run_at, id LIMIT %s FOR UPDATE SKIP LOCKED"""
# The run (once per occurrence), its job and the held message, and the schedule moved on, in one statement.
_FIRE = """WITH run AS (
        INSERT INTO schedule_runs(schedule_id, occurrence_at, fired_at, conversation_id, kind, missed)
        VALUES (%(s)s, %(occurrence)s, mg_now(), %(c)s, %(kind)s, %(missed)s)
        ON CONFLICT (schedule_id, occurrence_at) DO NOTHING RETURNING id),
    job AS (
        INSERT INTO turn_jobs(conversation_id, created_at, person_id, is_admin, platform, chat_ref,
            schedule_run_id)
        SELECT %(c)s, mg_now(), %(person)s, %(admin)s, %(platform)s, %(chat)s, id FROM run RETURNING id),
    held AS (
        INSERT INTO pending_messages(conversation_id, job_id, role, content, author, platform_message_id,
            created_at, api_content)
        SELECT %(c)s, id, %(role)s, %(content)s, %(author)s, NULL, COALESCE(%(at)s, mg_now()), %(api)s
        FROM job),
    moved AS (
        UPDATE schedules SET next_run_at = %(next)s, state = %(state)s,
            runs = runs + (SELECT count(*) FROM run), missed = missed + %(missed)s,
            last_run_at = CASE WHEN EXISTS (SELECT 1 FROM run) THEN mg_now() ELSE last_run_at END,
            reason = COALESCE(%(note)s, reason), updated_at = mg_now()
        WHERE id = %(s)s)
    SELECT run.id, job.id FROM run JOIN job ON true"""
_MOVE = """UPDATE schedules SET next_run_at = %(next)s, state = %(state)s, missed = missed + %(missed)s,
        reason = COALESCE(%(note)s, reason), updated_at = mg_now() WHERE id = %(s)s"""


async def schedule_target(conn: Conn, conversation_id: str) -> ScheduleTarget | None:
    cursor = await conn.execute(
        "SELECT c.person_id, c.ended_at, j.platform, j.chat_ref FROM conversations c "
        "LEFT JOIN LATERAL (SELECT platform, chat_ref FROM turn_jobs WHERE conversation_id = c.id "
        "AND chat_ref IS NOT NULL AND platform IS NOT NULL ORDER BY id DESC LIMIT 1) j ON true "
        "WHERE c.id = %s",
        (conversation_id,),
    )
    row = await cursor.fetchone()
    if row is None or row[3] is None:
        return None
    person = "" if row[0] is None else str(row[0])
    return ScheduleTarget(conversation_id, person, str(row[2]), str(row[3]), ended=row[1] is not None)


async def create_schedule(conn: Conn, schedule: NewSchedule, max_per_person: int) -> ScheduleRecord | None:
    target = schedule.target
    # One person's creations queue here, so the count below is the committed one (no overshoot).
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('schedules:' || %s))", (target.person_id,))
    cursor = await conn.execute(
        "SELECT count(*) FROM schedules WHERE person_id = %s AND state = ANY(%s)",
        (target.person_id, list(OPEN_STATES)),
    )
    row = await cursor.fetchone()
    if row is not None and int(row[0]) >= max_per_person:
        return None
    cursor = await conn.execute(
        f"INSERT INTO schedules(person_id, conversation_id, platform, chat_ref, kind, spec, timezone, "
        f"action, text, next_run_at, created_at, created_by, is_admin, updated_at) "
        f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, mg_now(), %s, %s, mg_now()) RETURNING {_COLUMNS}",
        (
            target.person_id,
            target.conversation_id,
            target.platform,
            target.chat_ref,
            schedule.kind,
            schedule.spec,
            schedule.timezone,
            schedule.action,
            schedule.text,
            schedule.first_run_at,
            schedule.created_by,
            schedule.is_admin,
        ),
    )
    created = await cursor.fetchone()
    return None if created is None else schedule_from_row(created)


async def get_schedule(conn: Conn, schedule_id: int, *, lock: bool = False) -> ScheduleRecord | None:
    query: LiteralString = f"SELECT {_COLUMNS} FROM schedules WHERE id = %s"
    cursor = await conn.execute(query + " FOR UPDATE" if lock else query, (schedule_id,))
    row = await cursor.fetchone()
    return None if row is None else schedule_from_row(row)


async def cancel_schedule(
    conn: Conn, schedule_id: int, person_id: str | None, by: str
) -> ScheduleRecord | None:
    found = await get_schedule(conn, schedule_id, lock=True)
    if found is None or found.state not in OPEN_STATES:
        return None
    if person_id is not None and found.person_id != person_id:
        return None
    await conn.execute("SELECT 1 FROM conversations WHERE id = %s FOR UPDATE", (found.conversation_id,))
    await conn.execute(
        "WITH dropped AS (UPDATE turn_jobs j SET state = 'failed', error = 'cancelled', "
        "finished_at = mg_now() FROM schedule_runs r WHERE r.id = j.schedule_run_id "
        "AND r.schedule_id = %s AND j.state = 'queued' RETURNING j.id) "
        "DELETE FROM pending_messages WHERE job_id IN (SELECT id FROM dropped)",
        (schedule_id,),
    )
    cursor = await conn.execute(
        f"UPDATE schedules SET state = 'cancelled', next_run_at = NULL, reason = %s, updated_at = mg_now() "
        f"WHERE id = %s RETURNING {_COLUMNS}",
        (f"cancelled by {by}", schedule_id),
    )
    row = await cursor.fetchone()
    return None if row is None else schedule_from_row(row)


async def fire_due(conn: Conn, now: float, rule: FiringRule, limit: int) -> list[FiredRun]:
    """Claim and carry out up to ``limit`` due schedules inside the caller's write transaction."""
    rows = await (await conn.execute(_DUE, (now, limit))).fetchall()
    if not rows:
        return []
    schedules = [schedule_from_row(row) for row in rows]
    conversations = sorted({s.conversation_id for s in schedules})
    locked = await conn.execute(
        "SELECT id, ended_at IS NOT NULL FROM conversations WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
        (conversations,),
    )
    ended = {str(row[0]): bool(row[1]) for row in await locked.fetchall()}
    known = await conn.execute(
        "SELECT id FROM persons WHERE id = ANY(%s)", (sorted({s.person_id for s in schedules}),)
    )
    persons = {str(row[0]) for row in await known.fetchall()}
    fired = []
    for schedule in schedules:
        where = schedule.conversation_id
        state = target_state(where in ended, ended.get(where, False))
        due = DueSchedule(schedule, state, person_known=schedule.person_id in persons)
        fired.append(await _carry_out(conn, schedule, rule.plan(due, now)))
    if any(run.job_id is not None for run in fired):
        await conn.execute("SELECT pg_notify(%s, '')", (JOBS_CHANNEL,))
    return fired


async def _carry_out(conn: Conn, schedule: ScheduleRecord, firing: Firing) -> FiredRun:
    if firing.pause is not None:
        await conn.execute(
            "UPDATE schedules SET state = 'paused', reason = %s, updated_at = mg_now() WHERE id = %s",
            (firing.pause, schedule.id),
        )
        return FiredRun(schedule.id, None, None, schedule.conversation_id, None, "paused")
    done = firing.next_run_at is None
    moved = {
        "s": schedule.id,
        "next": firing.next_run_at,
        "state": "done" if done else "active",
        "missed": firing.missed,
        "note": firing.note,
    }
    run_id = job_id = None
    if firing.occurrence_at is not None and firing.message is not None:
        message = prepare(firing.message)
        params = {
            **moved,
            "occurrence": firing.occurrence_at,
            "c": schedule.conversation_id,
            "kind": "catch_up" if firing.catch_up else "on_time",
            "person": schedule.person_id,
            "admin": schedule.is_admin,
            "platform": schedule.platform,
            "chat": schedule.chat_ref,
            "role": message.role,
            "content": message.content,
            "author": message.author,
            "at": message.created_at,
            "api": message.api_content,
        }
        row = await (await conn.execute(_FIRE, params)).fetchone()
        if row is not None:
            run_id, job_id = int(row[0]), int(row[1])
    else:
        await conn.execute(_MOVE, moved)
    outcome = firing_outcome(run_id is not None, done)
    return FiredRun(schedule.id, run_id, job_id, schedule.conversation_id, firing.occurrence_at, outcome)


async def resend_run(conn: Conn, run_id: int) -> bool:
    cursor = await conn.execute(
        "WITH again AS (UPDATE outbox o SET state = 'pending', attempts = 0, error = NULL, "
        "claimed_by = NULL, claim_expires_at = NULL FROM turn_jobs j WHERE j.schedule_run_id = %s "
        "AND o.idempotency_key = 'turn:' || j.id AND o.state = 'failed' RETURNING o.id) "
        "SELECT id, pg_notify(%s, '') FROM again",
        (run_id, OUTBOX_CHANNEL),
    )
    return await cursor.fetchone() is not None


class PgSchedules:
    """``ScheduleRepository`` on an opened ``PgDatabase``."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def now(self) -> float:
        row = await self._read(lambda c: _one(c, "SELECT mg_now()", ()))
        return float(row[0])

    async def target(self, conversation_id: str) -> ScheduleTarget | None:
        return await self._read(lambda c: schedule_target(c, conversation_id))

    async def create(self, schedule: NewSchedule, *, max_per_person: int) -> ScheduleRecord | None:
        return await self._db.run_write(lambda c: create_schedule(c, schedule, max_per_person))

    async def get(self, schedule_id: int) -> ScheduleRecord | None:
        return await self._read(lambda c: get_schedule(c, schedule_id))

    async def find(
        self,
        *,
        person_id: str | None = None,
        conversation_id: str | None = None,
        states: Sequence[ScheduleState] = SCHEDULE_STATES,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ScheduleRecord]:
        async def read(conn: Conn) -> list[ScheduleRecord]:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS} FROM schedules WHERE state = ANY(%(states)s) "
                "AND (%(person)s::text IS NULL OR person_id = %(person)s) "
                "AND (%(c)s::text IS NULL OR conversation_id = %(c)s) "
                "ORDER BY next_run_at IS NULL, next_run_at, id DESC LIMIT %(limit)s OFFSET %(offset)s",
                {
                    "states": list(states),
                    "person": person_id,
                    "c": conversation_id,
                    "limit": limit,
                    "offset": offset,
                },
            )
            return [schedule_from_row(row) for row in await cursor.fetchall()]

        return await self._read(read)

    async def count(
        self, *, person_id: str | None = None, states: Sequence[ScheduleState] = OPEN_STATES
    ) -> int:
        row = await self._read(
            lambda c: _one(
                c,
                "SELECT count(*) FROM schedules WHERE state = ANY(%s) "
                "AND (%s::text IS NULL OR person_id = %s)",
                (list(states), person_id, person_id),
            )
        )
        return int(row[0])

    async def cancel(
        self, schedule_id: int, *, by: str, person_id: str | None = None
    ) -> ScheduleRecord | None:
        return await self._db.run_write(lambda c: cancel_schedule(c, schedule_id, person_id, by))

    async def fire_due(self, now: float, rule: FiringRule, *, limit: int) -> list[FiredRun]:
        if limit <= 0:
            return []
        # A lock-free look first, so idle schedulers on many hosts take no locks just to find nothing.
        due = await self._read(
            lambda c: _one(
                c,
                "SELECT EXISTS (SELECT 1 FROM schedules WHERE state = 'active' AND next_run_at <= %s)",
                (now,),
            )
        )
        if not due[0]:
            return []
        return await self._db.run_write(lambda c: fire_due(c, now, rule, limit))

    async def next_due_at(self) -> float | None:
        row = await self._read(
            lambda c: _one(c, "SELECT min(next_run_at) FROM schedules WHERE state = 'active'", ())
        )
        return None if row[0] is None else float(row[0])

    async def runs(
        self, *, schedule_id: int | None = None, limit: int = 50, offset: int = 0
    ) -> list[ScheduleRun]:
        async def read(conn: Conn) -> list[ScheduleRun]:
            cursor = await conn.execute(
                _RUNS + " WHERE (%(s)s::bigint IS NULL OR r.schedule_id = %(s)s) "
                "ORDER BY r.id DESC LIMIT %(limit)s OFFSET %(offset)s",
                {"s": schedule_id, "limit": limit, "offset": offset},
            )
            return [run_from_row(row) for row in await cursor.fetchall()]

        return await self._read(read)

    async def resend(self, run_id: int) -> bool:
        return await self._db.run_write(lambda c: resend_run(c, run_id))

    async def timezone_of(self, person_id: str) -> str | None:
        async def read(conn: Conn) -> str | None:
            cursor = await conn.execute(
                "SELECT timezone FROM person_timezones WHERE person_id = %s", (person_id,)
            )
            row = await cursor.fetchone()
            return None if row is None else str(row[0])

        return await self._read(read)

    async def set_timezone(self, person_id: str, timezone: str | None) -> None:
        async def write(conn: Conn) -> None:
            if timezone is None:
                await conn.execute("DELETE FROM person_timezones WHERE person_id = %s", (person_id,))
                return
            await conn.execute(
                "INSERT INTO person_timezones(person_id, timezone, updated_at) VALUES (%s, %s, mg_now()) "
                "ON CONFLICT (person_id) DO UPDATE SET timezone = EXCLUDED.timezone, "
                "updated_at = EXCLUDED.updated_at",
                (person_id, timezone),
            )

        await self._db.run_write(write)

    async def _read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` (ONE statement) in autocommit: its own snapshot, one round trip."""
        return await self._db.run_autocommit_read(work)


async def _one(conn: Conn, query: LiteralString, params: tuple[object, ...]) -> tuple[Any, ...]:
    row = await (await conn.execute(query, params)).fetchone()
    assert row is not None  # an aggregate or EXISTS always yields one row
    return tuple(row)
