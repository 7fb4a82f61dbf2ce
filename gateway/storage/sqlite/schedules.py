"""Schedules on SQLite: ``SqliteSchedules`` implements ``ScheduleRepository`` over state.db.

Invariants (the port's, ``gateway.storage.schedules``): firing is one ``run_write`` — SQLite serialises every
writer, so two processes firing at once see each other's commits and an occurrence (unique per schedule)
fires once; the run's job and its held message are written in that transaction (``hold_message``), never
joinable by later messages; a run's task and delivery status are read from its job and its reply's outbox
row. The backend's clock (``clock``) stamps rows; the caller's ``now`` only decides what is due.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.messages import prepare
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

from .admission import hold_message

__all__ = ["SqliteSchedules"]

# In the order gateway.storage.schedule_rows reads them.
COLUMNS = (
    "id, person_id, conversation_id, platform, chat_ref, kind, spec, timezone, action, text, state, reason, "
    "next_run_at, runs, missed, last_run_at, created_at, created_by, is_admin"
)
RUN_COLUMNS = (
    "r.id, r.schedule_id, r.occurrence_at, r.fired_at, r.conversation_id, j.id, r.kind, r.missed, "
    "j.state, j.error, o.state, o.attempts, o.error, o.text"
)
_RUNS = (
    f"SELECT {RUN_COLUMNS} FROM schedule_runs r LEFT JOIN turn_jobs j ON j.schedule_run_id = r.id "
    "LEFT JOIN outbox o ON o.idempotency_key = 'turn:' || j.id"
)


def schedule_target(conn: sqlite3.Connection, conversation_id: str) -> ScheduleTarget | None:
    conversation = conn.execute(
        "SELECT person_id, ended_at FROM conversations WHERE id = ?", (conversation_id,)
    ).fetchone()
    if conversation is None:
        return None
    chat = conn.execute(
        "SELECT platform, chat_ref FROM turn_jobs WHERE conversation_id = ? AND chat_ref IS NOT NULL "
        "AND platform IS NOT NULL ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    ).fetchone()
    if chat is None:
        return None
    person = "" if conversation[0] is None else str(conversation[0])
    return ScheduleTarget(
        conversation_id, person, str(chat[0]), str(chat[1]), ended=conversation[1] is not None
    )


def create_schedule(
    conn: sqlite3.Connection, schedule: NewSchedule, max_per_person: int, now: float
) -> ScheduleRecord | None:
    target = schedule.target
    marks = ",".join("?" * len(OPEN_STATES))
    (held,) = conn.execute(
        f"SELECT count(*) FROM schedules WHERE person_id = ? AND state IN ({marks})",
        (target.person_id, *OPEN_STATES),
    ).fetchone()
    if int(held) >= max_per_person:
        return None
    cursor = conn.execute(
        "INSERT INTO schedules(person_id, conversation_id, platform, chat_ref, kind, spec, timezone, action, "
        "text, next_run_at, created_at, created_by, is_admin, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            now,
            schedule.created_by,
            int(schedule.is_admin),
            now,
        ),
    )
    return get_schedule(conn, int(cursor.lastrowid or 0))


def get_schedule(conn: sqlite3.Connection, schedule_id: int) -> ScheduleRecord | None:
    row = conn.execute(f"SELECT {COLUMNS} FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
    return None if row is None else schedule_from_row(row)


def _filters(
    person_id: str | None, conversation_id: str | None, states: Sequence[ScheduleState]
) -> tuple[str, list[object]]:
    clauses = [f"state IN ({','.join('?' * len(states))})"]
    params: list[object] = list(states)
    if person_id is not None:
        clauses.append("person_id = ?")
        params.append(person_id)
    if conversation_id is not None:
        clauses.append("conversation_id = ?")
        params.append(conversation_id)
    return " AND ".join(clauses), params


def cancel_schedule(
    conn: sqlite3.Connection, schedule_id: int, person_id: str | None, by: str, now: float
) -> ScheduleRecord | None:
    found = get_schedule(conn, schedule_id)
    if found is None or found.state not in OPEN_STATES:
        return None
    if person_id is not None and found.person_id != person_id:
        return None
    conn.execute(
        "UPDATE schedules SET state = 'cancelled', next_run_at = NULL, reason = ?, updated_at = ? "
        "WHERE id = ?",
        (f"cancelled by {by}", now, schedule_id),
    )
    waiting = conn.execute(
        "SELECT j.id FROM turn_jobs j JOIN schedule_runs r ON r.id = j.schedule_run_id "
        "WHERE r.schedule_id = ? AND j.state = 'queued'",
        (schedule_id,),
    ).fetchall()
    for (job_id,) in waiting:
        conn.execute(
            "UPDATE turn_jobs SET state = 'failed', error = 'cancelled', finished_at = ? WHERE id = ?",
            (now, job_id),
        )
        conn.execute("DELETE FROM pending_messages WHERE job_id = ?", (job_id,))
    return get_schedule(conn, schedule_id)


def fire_due(
    conn: sqlite3.Connection, now: float, rule: FiringRule, limit: int, stamp: float
) -> list[FiredRun]:
    """Claim and carry out up to ``limit`` due schedules inside the caller's write transaction."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM schedules WHERE state = 'active' AND next_run_at <= ? "
        "ORDER BY next_run_at, id LIMIT ?",
        (now, limit),
    ).fetchall()
    return [
        _carry_out(conn, schedule, rule.plan(_due(conn, schedule), now), stamp)
        for schedule in map(schedule_from_row, rows)
    ]


def _due(conn: sqlite3.Connection, schedule: ScheduleRecord) -> DueSchedule:
    conversation = conn.execute(
        "SELECT ended_at FROM conversations WHERE id = ?", (schedule.conversation_id,)
    ).fetchone()
    state = target_state(conversation is not None, conversation is not None and conversation[0] is not None)
    person = conn.execute("SELECT 1 FROM persons WHERE id = ?", (schedule.person_id,)).fetchone()
    return DueSchedule(schedule, state, person_known=person is not None)


def _carry_out(conn: sqlite3.Connection, schedule: ScheduleRecord, firing: Firing, stamp: float) -> FiredRun:
    if firing.pause is not None:
        conn.execute(
            "UPDATE schedules SET state = 'paused', reason = ?, updated_at = ? WHERE id = ?",
            (firing.pause, stamp, schedule.id),
        )
        return FiredRun(schedule.id, None, None, schedule.conversation_id, None, "paused")
    run_id = job_id = None
    if firing.occurrence_at is not None and firing.message is not None:
        run_id, job_id = _fire(conn, schedule, firing, stamp)
    done = firing.next_run_at is None
    conn.execute(
        "UPDATE schedules SET next_run_at = ?, state = ?, runs = runs + ?, missed = missed + ?, "
        "last_run_at = coalesce(?, last_run_at), reason = coalesce(?, reason), updated_at = ? WHERE id = ?",
        (
            firing.next_run_at,
            "done" if done else "active",
            int(run_id is not None),
            firing.missed,
            stamp if run_id is not None else None,
            firing.note,
            stamp,
            schedule.id,
        ),
    )
    outcome = firing_outcome(run_id is not None, done)
    return FiredRun(schedule.id, run_id, job_id, schedule.conversation_id, firing.occurrence_at, outcome)


def _fire(
    conn: sqlite3.Connection, schedule: ScheduleRecord, firing: Firing, stamp: float
) -> tuple[int | None, int | None]:
    """The run (once per occurrence) and its job with the held message; (None, None) if it fired before."""
    assert firing.occurrence_at is not None and firing.message is not None
    cursor = conn.execute(
        "INSERT OR IGNORE INTO schedule_runs(schedule_id, occurrence_at, fired_at, conversation_id, kind, "
        "missed) VALUES (?, ?, ?, ?, ?, ?)",
        (
            schedule.id,
            firing.occurrence_at,
            stamp,
            schedule.conversation_id,
            "catch_up" if firing.catch_up else "on_time",
            firing.missed,
        ),
    )
    if cursor.rowcount != 1:
        return None, None
    run_id = int(cursor.lastrowid or 0)
    job = conn.execute(
        "INSERT INTO turn_jobs(conversation_id, created_at, person_id, is_admin, platform, chat_ref, "
        "schedule_run_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            schedule.conversation_id,
            stamp,
            schedule.person_id,
            int(schedule.is_admin),
            schedule.platform,
            schedule.chat_ref,
            run_id,
        ),
    )
    job_id = int(job.lastrowid or 0)
    hold_message(conn, schedule.conversation_id, job_id, prepare(firing.message, stamp))
    return run_id, job_id


def resend_run(conn: sqlite3.Connection, run_id: int) -> bool:
    row = conn.execute(
        "SELECT o.id FROM turn_jobs j JOIN outbox o ON o.idempotency_key = 'turn:' || j.id "
        "WHERE j.schedule_run_id = ? AND o.state = 'failed'",
        (run_id,),
    ).fetchone()
    if row is None:
        return False
    conn.execute(
        "UPDATE outbox SET state = 'pending', attempts = 0, error = NULL, claimed_by = NULL, "
        "claim_expires_at = NULL WHERE id = ?",
        (row[0],),
    )
    return True


class SqliteSchedules:
    """``ScheduleRepository`` on an opened ``StateStore``."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def now(self) -> float:
        return self._clock()

    async def target(self, conversation_id: str) -> ScheduleTarget | None:
        return await self._state.run_read(lambda c: schedule_target(c, conversation_id))

    async def create(self, schedule: NewSchedule, *, max_per_person: int) -> ScheduleRecord | None:
        now = self._clock()
        return await self._state.run_write(lambda c: create_schedule(c, schedule, max_per_person, now))

    async def get(self, schedule_id: int) -> ScheduleRecord | None:
        return await self._state.run_read(lambda c: get_schedule(c, schedule_id))

    async def find(
        self,
        *,
        person_id: str | None = None,
        conversation_id: str | None = None,
        states: Sequence[ScheduleState] = SCHEDULE_STATES,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ScheduleRecord]:
        where, params = _filters(person_id, conversation_id, states)
        sql = (
            f"SELECT {COLUMNS} FROM schedules WHERE {where} "
            "ORDER BY next_run_at IS NULL, next_run_at, id DESC LIMIT ? OFFSET ?"
        )
        rows = await self._state.run_read(lambda c: c.execute(sql, (*params, limit, offset)).fetchall())
        return [schedule_from_row(row) for row in rows]

    async def count(
        self, *, person_id: str | None = None, states: Sequence[ScheduleState] = OPEN_STATES
    ) -> int:
        where, params = _filters(person_id, None, states)
        row = await self._state.run_read(
            lambda c: c.execute(f"SELECT count(*) FROM schedules WHERE {where}", params).fetchone()
        )
        return int(row[0])

    async def cancel(
        self, schedule_id: int, *, by: str, person_id: str | None = None
    ) -> ScheduleRecord | None:
        now = self._clock()
        return await self._state.run_write(lambda c: cancel_schedule(c, schedule_id, person_id, by, now))

    async def fire_due(self, now: float, rule: FiringRule, *, limit: int) -> list[FiredRun]:
        if limit <= 0 or not await self._state.run_read(lambda c: _any_due(c, now)):
            return []  # a reader first: idle schedulers of many processes never take the write lock
        return await self._state.run_write(lambda c: fire_due(c, now, rule, limit, self._clock()))

    async def next_due_at(self) -> float | None:
        row = await self._state.run_read(
            lambda c: c.execute("SELECT min(next_run_at) FROM schedules WHERE state = 'active'").fetchone()
        )
        return None if row is None or row[0] is None else float(row[0])

    async def runs(
        self, *, schedule_id: int | None = None, limit: int = 50, offset: int = 0
    ) -> list[ScheduleRun]:
        params: tuple[int, ...]
        if schedule_id is None:
            sql, params = f"{_RUNS} ORDER BY r.id DESC LIMIT ? OFFSET ?", (limit, offset)
        else:
            sql = f"{_RUNS} WHERE r.schedule_id = ? ORDER BY r.id DESC LIMIT ? OFFSET ?"
            params = (schedule_id, limit, offset)
        rows = await self._state.run_read(lambda c: c.execute(sql, params).fetchall())
        return [run_from_row(row) for row in rows]

    async def resend(self, run_id: int) -> bool:
        return await self._state.run_write(lambda c: resend_run(c, run_id))

    async def timezone_of(self, person_id: str) -> str | None:
        row = await self._state.run_read(
            lambda c: c.execute(
                "SELECT timezone FROM person_timezones WHERE person_id = ?", (person_id,)
            ).fetchone()
        )
        return None if row is None else str(row[0])

    async def set_timezone(self, person_id: str, timezone: str | None) -> None:
        now = self._clock()

        def write(conn: sqlite3.Connection) -> None:
            if timezone is None:
                conn.execute("DELETE FROM person_timezones WHERE person_id = ?", (person_id,))
                return
            conn.execute(
                "INSERT INTO person_timezones(person_id, timezone, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(person_id) DO UPDATE SET timezone = excluded.timezone, "
                "updated_at = excluded.updated_at",
                (person_id, timezone, now),
            )

        await self._state.run_write(write)


def _any_due(conn: sqlite3.Connection, now: float) -> bool:
    row = conn.execute(
        "SELECT 1 FROM schedules WHERE state = 'active' AND next_run_at <= ? LIMIT 1", (now,)
    ).fetchone()
    return row is not None
