"""The SQLite side of the SearchIndex port: one planned query run in ONE read snapshot, hits ranked by bm25.

Runs on a reader thread with the sidecar attached (``StateStore.search_messages``), so every step sees
the same committed state: scope resolution, trigram-prefix expansion through the vocabulary, ranking per
index, and fetching the hit rows. The planned query becomes FTS5 syntax only here (match_expressions.py).

Cost bounds (why search stays fast when a term is in most messages):
- bm25 is computed for at most ``rank_window`` matches per expression (the newest ones): exact
  ranking whenever an expression matches fewer messages, recency-first otherwise;
- when an expression overflows the window, each of its clauses is counted (capped) and those that
  alone fill the window are dropped (``trim_common_clauses``) unless none is rarer, so a rare word is
  not crowded out of the window by a common one;
- a person-scoped search filters by that person's message ids inside the FTS5 scan, before ranking,
  and reads at most ``scoped_scan_limit`` of the newest matches.
Visibility (the port's rule): only ``SEARCHED_ROLES`` messages of the scope's conversations; never the
caller's live tip segment; never ``UNSEARCHED_TOOLS`` results (they would echo other hits).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Mapping, Sequence

from ..errors import UnknownSegmentError
from ..search_index import (
    PARTICIPANT_CONVERSATIONS,
    SEARCHED_ROLES,
    UNSEARCHED_TOOLS,
    ClauseRole,
    FoundMessage,
    SearchBudget,
    SearchHit,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
    WindowHit,
)
from ..search_windows import SemanticStatus
from .conversations import tip_segment_id
from .fts_query import FtsIndexName
from .match_expressions import (
    MAX_EXPANSIONS_PER_PREFIX,
    FtsIndex,
    FtsQuery,
    fts_query_for,
    trigram_prefix_bounds,
    trim_common_clauses,
)
from .search_reads import (
    MatchFilter,
    capped_count,
    conversation_infos,
    found_messages,
    message_windows,
    nth_newest_match,
    participant_conversations,
    ranked_matches,
    require_index,
    vocabulary_terms,
)
from .semantic_reads import VectorCache, nearest_windows, participants, windows_of
from .window_store import semantic_progress

_MIN_EXPANSIONS = 4
_PRIMARY = ((FtsIndex.PORTER, ClauseRole.PRIMARY), (FtsIndex.TRIGRAM, ClauseRole.PRIMARY))
_FALLBACK = (FtsIndex.TRIGRAM, ClauseRole.FALLBACK)


def search_messages(
    conn: sqlite3.Connection, request: SearchRequest, vectors: VectorCache | None = None
) -> SearchSnapshot:
    """Run ``request`` on a reader connection with the sidecar attached as ``idx``.

    ``vectors``: the process's window vectors (None: no model here, so a query vector finds nothing).
    """
    require_index(conn)
    where = _match_filter(conn, request.scope)
    lexical = execute(conn, fts_query_for(request.query), request.scope, request.want, request.budget, where)
    windows = windows_of(conn, [hit.message.id for hit in lexical.hits])
    if request.query_vector is None:
        return dataclasses.replace(lexical, windows=windows)
    if vectors is None:
        status = SemanticStatus("off", detail="no embedding model in this process")
        return dataclasses.replace(lexical, windows=windows, semantic_status=status)
    semantic: list[WindowHit] = []
    if where.conversation_ids != ():
        semantic, _ = nearest_windows(conn, vectors, request.query_vector, where, request.semantic_limit)
    members = _visible(found_messages(conn, [i for hit in semantic for i in hit.window.message_ids]))
    semantic = [hit for hit in semantic if any(i in members for i in hit.window.message_ids)]
    infos = conversation_infos(conn, [h.window.conversation_id for h in semantic if h.window.conversation_id])
    return dataclasses.replace(
        lexical,
        conversations={**infos, **lexical.conversations},
        windows=windows,
        semantic=tuple(semantic),
        messages=members,
        semantic_status=_semantic_state(conn, vectors.model_id),
    )


def _semantic_state(conn: sqlite3.Connection, model_id: str) -> SemanticStatus:
    """Ready when every stored window has a vector of ``model_id`` (two O(1) reads), else building."""
    newest = conn.execute("SELECT max(id) FROM idx.windows").fetchone()[0]
    progress = semantic_progress(conn, "idx")
    embedded = progress[2] if progress is not None and progress[0] == model_id else 0
    behind = newest is not None and embedded < int(newest)
    return SemanticStatus("building" if behind else "ready", int(newest or 0), embedded, model_id)


def execute(
    conn: sqlite3.Connection,
    query: FtsQuery,
    scope: SearchScope,
    want: int,
    budget: SearchBudget,
    where: MatchFilter | None = None,
) -> SearchSnapshot:
    """Run ``query`` for ``scope``; ``want`` is how many conversations the caller will show."""
    require_index(conn)
    where = where or _match_filter(conn, scope)
    if where.conversation_ids == () or query.is_empty:
        return SearchSnapshot((), {})
    query = _expand_prefixes(conn, query, budget.expansion_budget)
    limit = max(60, want * 20)
    scores: dict[int, float] = {}
    for index, role in _PRIMARY:
        _rank_into(scores, conn, query, index, role, where, limit, budget)
    rows = _visible(found_messages(conn, list(scores)))
    if len({row.conversation_id for row in rows.values()}) < want and query.trigram_fallback is not None:
        fallback: dict[int, float] = {}
        _rank_into(fallback, conn, query, *_FALLBACK, where, limit, budget)
        new = {i: s for i, s in fallback.items() if i not in scores}
        scores.update(new)
        rows.update(_visible(found_messages(conn, list(new))))
    hits = sorted(
        (SearchHit(rows[i], score) for i, score in scores.items() if i in rows),
        key=lambda hit: (hit.score, -hit.message.id),
    )
    conversations = conversation_infos(conn, list(dict.fromkeys(hit.message.conversation_id for hit in hits)))
    return SearchSnapshot(tuple(hits), conversations)


def windows(
    conn: sqlite3.Connection, anchors: Mapping[str, Sequence[int]], around: int
) -> dict[str, list[FoundMessage]]:
    """``message_windows`` of every conversation in ``anchors``, in one read."""
    return {cid: message_windows(conn, cid, ids, around=around) for cid, ids in anchors.items()}


def scoped_participants(
    conn: sqlite3.Connection, scope: SearchScope, words: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Per word of ``words`` naming a speaker, the conversations ``scope`` may read where they speak."""
    require_index(conn)
    conversations = None if scope.everything else _match_filter(conn, scope).conversation_ids
    return participants(conn, words, conversations, PARTICIPANT_CONVERSATIONS)


def _match_filter(conn: sqlite3.Connection, scope: SearchScope) -> MatchFilter:
    excluded = None
    if scope.current_conversation_id is not None:
        with contextlib.suppress(UnknownSegmentError):  # an unknown conversation has no tip to skip
            excluded = (scope.current_conversation_id, tip_segment_id(conn, scope.current_conversation_id))
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
    budget: SearchBudget,
) -> None:
    """Rank one expression of ``query`` and keep each message's best score in ``scores``."""
    name: FtsIndexName = "porter" if index is FtsIndex.PORTER else "trigram"
    expression = query.expression(index, role)
    if expression is None:
        return
    window = budget.rank_window
    if nth_newest_match(conn, name, expression, window + 1) is not None:
        expression = _without_common_clauses(conn, query, index, role, window) or expression
    bound = None
    if where.conversation_ids is not None:
        bound = nth_newest_match(conn, name, expression, budget.scoped_scan_limit + 1)
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


def _visible(rows: dict[int, FoundMessage]) -> dict[int, FoundMessage]:
    return {i: row for i, row in rows.items() if _is_visible(row)}


def _is_visible(row: FoundMessage) -> bool:
    if row.role not in SEARCHED_ROLES or not row.content:
        return False
    return row.role != "tool" or row.tool_name not in UNSEARCHED_TOOLS
