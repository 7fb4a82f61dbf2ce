"""The search sidecar ``search.db``: contentless FTS5 indexes of message text plus the indexed-up-to mark.

Invariants: the sidecar is derived data — message text lives only in state.db's ``messages`` and FTS
rowid = ``messages.id``; index rows and the ``progress`` mark (last message id indexed, and the identity
of the state.db it describes) change in the same transaction, so a crash never leaves them disagreeing;
the mark never passes ``committed_watermark`` (no message below it can still appear);
a sidecar that is missing, corrupt, built for another state.db or ahead of it is rebuilt, never trusted.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .connection import connect
from .settings import TrigramScope
from .window_store import WINDOW_DDL, WindowWrites, apply_windows, clear_windows

SIDECAR_DDL = (
    """CREATE TABLE IF NOT EXISTS progress (
        id INTEGER PRIMARY KEY CHECK (id = 1), db_uuid TEXT NOT NULL, last_id INTEGER NOT NULL,
        trigram_scope TEXT NOT NULL DEFAULT 'all')""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts_porter USING fts5(
        body, content='', tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts_trigram USING fts5(
        body, content='', tokenize='trigram', detail='full')""",
)
# Version 2 added the search windows (window_store.py); a sidecar of version 1 is re-indexed so its
# windows cover every message.
SIDECAR_FORMAT = 2
_FORMAT_DDL = "CREATE TABLE IF NOT EXISTS sidecar_format (version INTEGER NOT NULL)"
FTS_TABLES = ("fts_porter", "fts_trigram")
LiveRows = Callable[[Collection[int], Collection[str]], "Alive"]
"""Which of the given message ids and segment ids still exist in state.db (read when it is called)."""
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@dataclass(frozen=True, slots=True)
class Alive:
    """The message and segment ids of a batch that still exist in state.db."""

    message_ids: frozenset[int]
    segment_ids: frozenset[str]

    def windows(self, writes: WindowWrites) -> WindowWrites:
        """``writes`` without the segments or windows that name something forgotten."""
        return WindowWrites(
            tuple(
                replace(
                    change, windows=tuple(w for w in change.windows if set(w.message_ids) <= self.message_ids)
                )
                for change in writes.segments
                if change.segment_id in self.segment_ids
            )
        )


def _message_ids(rows: Sequence[PendingRow], windows: WindowWrites | None) -> set[int]:
    ids = {row.id for row in rows}
    for change in windows.segments if windows is not None else ():
        ids.update(i for window in change.windows for i in window.message_ids)
    return ids


@dataclass(frozen=True, slots=True)
class Progress:
    """How far the sidecar has indexed, and for which state.db."""

    db_uuid: str
    last_id: int
    trigram_scope: TrigramScope = "all"


@dataclass(frozen=True, slots=True)
class PendingRow:
    """One message row as the indexer reads it from state.db."""

    id: int
    role: str
    content: str | None
    tool_name: str | None
    conversation_id: str = ""
    segment_id: str = ""


def searchable_text(row: PendingRow) -> str | None:
    """The text a message is found by: its content, plus the tool's name on tool messages."""
    parts = [row.content] if row.content else []
    if row.tool_name and row.role == "tool":
        parts.append(row.tool_name)
    return "\n".join(parts) if parts else None


def trigram_text(text: str, scope: TrigramScope) -> str | None:
    """What the trigram index gets: all the text, or only its non-ASCII runs (CJK and the like).

    A trailing space gives the last word of a run a trigram of its own, so a 1-2 character prefix
    expanded through the vocabulary also finds a word that ends the text.
    """
    if scope == "all":
        return text + " "
    runs = _NON_ASCII_RUN.findall(text)
    return "\n".join(runs) + " " if runs else None


def committed_watermark(state: sqlite3.Connection) -> int:
    """How far the index may advance: no message with an id at or below this can still commit.

    The port's ordering rule (agent_core/storage/search_index.py): the progress mark is a watermark
    below which no uncommitted row can later appear. SQLite serialises writers and assigns AUTOINCREMENT
    ids inside the write transaction, so the largest id in the ``sqlite_sequence`` a reader sees was
    assigned by a committed transaction, and every smaller id is committed or rolled back for good (ids
    become visible in commit order). A backend with concurrent writers cannot use the largest id it sees;
    it needs a per-row commit sequence assigned under a lock, or a transaction-id horizon.
    """
    row = state.execute("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").fetchone()
    return 0 if row is None else int(row[0])


def open_sidecar(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """Open (creating if needed) the sidecar in WAL mode with its tables present."""
    conn = connect(path, busy_timeout_ms=busy_timeout_ms)
    try:
        if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            with contextlib.suppress(sqlite3.OperationalError):
                conn.execute("PRAGMA journal_mode=WAL")
        present = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"progress", "sidecar_format", "semantic_progress"} <= present:
            conn.execute("BEGIN IMMEDIATE")
            try:
                fresh = "progress" not in present
                for statement in (*SIDECAR_DDL, *WINDOW_DDL, _FORMAT_DDL):
                    conn.execute(statement)
                if fresh:  # empty, so every message it holds (none) has its windows
                    conn.execute("INSERT INTO sidecar_format(version) VALUES (?)", (SIDECAR_FORMAT,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    except BaseException:
        conn.close()
        raise
    return conn


def claim_if_new(conn: sqlite3.Connection, db_uuid: str, scope: TrigramScope) -> None:
    """Mark a sidecar that has no progress yet as the (empty, hence truthful) index of ``db_uuid``."""
    conn.execute(
        "INSERT OR IGNORE INTO progress(id, db_uuid, last_id, trigram_scope) VALUES (1, ?, 0, ?)",
        (db_uuid, scope),
    )


def remove_sidecar(path: Path) -> None:
    """Delete the sidecar and its WAL files so it can be rebuilt from scratch."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


def format_version(conn: sqlite3.Connection) -> int:
    """The sidecar's format (1 for a sidecar made before windows existed)."""
    row = conn.execute("SELECT max(version) FROM sidecar_format").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 1


def read_progress(conn: sqlite3.Connection, schema: str = "main") -> Progress:
    row = conn.execute(
        f"SELECT db_uuid, last_id, trigram_scope FROM {schema}.progress WHERE id = 1"
    ).fetchone()
    if row is None:
        return Progress("", 0)
    return Progress(str(row[0]), int(row[1]), "non_ascii" if row[2] == "non_ascii" else "all")


def reset(conn: sqlite3.Connection, db_uuid: str, scope: TrigramScope) -> None:
    """Empty both indexes and restart the mark at 0 for ``db_uuid``, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
        clear_windows(conn)
        # Stubs retention recorded for the old index (tool_output_stubs.py) describe nothing any more.
        conn.execute("DROP TABLE IF EXISTS retention_stubs")
        conn.execute("DELETE FROM sidecar_format")
        conn.execute("INSERT INTO sidecar_format(version) VALUES (?)", (SIDECAR_FORMAT,))
        _set_progress(conn, db_uuid, 0)
        conn.execute("UPDATE progress SET trigram_scope = ? WHERE id = 1", (scope,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def index_rows(
    conn: sqlite3.Connection,
    rows: Sequence[PendingRow],
    db_uuid: str,
    scope: TrigramScope,
    windows: WindowWrites | None = None,
    live: LiveRows | None = None,
) -> None:
    """Add ``rows`` (ascending ids, all newer than the mark) to both indexes, store the windows they
    complete, and advance the mark, in one transaction.

    ``live``: asked inside the transaction which of the rows (and of the windows' turns) still exist in
    state.db; rows and windows of the others (forgotten since they were read, forget.py) are left out."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        kept = list(rows)
        if live is not None:
            alive = live(_message_ids(rows, windows), {row.segment_id for row in rows})
            kept = [row for row in rows if row.id in alive.message_ids]
            if windows is not None:
                windows = alive.windows(windows)
        docs = [(row.id, text) for row in kept if (text := searchable_text(row)) is not None]
        trigram_docs = [
            (rowid, part) for rowid, text in docs if (part := trigram_text(text, scope)) is not None
        ]
        conn.executemany("INSERT INTO fts_porter(rowid, body) VALUES (?, ?)", docs)
        conn.executemany("INSERT INTO fts_trigram(rowid, body) VALUES (?, ?)", trigram_docs)
        if windows is not None:
            apply_windows(conn, windows)
        _set_progress(conn, db_uuid, rows[-1].id)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _set_progress(conn: sqlite3.Connection, db_uuid: str, last_id: int) -> None:
    conn.execute(
        "INSERT INTO progress(id, db_uuid, last_id) VALUES (1, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET db_uuid = excluded.db_uuid, last_id = excluded.last_id",
        (db_uuid, last_id),
    )
