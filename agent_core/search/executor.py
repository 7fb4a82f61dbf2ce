"""The search executor: runs one planned query against state.db in ONE read snapshot and ranks its hits.

Runs on a reader thread (``StateStore.run_read(..., with_index=True)``), so every step sees the same
committed state: scope resolution, trigram-prefix expansion through the vocabulary, ranking per index,
and fetching the hit rows.

Cost bounds (why search stays fast when a term is in most messages):
- bm25 is computed for at most ``rank_window`` matches per expression (the newest ones): exact
  ranking whenever an expression matches fewer messages, recency-first otherwise;
- when an expression overflows the window, each of its clauses is counted (capped) and those that
  alone fill the window are dropped (``trim_common_clauses``) unless none is rarer, so a rare word is
  not crowded out of the window by a common one;
- a person-scoped search filters by that person's message ids inside the FTS5 scan, before ranking,
  and reads at most ``scoped_scan_limit`` of the newest matches.
Visibility: only user, assistant and tool messages of the scope's conversations; never the caller's live
tip segment; never earlier session_search results (they would echo other hits).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from agent_core.search.plan import MAX_EXPANSIONS_PER_PREFIX, ClauseRole, FtsIndex, FtsQuery
from agent_core.search.scope import SearchScope
from agent_core.search.settings import SearchSettings
from agent_core.search.vocabulary import trigram_prefix_bounds, trim_common_clauses
from agent_core.storage.sqlite.fts_query import FtsIndexName
from agent_core.storage.sqlite.search_reads import (
    ConversationRow,
    HitRow,
    MatchFilter,
    capped_count,
    conversation_rows,
    hit_rows,
    nth_newest_match,
    participant_conversations,
    ranked_matches,
    require_index,
    tip_segment,
    vocabulary_terms,
)

VISIBLE_ROLES = frozenset({"user", "assistant", "tool"})
HIDDEN_TOOLS = frozenset({"session_search"})
_MIN_EXPANSIONS = 4
_PRIMARY = ((FtsIndex.PORTER, ClauseRole.PRIMARY), (FtsIndex.TRIGRAM, ClauseRole.PRIMARY))
_FALLBACK = (FtsIndex.TRIGRAM, ClauseRole.FALLBACK)


@dataclass(frozen=True, slots=True)
class RankedHit:
    """A visible matching message and its bm25 score (lower is better)."""

    row: HitRow
    score: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one search read: hits best first, and the metadata of their conversations."""

    hits: tuple[RankedHit, ...]
    conversations: dict[str, ConversationRow]


def execute(
    conn: sqlite3.Connection, query: FtsQuery, scope: SearchScope, want: int, settings: SearchSettings
) -> Snapshot:
    """Run ``query`` for ``scope``; ``want`` is how many conversations the caller will show."""
    require_index(conn)
    where = _match_filter(conn, scope)
    if where.conversation_ids == () or query.is_empty:
        return Snapshot((), {})
    query = _expand_prefixes(conn, query, settings.trigram_expansion_budget)
    limit = max(60, want * 20)
    scores: dict[int, float] = {}
    for index, role in _PRIMARY:
        _rank_into(scores, conn, query, index, role, where, limit, settings)
    rows = _visible(hit_rows(conn, list(scores)))
    if len({row.conversation_id for row in rows.values()}) < want and query.trigram_fallback is not None:
        fallback: dict[int, float] = {}
        _rank_into(fallback, conn, query, *_FALLBACK, where, limit, settings)
        new = {i: s for i, s in fallback.items() if i not in scores}
        scores.update(new)
        rows.update(_visible(hit_rows(conn, list(new))))
    hits = sorted(
        (RankedHit(rows[i], score) for i, score in scores.items() if i in rows),
        key=lambda hit: (hit.score, -hit.row.id),
    )
    conversations = conversation_rows(conn, list(dict.fromkeys(hit.row.conversation_id for hit in hits)))
    return Snapshot(tuple(hits), conversations)


def _match_filter(conn: sqlite3.Connection, scope: SearchScope) -> MatchFilter:
    excluded = None
    if scope.current_conversation_id is not None:
        tip = tip_segment(conn, scope.current_conversation_id)
        excluded = None if tip is None else (scope.current_conversation_id, tip)
    if scope.everything:
        return MatchFilter(None, excluded)
    assert scope.person_id is not None  # SearchScope guarantees it
    return MatchFilter(tuple(participant_conversations(conn, scope.person_id)), excluded)


def _expand_prefixes(conn: sqlite3.Connection, query: FtsQuery, budget: int) -> FtsQuery:
    if not query.trigram_prefixes:
        return query
    # bm25 evaluates every clause for every ranked row, so the expansions share one budget: a long CJK
    # run yields several bigram prefixes, each with its most common continuations.
    each = max(_MIN_EXPANSIONS, min(MAX_EXPANSIONS_PER_PREFIX, budget // len(query.trigram_prefixes)))
    expansions = {
        prefix: vocabulary_terms(conn, "trigram", *trigram_prefix_bounds(prefix), each)
        for prefix in query.trigram_prefixes
    }
    return query.with_trigram_expansions(expansions)


def _rank_into(
    scores: dict[int, float],
    conn: sqlite3.Connection,
    query: FtsQuery,
    index: FtsIndex,
    role: ClauseRole,
    where: MatchFilter,
    limit: int,
    settings: SearchSettings,
) -> None:
    """Rank one expression of ``query`` and keep each message's best score in ``scores``."""
    name: FtsIndexName = "porter" if index is FtsIndex.PORTER else "trigram"
    expression = query.expression(index, role)
    if expression is None:
        return
    window = settings.rank_window
    if nth_newest_match(conn, name, expression, window + 1) is not None:
        expression = _without_common_clauses(conn, query, index, role, window) or expression
    bound = None
    if where.conversation_ids is not None:
        bound = nth_newest_match(conn, name, expression, settings.scoped_scan_limit + 1)
    for message_id, score in ranked_matches(
        conn, name, expression, where=where, window=window, limit=limit, above_rowid=bound
    ):
        known = scores.get(message_id)
        if known is None or score < known:
            scores[message_id] = score


def _without_common_clauses(
    conn: sqlite3.Connection, query: FtsQuery, index: FtsIndex, role: ClauseRole, window: int
) -> str | None:
    name: FtsIndexName = "porter" if index is FtsIndex.PORTER else "trigram"
    clauses = [c for c in query.clauses if c.index is index and c.role is role]
    if len(clauses) < 2:
        return None
    counts = {c: capped_count(conn, name, c.expression, window + 1) for c in clauses}
    # total_docs=window with max_share=1.0: drop every clause that alone matches more than the window.
    return trim_common_clauses(query, counts, window, max_share=1.0).expression(index, role)


def _visible(rows: dict[int, HitRow]) -> dict[int, HitRow]:
    return {i: row for i, row in rows.items() if _is_visible(row)}


def _is_visible(row: HitRow) -> bool:
    if row.role not in VISIBLE_ROLES or not row.content:
        return False
    return row.role != "tool" or row.tool_name not in HIDDEN_TOOLS
