"""Search windows in the sidecar: built with the full-text index, embedded later, read by searches.

Invariants: windows are written in the same sidecar transaction as the full-text rows and progress mark
of the batch that completed them (``apply_windows`` inside ``sidecar.index_rows``), so windows never cover
a message the mark does not; the turns of a window are read from state.db at or below the batch's last id
(the watermark) before that transaction begins; window ids are never reused (AUTOINCREMENT), and a vector
is stored for a window id with the digest of the text it embedded, under a ``generation`` that a rebuild or
a model change moves, so a process's in-memory vectors (``VectorMatrix``) know when to start over.
The rules that decide windows are the port's (agent_core/storage/search_windows.py); this module only
carries them out in SQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from ..search_windows import (
    WINDOWED_ROLES,
    NewWindow,
    StoredTail,
    Turn,
    name_words,
    plan_windows,
    speaker_label,
    text_digest,
    window_text,
    windowable,
)

WINDOW_DDL = (
    """CREATE TABLE IF NOT EXISTS windows (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, segment_id TEXT NOT NULL,
        position INTEGER NOT NULL, message_ids TEXT NOT NULL, speakers TEXT NOT NULL,
        digest TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS windows_segment ON windows(segment_id, position)",
    """CREATE TABLE IF NOT EXISTS window_members (
        message_id INTEGER NOT NULL, window_id INTEGER NOT NULL, PRIMARY KEY (message_id, window_id))
        WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS participants (
        name TEXT NOT NULL, conversation_id TEXT NOT NULL, PRIMARY KEY (name, conversation_id))
        WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS open_segments (
        segment_id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS window_vectors (
        window_id INTEGER PRIMARY KEY, digest TEXT NOT NULL, vector BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS semantic_progress (
        id INTEGER PRIMARY KEY CHECK (id = 1), model TEXT NOT NULL, generation INTEGER NOT NULL,
        embedded_up_to INTEGER NOT NULL)""",
)
WINDOW_TABLES = ("windows", "window_members", "participants", "open_segments", "window_vectors")


@dataclass(frozen=True, slots=True)
class SegmentWindows:
    """One segment's window changes, read from state.db before the sidecar transaction."""

    conversation_id: str
    segment_id: str
    drop_window_id: int | None
    windows: tuple[NewWindow, ...]
    open_tail: bool
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WindowWrites:
    """Every window change of one indexing batch."""

    segments: tuple[SegmentWindows, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    conversation_id: str
    person_id: str | None
    display_name: str | None
    ended: bool


def plan_batch(
    state: sqlite3.Connection, sidecar: sqlite3.Connection, segments: Iterable[str], up_to: int
) -> WindowWrites:
    """The window changes for ``segments`` given every turn at or below ``up_to`` (reads only)."""
    ids = list(dict.fromkeys(segments))
    if not ids:
        return WindowWrites()
    infos = _segment_infos(state, ids)
    changes = []
    for segment_id in ids:
        info = infos.get(segment_id)
        if info is None:
            continue
        tail = _stored_tail(sidecar, segment_id)
        turns = _turns(state, info, segment_id, tail.message_ids[0] if tail else 0, up_to)
        plan = plan_windows(tail, turns, ended=info.ended)
        names = tuple(dict.fromkeys(w for t in turns for w in name_words(t.speaker)))
        changes.append(
            SegmentWindows(
                info.conversation_id, segment_id, plan.drop_window_id, plan.windows, plan.open_tail, names
            )
        )
    return WindowWrites(tuple(changes))


def apply_windows(conn: sqlite3.Connection, writes: WindowWrites) -> None:
    """Store ``writes``; call inside the sidecar transaction of the batch they belong to."""
    for change in writes.segments:
        if change.drop_window_id is not None:
            drop_window(conn, change.drop_window_id)
        for window in change.windows:
            cursor = conn.execute(
                "INSERT INTO windows(conversation_id, segment_id, position, message_ids, speakers, digest) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    change.conversation_id,
                    change.segment_id,
                    window.position,
                    json.dumps(window.message_ids),
                    json.dumps([turn.speaker for turn in window.turns], ensure_ascii=False),
                    window.digest,
                ),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO window_members(message_id, window_id) VALUES (?, ?)",
                [(message_id, cursor.lastrowid) for message_id in window.message_ids],
            )
        conn.executemany(
            "INSERT OR IGNORE INTO participants(name, conversation_id) VALUES (?, ?)",
            [(name, change.conversation_id) for name in change.names],
        )
        if change.open_tail:
            conn.execute(
                "INSERT OR IGNORE INTO open_segments(segment_id, conversation_id) VALUES (?, ?)",
                (change.segment_id, change.conversation_id),
            )
        else:
            conn.execute("DELETE FROM open_segments WHERE segment_id = ?", (change.segment_id,))


def store_windows(
    conn: sqlite3.Connection,
    writes: WindowWrites,
    live: Callable[[WindowWrites], WindowWrites] | None = None,
) -> None:
    """Store ``writes`` in a transaction of their own (segments that ended after their last batch);
    ``live``, asked inside the transaction, leaves out what was forgotten since (``sidecar.index_rows``)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if live is not None:
            writes = live(writes)
        apply_windows(conn, writes)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def drop_window(conn: sqlite3.Connection, window_id: int) -> None:
    conn.execute("DELETE FROM window_members WHERE window_id = ?", (window_id,))
    conn.execute("DELETE FROM window_vectors WHERE window_id = ?", (window_id,))
    conn.execute("DELETE FROM windows WHERE id = ?", (window_id,))


def live_ids(
    state: sqlite3.Connection, message_ids: Collection[int], segment_ids: Collection[str]
) -> tuple[frozenset[int], frozenset[str]]:
    """Which of the messages and segments exist in state.db now (a forgotten one does not)."""
    messages = json.dumps(sorted(message_ids))
    segments = json.dumps(sorted(segment_ids))
    found = state.execute("SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?))", (messages,))
    alive = frozenset(int(row[0]) for row in found.fetchall())
    cursor = state.execute(
        "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?))", (segments,)
    )
    return alive, frozenset(str(row[0]) for row in cursor.fetchall())


def ended_open_segments(state: sqlite3.Connection, sidecar: sqlite3.Connection, limit: int) -> list[str]:
    """Segments with turns in no window yet whose segment has ended since (their last window is due)."""
    open_ids = [str(r[0]) for r in sidecar.execute("SELECT segment_id FROM open_segments LIMIT ?", (limit,))]
    if not open_ids:
        return []
    cursor = state.execute(
        "SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND ended_at IS NOT NULL",
        (json.dumps(open_ids),),
    )
    return [str(row[0]) for row in cursor.fetchall()]


def clear_windows(conn: sqlite3.Connection) -> None:
    """Empty every window table (inside a reset's transaction); vectors go with their windows."""
    for table in WINDOW_TABLES:
        conn.execute(f"DELETE FROM {table}")
    conn.execute("UPDATE semantic_progress SET generation = generation + 1, embedded_up_to = 0")


def _segment_infos(state: sqlite3.Connection, segment_ids: Sequence[str]) -> dict[str, SegmentInfo]:
    cursor = state.execute(
        "SELECT id, conversation_id, person_id, display_name, ended_at FROM sessions "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(segment_ids)),),
    )
    return {str(r[0]): SegmentInfo(str(r[1]), r[2], r[3], r[4] is not None) for r in cursor.fetchall()}


def _stored_tail(sidecar: sqlite3.Connection, segment_id: str) -> StoredTail | None:
    row = sidecar.execute(
        "SELECT id, position, message_ids FROM windows WHERE segment_id = ? ORDER BY position DESC LIMIT 1",
        (segment_id,),
    ).fetchone()
    if row is None:
        return None
    return StoredTail(int(row[0]), int(row[1]), tuple(int(i) for i in json.loads(row[2])))


def _turns(
    state: sqlite3.Connection, info: SegmentInfo, segment_id: str, from_id: int, up_to: int
) -> list[Turn]:
    roles = ", ".join(f"'{role}'" for role in WINDOWED_ROLES)
    cursor = state.execute(
        "SELECT id, role, content, author FROM messages WHERE conversation_id = ? AND session_id = ? "
        f"AND id >= ? AND id <= ? AND role IN ({roles}) ORDER BY id",
        (info.conversation_id, segment_id, from_id, up_to),
    )
    return [
        Turn(int(r[0]), speaker_label(str(r[1]), r[3], info.person_id, info.display_name), str(r[2]))
        for r in cursor.fetchall()
        if windowable(str(r[1]), r[2])
    ]


# -- embedding: the windows that still need a vector, and storing vectors ---------------------------


@dataclass(frozen=True, slots=True)
class PendingWindow:
    """A window waiting for its vector, with the text the embedder reads."""

    id: int
    text: str
    digest: str


def semantic_progress(conn: sqlite3.Connection, schema: str = "main") -> tuple[str, int, int] | None:
    """``(model, generation, embedded_up_to)`` of the sidecar, or None before anything was embedded."""
    row = conn.execute(
        f"SELECT model, generation, embedded_up_to FROM {schema}.semantic_progress WHERE id = 1"
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def claim_model(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """Make ``model`` the sidecar's model, dropping vectors of another one; ``(generation, embedded_up_to)``.

    Call inside a sidecar write transaction.
    """
    current = semantic_progress(conn)
    if current is None:
        conn.execute(
            "INSERT INTO semantic_progress(id, model, generation, embedded_up_to) VALUES (1, ?, 1, 0)",
            (model,),
        )
        return 1, 0
    if current[0] != model:
        conn.execute("DELETE FROM window_vectors")
        conn.execute(
            "UPDATE semantic_progress SET model = ?, generation = generation + 1, embedded_up_to = 0",
            (model,),
        )
        return current[1] + 1, 0
    return current[1], current[2]


def forget_vectors(conn: sqlite3.Connection) -> None:
    """Drop every vector so the windows are embedded again (inside a sidecar write transaction)."""
    conn.execute("DELETE FROM window_vectors")
    conn.execute("UPDATE semantic_progress SET generation = generation + 1, embedded_up_to = 0")


def pending_windows(
    state: sqlite3.Connection, sidecar: sqlite3.Connection, after_id: int, limit: int
) -> list[PendingWindow]:
    """The next ``limit`` windows above ``after_id`` with their texts (turn texts read from state.db)."""
    rows = sidecar.execute(
        "SELECT id, message_ids, speakers FROM windows WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
    ).fetchall()
    ids = [int(i) for row in rows for i in json.loads(row[1])]
    texts = {
        int(r[0]): str(r[1] or "")
        for r in state.execute(
            "SELECT id, content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
    }
    pending = []
    for window_id, message_ids, speakers in rows:
        turns = [
            Turn(int(i), str(s), texts.get(int(i), ""))
            for i, s in zip(json.loads(message_ids), json.loads(speakers), strict=False)
        ]
        text = window_text(turns)
        pending.append(PendingWindow(int(window_id), text, text_digest(text)))
    return pending


def store_vectors(
    conn: sqlite3.Connection, generation: int, vectors: Sequence[tuple[int, str, bytes]], up_to: int
) -> bool:
    """Store ``(window_id, digest, vector)`` rows and move the mark to ``up_to``, unless a rebuild or another
    embedder moved the generation meanwhile (False: nothing stored). Runs its own transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = semantic_progress(conn)
        if current is None or current[1] != generation:
            conn.execute("ROLLBACK")
            return False
        live = {
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM windows WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps([v[0] for v in vectors]),),
            )
        }
        conn.executemany(
            "INSERT OR REPLACE INTO window_vectors(window_id, digest, vector) VALUES (?, ?, ?)",
            [v for v in vectors if v[0] in live],
        )
        conn.execute("UPDATE semantic_progress SET embedded_up_to = max(embedded_up_to, ?)", (up_to,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True
