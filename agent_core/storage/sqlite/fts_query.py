"""Low-level full-text queries over the attached search sidecar, joined back to ``messages`` by id.

Invariants: MATCH expressions arrive already built (agent_core.search builds safe ones); results carry
the conversation, segment and role from ``messages`` (the FTS tables are contentless); lower score is
better; a message found by both indexes is returned once with its better score.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SearchIndexUnavailableError
from .settings import TrigramScope


@dataclass(frozen=True, slots=True)
class FtsHit:
    """One full-text hit; lower ``score`` is better (SQLite bm25 convention)."""

    message_id: int
    conversation_id: str
    session_id: str
    role: str
    score: float
    content: str | None
    tool_name: str | None
    created_at: float
    index: Literal["porter", "trigram"]


FtsIndexName = Literal["porter", "trigram"]
FTS_INDEX_TABLES: dict[FtsIndexName, str] = {"porter": "fts_porter", "trigram": "fts_trigram"}


def fts_match(
    conn: sqlite3.Connection,
    porter: str | None,
    trigram: str | None,
    *,
    limit: int,
    conversation_ids: Sequence[str] | None,
    scope: TrigramScope,
) -> list[FtsHit]:
    _require_trusted(conn, scope)
    best: dict[int, FtsHit] = {}
    plan: tuple[tuple[Literal["porter", "trigram"], str | None], ...] = (
        ("porter", porter),
        ("trigram", trigram),
    )
    for index, expression in plan:
        if expression is None or limit <= 0:
            continue
        for hit in _match_one(conn, index, expression, limit, conversation_ids):
            known = best.get(hit.message_id)
            if known is None or hit.score < known.score:
                best[hit.message_id] = hit
    return sorted(best.values(), key=lambda hit: (hit.score, hit.message_id))[:limit]


def _match_one(
    conn: sqlite3.Connection,
    index: Literal["porter", "trigram"],
    expression: str,
    limit: int,
    conversation_ids: Sequence[str] | None,
) -> list[FtsHit]:
    table = FTS_INDEX_TABLES[index]
    params: list[object] = [expression]
    where = f"{table} MATCH ?"
    if conversation_ids is not None:
        where += " AND m.conversation_id IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(list(conversation_ids)))
    params.append(limit)
    cursor = conn.execute(
        "SELECT m.id, m.conversation_id, m.session_id, m.role, bm25(" + table + "), m.content, m.tool_name, "
        f"m.created_at FROM idx.{table} JOIN messages AS m ON m.id = {table}.rowid "
        f"WHERE {where} ORDER BY bm25({table}) LIMIT ?",
        params,
    )
    return [
        FtsHit(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), r[5], r[6], float(r[7]), index)
        for r in cursor.fetchall()
    ]


def _attached_sidecar_path(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT file FROM pragma_database_list WHERE name = 'idx'").fetchone()
    return "search.db" if row is None else str(row[0])


def vocabulary(
    conn: sqlite3.Connection, index: FtsIndexName, low: str, high: str, limit: int, scope: TrigramScope
) -> list[tuple[str, int]]:
    """Index terms in ``[low, high)`` with their document counts, most common first."""
    _require_trusted(conn, scope)
    cursor = conn.execute(
        f"SELECT term, doc FROM temp.vocab_{index} WHERE term >= ? AND term < ? "
        "ORDER BY doc DESC, term LIMIT ?",
        (low, high, limit),
    )
    return [(str(term), int(doc)) for term, doc in cursor.fetchall()]


def count_matches(
    conn: sqlite3.Connection, index: FtsIndexName, expression: str, cap: int, scope: TrigramScope
) -> int:
    """How many messages match ``expression``, counting at most ``cap`` (a bounded document frequency)."""
    _require_trusted(conn, scope)
    table = FTS_INDEX_TABLES[index]
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM idx.{table} WHERE {table} MATCH ? LIMIT ?)", (expression, cap)
    ).fetchone()
    return int(row[0])


def _require_trusted(conn: sqlite3.Connection, scope: TrigramScope) -> None:
    if indexed_up_to_or_none(conn, scope) is None:
        raise SearchIndexUnavailableError(
            Path(_attached_sidecar_path(conn)), "being rebuilt for this database"
        )


def indexed_up_to(conn: sqlite3.Connection, scope: TrigramScope) -> int:
    """The last message id the sidecar has indexed (0 when it is empty, stale or being rebuilt)."""
    position = indexed_up_to_or_none(conn, scope)
    return 0 if position is None else position


def indexed_up_to_or_none(conn: sqlite3.Connection, scope: TrigramScope) -> int | None:
    """None unless the sidecar was built for this state.db with this scope (a copied one is not trusted)."""
    row = conn.execute(
        "SELECT p.last_id FROM idx.progress AS p JOIN meta AS m ON m.key = 'db_uuid' AND m.value = p.db_uuid "
        "WHERE p.id = 1 AND p.trigram_scope = ?",
        (scope,),
    ).fetchone()
    return None if row is None else int(row[0])


def message_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])


def unindexed_count(conn: sqlite3.Connection, scope: TrigramScope) -> int:
    row = conn.execute("SELECT count(*) FROM messages WHERE id > ?", (indexed_up_to(conn, scope),)).fetchone()
    return int(row[0])
