"""Stubbing old tool outputs on SQLite: the message text in state.db and its terms in the contentless search
sidecar replaced together, so search stops finding the removed words.

Invariants: the sidecar's FTS5 tables are contentless, so a row's terms can only be removed by an FTS5
``delete`` given exactly the text that was indexed; hence only messages the sidecar has indexed (ids at or
below its progress mark, read under the sidecar's write lock, so the indexer cannot move it meanwhile) are
stubbed, and the two files change in this order, each step one transaction:
1. sidecar: the old terms deleted, the stub's indexed, and the pending stub recorded in ``retention_stubs``;
2. under the sidecar's write lock again: state.db's rows set to their recorded stubs, then the records
   dropped — a crash between 1 and 2 (or within 2) leaves records that the next call applies first, so
   state.db always ends up holding exactly the text the sidecar indexed.
Forgetting a conversation (forget.py) deletes the recorded stub's terms, not state.db's text, for a
message with a record (stub_records.py). A sidecar reset (a rebuild) drops ``retention_stubs`` with
everything else (sidecar.reset), and the records are re-read under the lock before state.db changes, so a
rebuild never leaves state.db holding a stub whose old text the rebuilt index still has.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass

from ..tool_output_stubs import TOOL_OUTPUT_FLOOR_CHARS, tool_output_stub
from .settings import TrigramScope
from .sidecar import PendingRow, open_sidecar, read_progress, searchable_text, trigram_text
from .store import StateStore
from .stub_records import STUBS_DDL

_BUSY_TIMEOUT_MS = 5_000


@dataclass(frozen=True, slots=True)
class _Output:
    id: int
    content: str
    tool_name: str | None


class SqliteToolOutputStubs:
    """Replaces large old tool outputs by stubs in state.db and in its search sidecar."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def stub(self, *, older_than_s: float, min_chars: int, limit: int, day: str) -> int:
        """Stub up to ``limit`` indexed tool outputs longer than ``min_chars`` older than ``older_than_s``;
        returns how many state.db rows were stubbed (records left by an interrupted call included)."""
        sidecar = await asyncio.to_thread(
            open_sidecar, self._state.paths.sidecar, busy_timeout_ms=_BUSY_TIMEOUT_MS
        )
        try:
            await self._index_stubs(sidecar, time.time() - older_than_s, min_chars, limit, day)
            return await self._apply_recorded(sidecar)
        finally:
            sidecar.close()

    async def _index_stubs(
        self, sidecar: sqlite3.Connection, before: float, min_chars: int, limit: int, day: str
    ) -> None:
        await asyncio.to_thread(_begin, sidecar)
        try:
            progress = read_progress(sidecar)
            db_uuid = await self._state.run_read(_db_uuid)
            outputs: list[_Output] = []
            # Another database's index, or one being rebuilt, is left alone: a later run stubs.
            if progress.db_uuid == db_uuid and progress.last_id > 0:
                outputs = await self._state.run_read(
                    lambda c: _old_outputs(c, progress.last_id, before, min_chars, limit)
                )
            if outputs:
                await asyncio.to_thread(_swap_terms, sidecar, outputs, day, progress.trigram_scope)
        except BaseException:
            await asyncio.to_thread(_end, sidecar, commit=False)
            raise
        await asyncio.to_thread(_end, sidecar, commit=True)

    async def _apply_recorded(self, sidecar: sqlite3.Connection) -> int:
        await asyncio.to_thread(_begin, sidecar)
        try:
            rows = sidecar.execute("SELECT message_id, stub FROM retention_stubs").fetchall()
            recorded = [(int(r[0]), str(r[1])) for r in rows]
            stubbed = await self._state.run_write(lambda c: _set_stubs(c, recorded)) if recorded else 0
            sidecar.execute("DELETE FROM retention_stubs")
        except BaseException:
            await asyncio.to_thread(_end, sidecar, commit=False)
            raise
        await asyncio.to_thread(_end, sidecar, commit=True)
        return stubbed


def _begin(sidecar: sqlite3.Connection) -> None:
    sidecar.execute("BEGIN IMMEDIATE")
    sidecar.execute(STUBS_DDL)


def _end(sidecar: sqlite3.Connection, *, commit: bool) -> None:
    """Commit the open transaction, or roll it back (after an error, which may have ended it already)."""
    if sidecar.in_transaction:
        sidecar.execute("COMMIT" if commit else "ROLLBACK")


def _db_uuid(conn: sqlite3.Connection) -> str:
    return str(conn.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()[0])


def _old_outputs(
    conn: sqlite3.Connection, indexed_up_to: int, before: float, min_chars: int, limit: int
) -> list[_Output]:
    rows = conn.execute(
        "SELECT id, content, tool_name FROM messages INDEXED BY messages_large_tool_outputs "
        f"WHERE role = 'tool' AND length(content) > {TOOL_OUTPUT_FLOOR_CHARS} AND length(content) > ? "
        "AND created_at < ? AND id <= ? ORDER BY created_at LIMIT ?",
        (min_chars, before, indexed_up_to, limit),
    )
    return [_Output(int(r[0]), str(r[1]), r[2]) for r in rows]


def _swap_terms(sidecar: sqlite3.Connection, outputs: list[_Output], day: str, scope: TrigramScope) -> None:
    for output in outputs:
        _replace_terms(sidecar, output, tool_output_stub(len(output.content), day), scope)


def _replace_terms(sidecar: sqlite3.Connection, output: _Output, stub: str, scope: TrigramScope) -> None:
    """Swap the output's indexed terms for the stub's, and record the stub, in the open transaction."""
    if sidecar.execute("SELECT 1 FROM retention_stubs WHERE message_id = ?", (output.id,)).fetchone():
        return  # indexed as a stub already; state.db gets it from the record
    old = searchable_text(PendingRow(output.id, "tool", output.content, output.tool_name))
    new = searchable_text(PendingRow(output.id, "tool", stub, output.tool_name))
    for text, command in ((old, "delete"), (new, None)):
        if text is None:
            continue
        _fts(sidecar, "fts_porter", output.id, text, command)
        gram = trigram_text(text, scope)
        if gram is not None:
            _fts(sidecar, "fts_trigram", output.id, gram, command)
    sidecar.execute("INSERT INTO retention_stubs(message_id, stub) VALUES (?, ?)", (output.id, stub))


def _fts(sidecar: sqlite3.Connection, table: str, rowid: int, body: str, command: str | None) -> None:
    if command is None:
        sidecar.execute(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", (rowid, body))
    else:
        sidecar.execute(f"INSERT INTO {table}({table}, rowid, body) VALUES (?, ?, ?)", (command, rowid, body))


def _set_stubs(conn: sqlite3.Connection, recorded: list[tuple[int, str]]) -> int:
    cursor = conn.executemany(
        "UPDATE messages SET content = ?, api_content = NULL "
        "WHERE id = ? AND role = 'tool' AND content IS NOT ?",
        [(stub, message_id, stub) for message_id, stub in recorded],
    )
    return max(cursor.rowcount, 0)
