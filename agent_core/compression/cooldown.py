"""Cooldowns after a failed or ineffective compression, shared by every process through state.db.

Invariants: a cooldown belongs to one segment (a compression by anyone ends it); it blocks automatic
compression until BOTH its time and its count of new user turns have passed, so a broken summariser or a
summary that does not shrink the context cannot fire on every turn; ``notified`` survives later failures,
so a person hears about a permanent summariser failure once, not once per attempt. Records live in the
store's ``meta`` key/value table under ``compression.cooldown/<conversation id>``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from agent_core.state import MessageRecord, StateStore

_PREFIX = "compression.cooldown/"


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

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

        await self._state.run_write(write)

    async def clear(self, conversation_id: str) -> None:
        key = _PREFIX + conversation_id

        def delete(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

        await self._state.run_write(delete)
