"""Read-side statements of session search on PostgreSQL: scopes, ranked index matches, windows, metadata.

Every function runs on the caller's connection (one read-only snapshot for a whole search) and takes
queries already built by search_clauses.py, whose user text is all bound parameters. Statements whose
text depends on the clauses are sent unprepared, so each is planned with its values: the planner then
folds ``phraseto_tsquery(…)`` to a constant and uses the column statistics to choose between the GIN
index (rare terms) and a newest-first walk of the primary key (terms in most messages).

Invariants: a ranked match reads at most ``window + 1`` matches (the newest ones allowed by the filter)
and ranks at most ``window`` of them; visibility — ``SEARCHED_ROLES`` with text, never ``UNSEARCHED_TOOLS``,
never the caller's live tip segment, only the scope's conversations — is part of the matching statement,
so hidden rows never take a place in the window; lower scores are better.

Ranking (a BM25-like sum over the clauses a message matches, ``-10 · Σ idf · strength``): strength is
``ts_rank_cd(vector, clause, 1)`` (cover density, divided by 1 + log of the message's length) for vector
clauses and ``0.1 · occurrences / (1 + log(1 + length))`` for substrings; ``idf`` is BM25's
``ln(1 + (N - n + 0.5) / (n + 0.5))`` with ``N`` the number of messages (the newest id, an O(1) upper
bound) and ``n`` the clause's matches inside the window — the exact document frequency in the scope
whenever the window holds every match, which is when ranking matters most.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg import sql

from ..search_index import SEARCHED_ROLES, UNSEARCHED_TOOLS, ConversationInfo, FoundMessage
from .engine import Conn
from .search_clauses import Fragment, PgClause, PgIndex, formatted, joined
from .search_ddl import SEARCH_INDEXES

_TEXT: LiteralString = "mg_search_text(m.content, m.role, m.tool_name)"
_MATCH: dict[PgIndex, LiteralString] = {
    PgIndex.VECTOR: "m.search_vector @@ {}",
    PgIndex.GRAMS: "m.search_vector @@ {}",
    PgIndex.TRIGRAM: _TEXT + " ILIKE {}",
}
# A substring with no letter that has case (CJK, digits, punctuation) matches the same rows with LIKE, which
# skips case-folding every candidate text (a third of the recheck of 2,400 CJK matches).
_CASELESS_MATCH: LiteralString = _TEXT + " LIKE {}"
# What ranking reads of each window row: the vector, or the text already case-folded once (as it is, when
# no clause of the group has a character with case: folding cannot change where those occur).
_PAYLOAD: dict[PgIndex, LiteralString] = {
    PgIndex.VECTOR: "m.search_vector",
    PgIndex.GRAMS: "m.search_vector",
    PgIndex.TRIGRAM: "lower(" + _TEXT + ")",
}
_CASELESS_PAYLOAD: LiteralString = _TEXT
_VISIBLE: LiteralString = (
    "m.role = ANY({}) AND m.content <> ''"
    " AND (m.role <> 'tool' OR m.tool_name IS NULL OR m.tool_name <> ALL({}))"
)
# How one window row scores on clause ``{q}`` (its case-folded text ``{needle}`` for substrings), and
# whether it matches that clause on its own.
_STRENGTH: dict[PgIndex, LiteralString] = {
    PgIndex.VECTOR: "ts_rank_cd(w.payload, {q}, 1)",
    PgIndex.GRAMS: "ts_rank_cd(w.payload, {q}, 1)",
    PgIndex.TRIGRAM: (
        "0.1 * ((length(w.payload) - length(replace(w.payload, {needle}, '')))"
        " / greatest(length({needle}), 1))::float8 / (1 + ln(1 + length(w.payload)))"
    ),
}
_CLAUSE_MATCH: dict[PgIndex, LiteralString] = {
    PgIndex.VECTOR: "w.payload @@ {q}",
    PgIndex.GRAMS: "w.payload @@ {q}",
    PgIndex.TRIGRAM: "w.payload LIKE {q}",
}
_CLAUSE_TYPE: dict[PgIndex, LiteralString] = {
    PgIndex.VECTOR: "tsquery[]",
    PgIndex.GRAMS: "tsquery[]",
    PgIndex.TRIGRAM: "text[]",
}
# Newest first along the primary key (stops after window + 1 matches: right for common terms), or with
# the key hidden from the planner so matches come from the GIN index and are sorted (right otherwise).
_ORDER = {True: "m.id DESC", False: "m.id + 0 DESC"}
# Fields in order: any clause matches, no excluded clause matches, visibility and scope, window + 1,
# window, the clauses, their needles, then one expression per clause for: a row's strength, the clause's
# idf, a row's score term; then the limit (payload and order are spliced in per index).
# Each window row is ranked once, against every clause, into an array of strengths (NULL: no match), and
# every later step reads those arrays in one pass, so no step joins two row sets of the window's size:
# the planner sizes ``hits`` from its estimate of the matches, which for a substring is often 1 where it
# is thousands, and a join planned on that estimate (a nested loop of the window against its ranks) was
# quadratic — 0.7 s for 2,400 matches of 服务器. The per-clause expressions are generated (array
# positions only, never user text), so no sub-plan runs per row either.
# A window row no clause matches on its own (case folding that ILIKE and lower() see differently) keeps
# score 0 rather than vanishing.
_RANKED: LiteralString = """
WITH hits AS MATERIALIZED (
    SELECT m.id, {payload} AS payload FROM messages AS m
    WHERE ({}) AND {} AND {}
    ORDER BY {order} LIMIT {}),
bounds AS (SELECT count(*) AS matched, min(id) AS oldest FROM hits),
windowed AS MATERIALIZED (
    SELECT h.id, h.payload FROM hits AS h, bounds AS b WHERE b.matched <= {} OR h.id <> b.oldest),
clause AS (SELECT ARRAY[{}]::{qtype} AS q, ARRAY[{}]::text[] AS needle),
ranks AS MATERIALIZED (
    SELECT w.id, ARRAY[{}]::float8[] AS strengths FROM windowed AS w CROSS JOIN clause AS c),
corpus AS (
    SELECT greatest((SELECT coalesce(max(id), 0) FROM messages), b.matched)::float8 AS n FROM bounds AS b),
idf AS (SELECT ARRAY[{}]::float8[] AS weights FROM ranks AS r CROSS JOIN corpus AS k GROUP BY k.n),
scored AS (
    SELECT r.id, -10 * ({}) AS score FROM ranks AS r CROSS JOIN idf AS i
    ORDER BY score, r.id DESC LIMIT {})
SELECT m.id, m.conversation_id, m.segment_id, m.role, m.content, m.tool_name, m.created_at, s.score, b.matched
FROM scored AS s JOIN messages AS m ON m.id = s.id CROSS JOIN bounds AS b
ORDER BY s.score, s.id DESC"""


@dataclass(frozen=True, slots=True)
class MatchFilter:
    """Which messages a ranked match may return.

    ``conversation_ids`` None means every conversation; ``current_conversation_id``: its live tip segment is
    skipped (already in the caller's context).
    """

    conversation_ids: tuple[str, ...] | None = None
    current_conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class MatchEstimate:
    """The planner's estimates: a group's visible matches, and its commonest clause's alone.

    ``largest_clause`` is None when the plan reads no search index clause by clause.
    """

    total: float
    largest_clause: float | None


@dataclass(frozen=True, slots=True)
class RankedMatches:
    """The best ``limit`` of the ranked window, and how many matches the window probe saw (up to window+1)."""

    hits: tuple[tuple[FoundMessage, float], ...]
    matched: int


async def start_ranked_reads(conn: Conn) -> int:
    """The newest message id; from here to the end of this read-only transaction (the search's snapshot),
    plans read through an index wherever one can serve, in the one backend process (same round trip).

    A ranked read that sorts its matches reads them through the search index (a bitmap of the matching
    rows); with statistics that count thousands of matches the planner costs that above a sequential scan
    of the whole table, which then tests every message against every clause (0.1 s at 100,000 messages
    where the bitmap reads the 4,600 matches in 20 ms). Parallel workers buy nothing for a window of a few
    thousand rows and cost each search their start-up and a share of the server's worker budget, which
    every turn's search draws on at once. Every later read of a search (windows, vectors loaded by id,
    conversations by id) is an index lookup anyway; the settings end with the transaction.
    """
    row = await (
        await conn.execute(
            "SELECT (SELECT coalesce(max(id), 0) FROM messages), set_config('enable_seqscan', 'off', true),"
            " set_config('max_parallel_workers_per_gather', '0', true)"
        )
    ).fetchone()
    return int(row[0]) if row is not None else 0


async def participant_conversations(conn: Conn, person_id: str) -> list[str]:
    """Conversations the person owns or wrote a user message in (``messages_author`` serves the second)."""
    cursor = await conn.execute(
        "SELECT id FROM conversations WHERE person_id = %s "
        "UNION SELECT conversation_id FROM messages WHERE author = %s AND role = 'user'",
        (person_id, person_id),
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def ranked_matches(
    conn: Conn,
    index: PgIndex,
    clauses: Sequence[PgClause],
    excluded: Sequence[PgClause],
    where: MatchFilter,
    *,
    window: int,
    limit: int,
    walk: bool,
) -> RankedMatches:
    """The visible messages matching any of ``clauses`` (and none of ``excluded``), best first.

    ``walk``: find the newest matches by walking the primary key (worth it when matches are dense).
    """
    matching, exclude = _conditions(index, clauses, excluded)
    positions = [Fragment(sql.Composed([sql.Literal(n)])) for n in range(1, len(clauses) + 1)]
    caseless = index is PgIndex.TRIGRAM and all(c.caseless for c in clauses)
    statement = formatted(
        _RANKED.replace("{payload}", _CASELESS_PAYLOAD if caseless else _PAYLOAD[index])
        .replace("{order}", _ORDER[walk])
        .replace("{qtype}", _CLAUSE_TYPE[index]),
        matching,
        exclude,
        _filter(where),
        Fragment.value(window + 1),
        Fragment.value(window),
        joined(", ", (_ranked_query(c, folded=not caseless) for c in clauses)),
        joined(", ", (Fragment.value(c.needle) for c in clauses)),
        joined(", ", (_clause_strength(index, n) for n in positions)),
        joined(", ", (formatted(_IDF, n, n) for n in positions)),
        joined(" + ", (formatted("coalesce(i.weights[{}] * r.strengths[{}], 0)", n, n) for n in positions)),
        Fragment.value(limit),
    )
    cursor = await conn.execute(statement.sql, statement.params, prepare=False)
    rows = await cursor.fetchall()
    hits = tuple((_found(row), float(row[7])) for row in rows)
    return RankedMatches(hits, int(rows[0][8]) if rows else 0)


async def estimated_matches(
    conn: Conn, index: PgIndex, clauses: Sequence[PgClause], excluded: Sequence[PgClause], where: MatchFilter
) -> MatchEstimate:
    """How many visible messages the planner expects to match (``EXPLAIN``: statistics, no execution)."""
    matching, exclude = _conditions(index, clauses, excluded)
    statement = formatted(
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM messages AS m WHERE ({}) AND {} AND {}",
        matching,
        exclude,
        _filter(where),
    )
    row = await (await conn.execute(statement.sql, statement.params, prepare=False)).fetchone()
    plan = row[0] if row is not None else None
    if isinstance(plan, str):
        plan = json.loads(plan)
    if not plan:
        return MatchEstimate(0.0, None)
    top = plan[0]["Plan"]
    lookups = [float(node["Plan Rows"]) for node in _search_lookups(top)]
    return MatchEstimate(float(top["Plan Rows"]), max(lookups) if lookups else None)


def _search_lookups(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The plan's lookups in a search index: one per clause the matching condition ORs together."""
    if node.get("Node Type") == "Bitmap Index Scan" and node.get("Index Name") in SEARCH_INDEXES:
        yield node
    for child in node.get("Plans", ()):
        yield from _search_lookups(child)


async def capped_counts(
    conn: Conn,
    index: PgIndex,
    clauses: Sequence[PgClause],
    excluded: Sequence[PgClause],
    where: MatchFilter,
    cap: int,
) -> list[int]:
    """How many messages each clause matches on its own among those a ranked match may return (visible, in
    scope, none of ``excluded``), counting at most ``cap`` (one statement)."""
    visible = _filter(where)
    counts = joined(
        ", ",
        (
            formatted(
                "(SELECT count(*) FROM (SELECT 1 FROM messages AS m WHERE ({}) AND {} AND {} LIMIT {}) AS s)",
                *_conditions(index, [c], excluded),
                visible,
                Fragment.value(cap),
            )
            for c in clauses
        ),
    )
    statement = formatted("SELECT {}", counts)
    row = await (await conn.execute(statement.sql, statement.params, prepare=False)).fetchone()
    return [int(value) for value in row] if row is not None else [0] * len(clauses)


async def conversation_infos(conn: Conn, conversation_ids: Sequence[str]) -> dict[str, ConversationInfo]:
    cursor = await conn.execute(
        "SELECT id, person_id, platform, title, created_at, ended_at, tip_segment_id FROM conversations "
        "WHERE id = ANY(%s)",
        (list(conversation_ids),),
    )
    return {
        str(r[0]): ConversationInfo(str(r[0]), r[1], r[2], r[3], float(r[4]), r[5], str(r[6]))
        for r in await cursor.fetchall()
    }


async def message_windows(
    conn: Conn, anchors: Mapping[str, Sequence[int]], around: int
) -> dict[str, list[FoundMessage]]:
    """Per conversation, its messages within ``around`` positions of any anchor id, in id order."""
    windows: dict[str, list[FoundMessage]] = {cid: [] for cid in anchors}
    pairs = [(cid, int(mid)) for cid, ids in anchors.items() for mid in ids]
    if not pairs:
        return windows
    cursor = await conn.execute(
        "WITH ordered AS (SELECT id, conversation_id, segment_id, role, content, tool_name, created_at, "
        "row_number() OVER (PARTITION BY conversation_id ORDER BY id) AS position "
        "FROM messages WHERE conversation_id = ANY(%s)), "
        "marks AS (SELECT o.conversation_id, o.position FROM ordered AS o "
        "JOIN unnest(%s::text[], %s::bigint[]) AS a(conversation_id, id) "
        "ON a.conversation_id = o.conversation_id AND a.id = o.id) "
        "SELECT o.id, o.conversation_id, o.segment_id, o.role, o.content, o.tool_name, o.created_at "
        "FROM ordered AS o WHERE EXISTS (SELECT 1 FROM marks AS k "
        "WHERE k.conversation_id = o.conversation_id "
        "AND o.position BETWEEN k.position - %s AND k.position + %s) ORDER BY o.conversation_id, o.id",
        (list(anchors), [p[0] for p in pairs], [p[1] for p in pairs], around, around),
    )
    for row in await cursor.fetchall():
        windows[str(row[1])].append(_found(row))
    return windows


async def visible_messages(conn: Conn, message_ids: Sequence[int]) -> dict[int, FoundMessage]:
    """The visible ones (roles with text, not ``UNSEARCHED_TOOLS``) of ``message_ids``, by id."""
    if not message_ids:
        return {}
    statement = formatted(
        "SELECT m.id, m.conversation_id, m.segment_id, m.role, m.content, m.tool_name, m.created_at "
        "FROM messages AS m WHERE m.id = ANY({}) AND " + _VISIBLE,
        Fragment.value(list(message_ids)),
        Fragment.value(sorted(SEARCHED_ROLES)),
        Fragment.value(sorted(UNSEARCHED_TOOLS)),
    )
    cursor = await conn.execute(statement.sql, statement.params)
    return {int(row[0]): _found(row) for row in await cursor.fetchall()}


async def newest_message_id(conn: Conn) -> int:
    row = await (await conn.execute("SELECT coalesce(max(id), 0) FROM messages")).fetchone()
    return int(row[0]) if row is not None else 0


async def invalid_indexes(conn: Conn, names: Sequence[str]) -> list[str]:
    """Which of the named indexes on ``messages`` are missing, or not yet valid (being built)."""
    cursor = await conn.execute(
        "SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'messages'::regclass AND i.indisvalid AND i.indisready AND c.relname = ANY(%s)",
        (list(names),),
    )
    ready = {str(row[0]) for row in await cursor.fetchall()}
    return [name for name in names if name not in ready]


async def settled_message_id(conn: Conn) -> int | None:
    """The newest id ever drawn for a message, if no other transaction is writing ``messages`` now.

    Every transaction that drew an id holds its write lock on ``messages`` until it ends, and takes it
    before drawing; so when, after reading the sequence, no other transaction holds that lock, every id at
    or below the value read is committed or gone for good (the port's watermark). None while one does.
    """
    row = await (
        await conn.execute(
            "SELECT pg_sequence_last_value(pg_get_serial_sequence('messages', 'id')::regclass)"
        )
    ).fetchone()
    drawn = int(row[0]) if row is not None and row[0] is not None else 0
    busy = await (
        await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE relation = 'messages'::regclass "
            "AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid())"
        )
    ).fetchone()
    return None if busy is not None and busy[0] else drawn


# BM25's idf of one clause from its matches in the window (rows whose strength is not NULL).
_IDF: LiteralString = (
    "ln(1 + (k.n - count(r.strengths[{}])::float8 + 0.5) / (count(r.strengths[{}])::float8 + 0.5))"
)


def _clause_strength(index: PgIndex, position: Fragment) -> Fragment:
    """Clause ``position``'s strength on a window row, NULL when the row does not match it."""
    q = sql.SQL("c.q[{}]").format(position.sql)
    needle = sql.SQL("c.needle[{}]").format(position.sql)
    match = sql.SQL(_CLAUSE_MATCH[index]).format(q=q)
    strength = sql.SQL(_STRENGTH[index]).format(q=q, needle=needle)
    return Fragment(sql.SQL("CASE WHEN {} THEN ({})::float8 END").format(match, strength))


def _ranked_query(clause: PgClause, *, folded: bool) -> Fragment:
    """What ranking tests a window row's payload against: the tsquery, or the pattern (case-folded when the
    payload is)."""
    if clause.index is PgIndex.TRIGRAM and folded:
        return formatted("lower({})", clause.query)
    return clause.query


def _conditions(
    index: PgIndex, clauses: Sequence[PgClause], excluded: Sequence[PgClause]
) -> tuple[Fragment, Fragment]:
    """(any of ``clauses`` matches, none of ``excluded`` does) as conditions on ``messages AS m``."""
    needed = _not_implied(clauses)
    matching = joined(" OR ", (formatted(_match(index, c), c.query) for c in needed))
    if not excluded:
        return matching, Fragment(sql.SQL("true"))
    return matching, formatted(
        "NOT ({})", joined(" OR ", (formatted(_match(index, c), c.query) for c in excluded))
    )


def _not_implied(clauses: Sequence[PgClause]) -> list[PgClause]:
    """``clauses`` without those whose matches another one's include, which add nothing to an OR.

    A caseless substring holding another caseless substring (服务器部署 holds 服务器) only matches texts that
    one matches too, so each row that passes it is rechecked against one pattern fewer; equal ones keep
    the first. Only caseless pairs are compared: their needles are their exact text.
    """

    def implies(a: PgClause, b: PgClause) -> bool:
        return a.index is b.index is PgIndex.TRIGRAM and a.caseless and b.caseless and b.needle in a.needle

    return [
        a
        for i, a in enumerate(clauses)
        if not any(j != i and implies(a, b) and (j < i or not implies(b, a)) for j, b in enumerate(clauses))
    ]


def _match(index: PgIndex, clause: PgClause) -> LiteralString:
    """The condition ``clause`` puts on ``messages AS m`` (its query is the one field)."""
    return _CASELESS_MATCH if index is PgIndex.TRIGRAM and clause.caseless else _MATCH[index]


def _filter(where: MatchFilter) -> Fragment:
    parts = [
        formatted(_VISIBLE, Fragment.value(sorted(SEARCHED_ROLES)), Fragment.value(sorted(UNSEARCHED_TOOLS)))
    ]
    if where.conversation_ids is not None:
        parts.append(formatted("m.conversation_id = ANY({})", Fragment.value(list(where.conversation_ids))))
    if where.current_conversation_id is not None:
        # Segment ids are unique, so skipping the tip's id skips exactly that conversation's live segment.
        tip = "(SELECT tip_segment_id FROM conversations WHERE id = {})"
        parts.append(
            formatted("m.segment_id IS DISTINCT FROM " + tip, Fragment.value(where.current_conversation_id))
        )
    return joined(" AND ", parts)


def _found(row: Sequence[Any]) -> FoundMessage:
    return FoundMessage(int(row[0]), str(row[1]), str(row[2]), str(row[3]), row[4], row[5], float(row[6]))
