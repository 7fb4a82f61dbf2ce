"""Search windows on PostgreSQL: the tables, and the builder that windows new messages off the append path.

Invariants: windows follow the port's rules (agent_core/storage/search_windows.py) exactly as on SQLite;
one builder writes at a time across every host (each batch transaction first takes
``pg_try_advisory_xact_lock(WINDOW_LOCK)`` and does nothing without it), so window ids are drawn and
committed in one order; a batch reads only messages at or below a *settled* position — one below which no
transaction can still commit a message (``Horizon``) — and stores its windows, participants and the
``scanned_up_to`` mark in one transaction, so a crash never leaves them disagreeing and a late-committing
message is never skipped. Appends are untouched: nothing here runs in, or waits on, an INSERT.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, LiteralString

from ..search_windows import (
    WINDOWED_ROLES,
    NewWindow,
    StoredTail,
    Turn,
    name_words,
    plan_windows,
    speaker_label,
    windowable,
)
from .engine import Conn

WINDOW_LOCK: Final = 0x6D6777  # "mgw": one window builder at a time in a database
EMBED_LOCK: Final = 0x6D6765  # "mge": one embedder reads a batch at a time in a database
# A worker leads building (or embedding) until it has not done so for this long; then any worker may.
LEAD_S: Final = 5.0

WINDOW_DDL: tuple[LiteralString, ...] = (
    # A window's turns are contiguous in its segment, so "the windows holding message m" are the last one or
    # two of m's segment starting at or before m (one index range read; no row per member to write).
    """CREATE TABLE search_windows (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, conversation_id text NOT NULL,
        segment_id text NOT NULL, position integer NOT NULL, first_id bigint NOT NULL,
        last_id bigint NOT NULL, message_ids bigint[] NOT NULL, speakers text[] NOT NULL,
        digest text NOT NULL)""",
    "CREATE INDEX search_windows_segment ON search_windows(segment_id, first_id)",
    """CREATE TABLE search_participants (
        name text NOT NULL, conversation_id text NOT NULL, PRIMARY KEY (name, conversation_id))""",
    "CREATE TABLE search_open_segments (segment_id text PRIMARY KEY, conversation_id text NOT NULL)",
    """CREATE TABLE search_window_vectors (
        window_id bigint PRIMARY KEY, digest text NOT NULL, vector bytea NOT NULL)""",
    # builder/embedder: the worker that last did that work, and when (a standby takes over after LEAD_S).
    """CREATE TABLE search_window_progress (
        id integer PRIMARY KEY CHECK (id = 1), scanned_up_to bigint NOT NULL, model text NOT NULL,
        generation integer NOT NULL, embedded_up_to bigint NOT NULL,
        builder text NOT NULL DEFAULT '', builder_seen double precision NOT NULL DEFAULT 0,
        embedder text NOT NULL DEFAULT '', embedder_seen double precision NOT NULL DEFAULT 0)""",
    "INSERT INTO search_window_progress(id, scanned_up_to, model, generation, embedded_up_to)"
    " VALUES (1, 0, '', 1, 0)",
)


@dataclass(slots=True)
class Horizon:
    """The settled message position, advanced without ever waiting for writers to pause.

    Each ``advance`` reads the newest id drawn and which transactions hold the write lock on ``messages``
    (every transaction that drew an id holds it until it ends, and takes it before drawing); a reading
    becomes settled once none of the transactions it saw is still running, however busy the table is.
    """

    settled: int = 0
    candidates: list[tuple[int, frozenset[str]]] = field(default_factory=list)

    async def advance(self, conn: Conn) -> int:
        row = await (
            await conn.execute(
                "SELECT coalesce(pg_sequence_last_value("
                "pg_get_serial_sequence('messages', 'id')::regclass), 0)"
            )
        ).fetchone()
        drawn = int(row[0]) if row is not None else 0
        cursor = await conn.execute(
            "SELECT virtualtransaction FROM pg_locks WHERE relation = 'messages'::regclass "
            "AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid()"
        )
        writers = frozenset(str(r[0]) for r in await cursor.fetchall())
        self.candidates.append((drawn, writers))
        still: list[tuple[int, frozenset[str]]] = []
        for value, seen in self.candidates:
            if seen & writers and value > self.settled:
                still.append((value, seen & writers))
            else:
                self.settled = max(self.settled, value)
        self.candidates = still[-64:]
        return self.settled


@dataclass(frozen=True, slots=True)
class _Segment:
    conversation_id: str
    person_id: str | None
    display_name: str | None
    ended: bool


async def build_batch(
    conn: Conn, up_to: int | Horizon, limit: int, *, worker: str | None = None
) -> tuple[int, int] | None:
    """Window the messages after the mark, at most ``limit`` of them and none above ``up_to`` (a position,
    or a ``Horizon`` advanced once the lock is held); ``(mark before, mark after)``.

    Runs inside the caller's write transaction; None when another builder holds the lock or, for a
    background ``worker``, when another worker leads (so a standby pays one short transaction per call,
    never a horizon read).
    """
    if not await _locked(conn, WINDOW_LOCK):
        return None
    if worker is not None and not await lead(conn, "builder", worker):
        return None
    if isinstance(up_to, Horizon):
        up_to = await up_to.advance(conn)
    row = await (
        await conn.execute("SELECT scanned_up_to FROM search_window_progress WHERE id = 1")
    ).fetchone()
    mark = int(row[0]) if row is not None else 0
    if up_to <= mark:
        return mark, mark
    cursor = await conn.execute(
        "SELECT id, segment_id, role, content FROM messages WHERE id > %s AND id <= %s ORDER BY id LIMIT %s",
        (mark, up_to, limit),
    )
    rows = await cursor.fetchall()
    new_mark = int(rows[-1][0]) if len(rows) == limit else up_to
    segments = list(dict.fromkeys(str(r[1]) for r in rows if windowable(str(r[2]), r[3])))
    await window_segments(conn, segments, new_mark)
    await conn.execute("UPDATE search_window_progress SET scanned_up_to = %s WHERE id = 1", (new_mark,))
    return mark, new_mark


async def close_ended_segments(conn: Conn, limit: int) -> int:
    """Store the last (short) window of segments that ended after their turns were windowed; how many."""
    if not await _locked(conn, WINDOW_LOCK):
        return 0
    cursor = await conn.execute(
        "SELECT o.segment_id FROM search_open_segments AS o JOIN segments AS s ON s.id = o.segment_id "
        "WHERE s.ended_at IS NOT NULL LIMIT %s",
        (limit,),
    )
    ended = [str(r[0]) for r in await cursor.fetchall()]
    if ended:
        row = await (
            await conn.execute("SELECT scanned_up_to FROM search_window_progress WHERE id = 1")
        ).fetchone()
        await window_segments(conn, ended, int(row[0]) if row is not None else 0)
    return len(ended)


async def window_segments(conn: Conn, segment_ids: Sequence[str], up_to: int) -> None:
    """Bring the windows of ``segment_ids`` up to date with their turns at or below ``up_to``."""
    if not segment_ids:
        return
    infos = await _segments(conn, segment_ids)
    for segment_id in segment_ids:
        info = infos.get(segment_id)
        if info is None:
            continue
        tail = await _stored_tail(conn, segment_id)
        turns = await _turns(conn, info, segment_id, tail.message_ids[0] if tail else 0, up_to)
        plan = plan_windows(tail, turns, ended=info.ended)
        if plan.drop_window_id is not None:
            await drop_window(conn, plan.drop_window_id)
        for window in plan.windows:
            await _insert(conn, info.conversation_id, segment_id, window)
        names = list(dict.fromkeys(w for t in turns for w in name_words(t.speaker)))
        if names:
            await conn.execute(
                "INSERT INTO search_participants(name, conversation_id) "
                "SELECT unnest(%s::text[]), %s ON CONFLICT DO NOTHING",
                (names, info.conversation_id),
            )
        if plan.open_tail:
            await conn.execute(
                "INSERT INTO search_open_segments(segment_id, conversation_id) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING",
                (segment_id, info.conversation_id),
            )
        else:
            await conn.execute("DELETE FROM search_open_segments WHERE segment_id = %s", (segment_id,))


async def drop_window(conn: Conn, window_id: int) -> None:
    await conn.execute("DELETE FROM search_window_vectors WHERE window_id = %s", (window_id,))
    await conn.execute("DELETE FROM search_windows WHERE id = %s", (window_id,))


async def lead(conn: Conn, role: LiteralString, worker: str) -> bool:
    """Whether ``worker`` leads ``role`` (``builder``/``embedder``): it did last, or the one who did has been
    silent for ``LEAD_S``; a leader's visit is recorded. Call holding that role's advisory lock."""
    row = await (
        await conn.execute(
            f"UPDATE search_window_progress SET {role} = %s, {role}_seen = mg_now() "
            f"WHERE id = 1 AND ({role} = %s OR {role}_seen < mg_now() - %s) RETURNING 1",
            (worker, worker, LEAD_S),
        )
    ).fetchone()
    return row is not None


async def _locked(conn: Conn, key: int) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,))).fetchone()
    return bool(row and row[0])


async def _insert(conn: Conn, conversation_id: str, segment_id: str, window: NewWindow) -> None:
    ids = list(window.message_ids)
    await conn.execute(
        "INSERT INTO search_windows(conversation_id, segment_id, position, first_id, last_id, message_ids, "
        "speakers, digest) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            conversation_id,
            segment_id,
            window.position,
            ids[0],
            ids[-1],
            ids,
            [turn.speaker for turn in window.turns],
            window.digest,
        ),
    )


async def _segments(conn: Conn, segment_ids: Sequence[str]) -> dict[str, _Segment]:
    cursor = await conn.execute(
        "SELECT id, conversation_id, person_id, display_name, ended_at FROM segments WHERE id = ANY(%s)",
        (list(segment_ids),),
    )
    return {str(r[0]): _Segment(str(r[1]), r[2], r[3], r[4] is not None) for r in await cursor.fetchall()}


async def _stored_tail(conn: Conn, segment_id: str) -> StoredTail | None:
    row = await (
        await conn.execute(
            "SELECT id, position, message_ids FROM search_windows WHERE segment_id = %s "
            "ORDER BY first_id DESC LIMIT 1",
            (segment_id,),
        )
    ).fetchone()
    return None if row is None else StoredTail(int(row[0]), int(row[1]), tuple(int(i) for i in row[2]))


async def _turns(conn: Conn, info: _Segment, segment_id: str, from_id: int, up_to: int) -> list[Turn]:
    cursor = await conn.execute(
        "SELECT id, role, content, author FROM messages WHERE conversation_id = %s AND segment_id = %s "
        "AND id >= %s AND id <= %s AND role = ANY(%s) ORDER BY id",
        (info.conversation_id, segment_id, from_id, up_to, list(WINDOWED_ROLES)),
    )
    return [
        Turn(int(r[0]), speaker_label(str(r[1]), r[3], info.person_id, info.display_name), str(r[2]))
        for r in await cursor.fetchall()
        if windowable(str(r[1]), r[2])
    ]
