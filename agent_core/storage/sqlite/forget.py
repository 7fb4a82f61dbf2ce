"""Forgetting on SQLite (whole conversations, or a person's turns in others'): the rows in state.db, their
entries in the search sidecar, and the bytes either file would otherwise keep.

Invariants: the sidecar's write lock is taken BEFORE the rows leave state.db and held until their index
entries are gone, and the indexer re-checks, inside its own sidecar transaction, that the messages and
segments of a batch still exist (``sidecar.index_rows``) — so a batch the indexer read before the deletion
is never written after it; windows holding a forgotten message are deleted with it. The contentless FTS5
indexes forget a row through the 'delete' command given the exact text it indexed (``searchable_text`` and
``trigram_text`` of the stored row, under the sidecar's own trigram scope), then 'optimize' merges every
segment so no old segment keeps the terms; both files delete with ``secure_delete`` (the writer connection
always has it, engine.py), so freed pages hold zeros, and a TRUNCATE checkpoint then empties each WAL,
whose old frames would otherwise still hold the text. A sidecar that cannot be used (missing, damaged,
built for another state.db) is deleted instead; the indexer rebuilds it from state.db, which no longer
holds the rows.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..forgetting import FORGOTTEN, ForgottenConversations
from .connection import is_busy
from .settings import TrigramScope
from .sidecar import (
    FTS_TABLES,
    PendingRow,
    open_sidecar,
    read_progress,
    remove_sidecar,
    searchable_text,
    trigram_text,
)
from .stub_records import as_indexed

COOLDOWN_PREFIX = "compression.cooldown/"  # cooldowns.py's key prefix
_IN_IDS = "(SELECT value FROM json_each(?))"
_CHECKPOINT_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class RemovedRows:
    """What left state.db in one forgetting transaction: the counts, and the messages as they were indexed."""

    counts: ForgottenConversations
    conversation_ids: tuple[str, ...]
    messages: tuple[PendingRow, ...]
    db_uuid: str


def delete_conversations(conn: sqlite3.Connection, conversation_ids: Collection[str]) -> RemovedRows:
    """Delete the conversations, their segments, messages and cooldowns, and unlink their usage rows;
    call inside one write transaction."""
    wanted = tuple(sorted(set(conversation_ids)))
    ids = json.dumps(wanted)
    messages = tuple(
        PendingRow(int(r[0]), str(r[1]), r[2], r[3], str(r[4]), str(r[5]))
        for r in conn.execute(
            "SELECT id, role, content, tool_name, conversation_id, session_id FROM messages "
            f"WHERE conversation_id IN {_IN_IDS} ORDER BY id",
            (ids,),
        )
    )
    usage = conn.execute(
        f"UPDATE usage_log SET conversation_id = ?, session_id = ? WHERE conversation_id IN {_IN_IDS}",
        (FORGOTTEN, FORGOTTEN, ids),
    ).rowcount
    conn.execute(f"DELETE FROM messages WHERE conversation_id IN {_IN_IDS}", (ids,))
    segments = conn.execute(f"DELETE FROM sessions WHERE conversation_id IN {_IN_IDS}", (ids,)).rowcount
    conversations = conn.execute(f"DELETE FROM conversations WHERE id IN {_IN_IDS}", (ids,)).rowcount
    conn.execute(
        "DELETE FROM meta WHERE key IN (SELECT ? || value FROM json_each(?))", (COOLDOWN_PREFIX, ids)
    )
    db_uuid = str(conn.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])
    counts = ForgottenConversations(conversations, segments, len(messages), usage)
    return RemovedRows(counts, wanted, messages, db_uuid)


# The person's user messages, each with the rest of its turn (the assistant and tool rows after it, up to the
# next user message of the segment): the reply to what they said goes with it, tool pairs stay whole.
_AUTHORED_TURNS = """
    WITH mine AS (SELECT id, session_id FROM messages WHERE author = ? AND role = 'user'),
    turns AS (SELECT mine.id AS start, mine.session_id AS segment,
        (SELECT min(n.id) FROM messages n WHERE n.session_id = mine.session_id AND n.role = 'user'
            AND n.id > mine.id) AS stop FROM mine)
    SELECT DISTINCT m.id, m.role, m.content, m.tool_name, m.conversation_id, m.session_id
    FROM turns JOIN messages m ON m.session_id = turns.segment AND m.id >= turns.start
        AND (turns.stop IS NULL OR m.id < turns.stop) AND (m.id = turns.start OR m.role != 'user')
    ORDER BY m.id"""


def delete_authored_turns(conn: sqlite3.Connection, person_id: str) -> RemovedRows:
    """Delete the person's user messages and their turns wherever they remain (conversations of others);
    call inside one write transaction."""
    messages = tuple(
        PendingRow(int(r[0]), str(r[1]), r[2], r[3], str(r[4]), str(r[5]))
        for r in conn.execute(_AUTHORED_TURNS, (person_id,))
    )
    conn.execute(f"DELETE FROM messages WHERE id IN {_IN_IDS}", (json.dumps([m.id for m in messages]),))
    db_uuid = str(conn.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])
    return RemovedRows(ForgottenConversations(messages=len(messages)), (), messages, db_uuid)


def blank_audit_texts(conn: sqlite3.Connection, person_id: str) -> int:
    """Blank the old/new texts of the person's memory audit records; call inside one write transaction."""
    return conn.execute(
        "UPDATE memory_audit SET old_text = NULL, new_text = NULL WHERE person_id = ? "
        "AND (old_text IS NOT NULL OR new_text IS NOT NULL)",
        (person_id,),
    ).rowcount


class SidecarHold:
    """The search sidecar's write lock, held across a forgetting of state.db rows; ``None`` connection when
    the sidecar cannot be used (it is then deleted after the rows are, see ``finish``)."""

    def __init__(self, path: Path, busy_timeout_ms: int, log: logging.Logger) -> None:
        self._path = path
        self._log = log
        self._conn: sqlite3.Connection | None = None
        try:
            conn = open_sidecar(path, busy_timeout_ms=busy_timeout_ms)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
                raise
            log.warning("search index %s is unusable (%s); it will be deleted and rebuilt", path, exc)
            return
        try:
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def finish(self, removed: RemovedRows) -> None:
        """Remove the rows' index entries and windows, commit, and empty the sidecar's WAL."""
        conn = self._conn
        if conn is None:
            remove_sidecar(self._path)
            return
        try:
            progress = read_progress(conn)
            if progress.db_uuid and progress.db_uuid != removed.db_uuid:
                conn.execute("ROLLBACK")
                remove_sidecar(self._path)
                return
            unindex(conn, removed.messages, progress.last_id, progress.trigram_scope)
            forget_windows(conn, removed.conversation_ids)
            forget_windows_holding(conn, [row.id for row in removed.messages])
            if removed.messages:
                for table in FTS_TABLES:
                    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        finally:
            self._conn = None
        try:
            truncate_wal(conn)
        finally:
            conn.close()

    def abandon(self) -> None:
        """Release the lock without changing the sidecar (the state.db transaction failed)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            conn.close()


def unindex(conn: sqlite3.Connection, rows: Sequence[PendingRow], last_id: int, scope: TrigramScope) -> None:
    """Delete the FTS entries of ``rows`` that the index holds (ids up to ``last_id``), with the exact texts
    ``index_rows`` gave it; call inside a sidecar write transaction."""
    indexed = as_indexed(conn, rows)  # a tool output retention already stubbed in the index
    docs = [
        (row.id, text) for row in indexed if row.id <= last_id and (text := searchable_text(row)) is not None
    ]
    trigram_docs = [(rowid, part) for rowid, text in docs if (part := trigram_text(text, scope)) is not None]
    conn.executemany("INSERT INTO fts_porter(fts_porter, rowid, body) VALUES ('delete', ?, ?)", docs)
    conn.executemany(
        "INSERT INTO fts_trigram(fts_trigram, rowid, body) VALUES ('delete', ?, ?)", trigram_docs
    )


def forget_windows(conn: sqlite3.Connection, conversation_ids: Collection[str]) -> None:
    """Delete the conversations' windows, their members and vectors, participants and open segments."""
    ids = json.dumps(sorted(conversation_ids))
    windows = f"(SELECT id FROM windows WHERE conversation_id IN {_IN_IDS})"
    conn.execute(f"DELETE FROM window_members WHERE window_id IN {windows}", (ids,))
    conn.execute(f"DELETE FROM window_vectors WHERE window_id IN {windows}", (ids,))
    conn.execute(f"DELETE FROM windows WHERE conversation_id IN {_IN_IDS}", (ids,))
    conn.execute(f"DELETE FROM participants WHERE conversation_id IN {_IN_IDS}", (ids,))
    conn.execute(f"DELETE FROM open_segments WHERE conversation_id IN {_IN_IDS}", (ids,))


def forget_windows_holding(conn: sqlite3.Connection, message_ids: Sequence[int]) -> None:
    """Delete the windows (members, vectors) holding any of the messages; the next batch of their segment
    windows what remains."""
    ids = json.dumps(list(message_ids))
    holding = f"SELECT DISTINCT window_id FROM window_members WHERE message_id IN {_IN_IDS}"
    doomed = [int(r[0]) for r in conn.execute(holding, (ids,))]
    if not doomed:
        return
    window_ids = json.dumps(doomed)
    conn.execute(f"DELETE FROM window_members WHERE window_id IN {_IN_IDS}", (window_ids,))
    conn.execute(f"DELETE FROM window_vectors WHERE window_id IN {_IN_IDS}", (window_ids,))
    conn.execute(f"DELETE FROM windows WHERE id IN {_IN_IDS}", (window_ids,))


def truncate_wal(conn: sqlite3.Connection) -> bool:
    """Copy the WAL into the database and cut it to zero bytes (outside any transaction); False when a
    reader kept it busy through every attempt (its frames then still hold old pages until the next one)."""
    for _ in range(_CHECKPOINT_ATTEMPTS):
        try:
            row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            continue
        if row is None or int(row[0]) == 0:
            return True
    return False
