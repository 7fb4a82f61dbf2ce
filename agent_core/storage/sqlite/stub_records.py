"""Stub records in the search sidecar: tool outputs whose index entries already hold their retention stub
while state.db may still hold the old text (tool_output_stubs.py applies them, in a later transaction).

Invariant: whoever removes a message's index entries (forget.py) must delete the text the index holds —
the recorded stub when there is a record, else the message's text in state.db — since the contentless
FTS5 tables can only forget exactly what they were given.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Sequence

from .sidecar import PendingRow

STUBS_DDL = "CREATE TABLE IF NOT EXISTS retention_stubs (message_id INTEGER PRIMARY KEY, stub TEXT NOT NULL)"


def as_indexed(conn: sqlite3.Connection, rows: Sequence[PendingRow]) -> list[PendingRow]:
    """``rows`` (read from state.db) as the sidecar indexed them: a recorded stub replaces the content."""
    present = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'retention_stubs'")
    if present.fetchone() is None or not rows:
        return list(rows)
    ids = json.dumps([row.id for row in rows])
    stubs = {
        int(r[0]): str(r[1])
        for r in conn.execute(
            "SELECT message_id, stub FROM retention_stubs "
            "WHERE message_id IN (SELECT value FROM json_each(?))",
            (ids,),
        )
    }
    return [dataclasses.replace(row, content=stubs[row.id]) if row.id in stubs else row for row in rows]
