"""Cooldowns after a failed or ineffective compression, shared by every process through state.db.

Invariants: a cooldown belongs to one segment (a compression by anyone ends it); it blocks automatic
compression until BOTH its time and its count of new user turns have passed, so a broken summariser or a
summary that does not shrink the context cannot fire on every turn; ``notified`` survives later failures,
so a person hears about a permanent summariser failure once, not once per attempt. Records live in the
store's ``meta`` key/value table under ``compression.cooldown/<conversation id>``; every ``put`` also
forgets (in the same transaction, at most ``_SWEEP_LIMIT`` of them) the records that can no longer matter:
of an ended or missing conversation, of a segment that is no longer the tip, unreadable ones, and those whose
time ran out more than ``_FORGET_AFTER_S`` before the new record's — so the table holds about one record
per live conversation that is cooling down, not one per conversation that ever was.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from agent_core.storage.sqlite import MessageRecord, StateStore

_PREFIX = "compression.cooldown/"
_PREFIX_END = _PREFIX[:-1] + chr(ord(_PREFIX[-1]) + 1)  # the first key past every key with the prefix
_FORGET_AFTER_S = 86_400.0
_SWEEP_LIMIT = 100

# CASE, not OR: SQLite evaluates CASE branches lazily, so json_extract never sees a malformed value.
_SWEEP = f"""DELETE FROM meta WHERE key IN (
    SELECT m.key FROM meta m LEFT JOIN conversations c ON c.id = substr(m.key, {len(_PREFIX) + 1})
    WHERE m.key >= ? AND m.key < ? AND m.key != ? AND CASE
        WHEN c.id IS NULL OR c.ended_at IS NOT NULL OR NOT json_valid(m.value) THEN 1
        ELSE c.tip_session_id IS NOT json_extract(m.value, '$.segment_id')
            OR json_extract(m.value, '$.until') < ?
        END
    LIMIT ?)"""


@dataclass(frozen=True, slots=True)
class Cooldown:
    """No automatic compression of ``segment_id`` before ``until`` and ``turns`` more user messages."""

    segment_id: str
    until: float
    after_message_id: int
    turns: int
    kind: str
    reason: str
    notified: bool = False

    def blocks(self, segment_id: str, records: Sequence[MessageRecord], now: float) -> bool:
        if segment_id != self.segment_id:
            return False
        new_turns = sum(1 for r in records if r.role == "user" and r.id > self.after_message_id)
        return now < self.until or new_turns < self.turns


class CooldownBook:
    """Reads and writes cooldown records in state.db."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def get(self, conversation_id: str) -> Cooldown | None:
        key = _PREFIX + conversation_id

        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        raw = await self._state.run_read(read)
        if raw is None:
            return None
        try:
            return Cooldown(**json.loads(raw))
        except (TypeError, ValueError):
            return None  # an unreadable record only costs one early retry

    async def put(self, conversation_id: str, cooldown: Cooldown) -> None:
        key, value = _PREFIX + conversation_id, json.dumps(asdict(cooldown))

        horizon = cooldown.until - _FORGET_AFTER_S

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
            conn.execute(_SWEEP, (_PREFIX, _PREFIX_END, key, horizon, _SWEEP_LIMIT))

        await self._state.run_write(write)

    async def clear(self, conversation_id: str) -> None:
        key = _PREFIX + conversation_id

        def delete(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

        await self._state.run_write(delete)
