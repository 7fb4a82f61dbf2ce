"""Read-side queries of session search: who may see which conversations, and ranked FTS5 matches.

Every function takes a reader connection with the search sidecar attached as ``idx`` (see
``ReaderPool.run(fn, with_index=True)``); MATCH expressions arrive already built by match_expressions.py
from quoted tokens, so no user text is ever spliced into SQL or FTS5 syntax.

Invariants: ranking never computes bm25 for more than ``window`` rows, and a ranked query never reads
more than ``window`` matches past its rowid bound, because the FTS5 cursor walks newest-first
(``ORDER BY rowid DESC`` is consumed by FTS5) and the scope filters are plain expressions
(``+rowid IN (...)``) that SQLite evaluates against one materialised id set, never pushed into FTS5 as
per-rowid lookups (those cost a full query setup per id: seconds for a common term).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SearchIndexUnavailableError
from ..search_index import ConversationInfo, FoundMessage
from .fts_query import FTS_INDEX_TABLES, FtsIndexName


@dataclass(frozen=True, slots=True)
class MatchFilter:
    """Which messages a ranked match may return.

    ``conversation_ids`` None means every conversation; ``excluded_segment`` drops the messages of one
    segment (the live tip of the caller's conversation, already in its context).
    """

    conversation_ids: tuple[str, ...] | None = None
    excluded_segment: tuple[str, str] | None = None  # (conversation_id, segment_id)


def require_index(conn: sqlite3.Connection) -> int:
    """The last message id the sidecar covers; raises when it was not built for this state.db."""
    row = conn.execute(
        "SELECT p.last_id FROM idx.progress AS p JOIN meta AS m ON m.key = 'db_uuid' AND m.value = p.db_uuid "
        "WHERE p.id = 1"
    ).fetchone()
    if row is None:
        path = conn.execute("SELECT file FROM pragma_database_list WHERE name = 'idx'").fetchone()
        raise SearchIndexUnavailableError(Path(path[0] if path else "search.db"), "being rebuilt")
    return int(row[0])


def participant_conversations(conn: sqlite3.Connection, person_id: str) -> list[str]:
    """Conversations the person owns or wrote a user message in, oldest first."""
    cursor = conn.execute(
        "SELECT id FROM conversations WHERE person_id = ? "
        "UNION SELECT DISTINCT conversation_id FROM messages WHERE author = ? AND role = 'user'",
        (person_id, person_id),
    )
    return [str(row[0]) for row in cursor.fetchall()]


def vocabulary_terms(
    conn: sqlite3.Connection, index: FtsIndexName, low: str, high: str, limit: int
) -> list[str]:
    """Index terms in ``[low, high)``, most common first (an fts5vocab range scan, never a message scan)."""
    cursor = conn.execute(
        f"SELECT term FROM temp.vocab_{index} WHERE term >= ? AND term < ? ORDER BY doc DESC, term LIMIT ?",
        (low, high, limit),
    )
    return [str(row[0]) for row in cursor.fetchall()]


def nth_newest_match(conn: sqlite3.Connection, index: FtsIndexName, expression: str, n: int) -> int | None:
    """The rowid of the ``n``-th newest match (1-based), or None when there are fewer than ``n`` matches.

    Walks at most ``n`` rowids without ranking, so it doubles as a cheap "more than n matches?" test.
    """
    table = FTS_INDEX_TABLES[index]
    row = conn.execute(
        f"SELECT rowid FROM idx.{table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expression, max(n - 1, 0)),
    ).fetchone()
    return None if row is None else int(row[0])


def capped_count(conn: sqlite3.Connection, index: FtsIndexName, expression: str, cap: int) -> int:
    """How many messages match ``expression``, counting at most ``cap``."""
    table = FTS_INDEX_TABLES[index]
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM idx.{table} WHERE {table} MATCH ? LIMIT ?)", (expression, cap)
    ).fetchone()
    return int(row[0])


def ranked_matches(
    conn: sqlite3.Connection,
    index: FtsIndexName,
    expression: str,
    *,
    where: MatchFilter,
    window: int,
    limit: int,
    above_rowid: int | None = None,
) -> list[tuple[int, float]]:
    """``(message_id, bm25)`` best first, ranking only the ``window`` newest matches allowed by ``where``.

    ``above_rowid`` bounds how far back the scan may go (for scopes that reject most matches).
    """
    table = FTS_INDEX_TABLES[index]
    clauses = [f"{table} MATCH ?"]
    params: list[object] = [expression]
    if above_rowid is not None:
        clauses.append("rowid > ?")
        params.append(above_rowid)
    if where.conversation_ids is not None:
        clauses.append(
            "+rowid IN (SELECT id FROM messages WHERE conversation_id IN (SELECT value FROM json_each(?)))"
        )
        params.append(json.dumps(list(where.conversation_ids)))
    if where.excluded_segment is not None:
        clauses.append("+rowid NOT IN (SELECT id FROM messages WHERE conversation_id = ? AND session_id = ?)")
        params.extend(where.excluded_segment)
    params.extend((window, limit))
    cursor = conn.execute(
        f"SELECT id, score FROM (SELECT rowid AS id, bm25({table}) AS score FROM idx.{table} "
        f"WHERE {' AND '.join(clauses)} ORDER BY rowid DESC LIMIT ?) ORDER BY score, id DESC LIMIT ?",
        params,
    )
    return [(int(row[0]), float(row[1])) for row in cursor.fetchall()]


def found_messages(conn: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, FoundMessage]:
    cursor = conn.execute(
        "SELECT id, conversation_id, session_id, role, content, tool_name, created_at FROM messages "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(message_ids)),),
    )
    return {
        int(r[0]): FoundMessage(int(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4], r[5], float(r[6]))
        for r in cursor.fetchall()
    }


def conversation_infos(
    conn: sqlite3.Connection, conversation_ids: Sequence[str]
) -> dict[str, ConversationInfo]:
    cursor = conn.execute(
        "SELECT id, person_id, platform, title, created_at, ended_at, tip_session_id FROM conversations "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(conversation_ids)),),
    )
    return {
        str(r[0]): ConversationInfo(str(r[0]), r[1], r[2], r[3], float(r[4]), r[5], str(r[6]))
        for r in cursor.fetchall()
    }


def message_windows(
    conn: sqlite3.Connection, conversation_id: str, message_ids: Sequence[int], *, around: int
) -> list[FoundMessage]:
    """The messages of one conversation within ``around`` positions of any of ``message_ids``, in order."""
    cursor = conn.execute(
        "WITH ordered AS (SELECT id, session_id, role, content, tool_name, created_at, "
        "row_number() OVER (ORDER BY id) AS position FROM messages WHERE conversation_id = ?), "
        "anchors AS (SELECT position FROM ordered WHERE id IN (SELECT value FROM json_each(?))) "
        "SELECT id, session_id, role, content, tool_name, created_at FROM ordered WHERE EXISTS "
        "(SELECT 1 FROM anchors WHERE ordered.position BETWEEN anchors.position - ? "
        "AND anchors.position + ?) "
        "ORDER BY id",
        (conversation_id, json.dumps(list(message_ids)), around, around),
    )
    return [
        FoundMessage(int(r[0]), conversation_id, str(r[1]), str(r[2]), r[3], r[4], float(r[5]))
        for r in cursor.fetchall()
    ]
