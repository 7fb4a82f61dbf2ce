"""``PgSearchIndex``: the SearchIndex port on PostgreSQL — a planned query run in ONE read-only snapshot.

Invariants: every step of one search (scope, each ranked group, the fallback, conversation metadata) reads
the same repeatable-read snapshot, so hits and metadata agree; the plan becomes SQL only through
search_clauses.py (user text is always a bound parameter); visibility and ordering are the port's and
SQLite's: ``SEARCHED_ROLES`` with text, never ``UNSEARCHED_TOOLS``, never the caller's live tip segment,
archived segments as their conversation, ties to the newer message, FALLBACK clauses only when the
PRIMARY ones found fewer than ``want`` conversations.

The index is part of each row (search_ddl.py), so a committed message is searchable at once:
``wait_indexed`` is true at once, ``index_lag`` is 0 and health is "ok" with ``indexed_up_to == newest``
unless one of the search indexes is missing or being rebuilt (then search still answers, by scanning,
and health says "rebuilding"). ``index_position`` is a true watermark (see ``settled_message_id``).

Budget (``SearchBudget``): ``rank_window`` as on SQLite — each group ranks at most that many of its newest
matches, and when a group overflows it, clauses that alone fill the window are dropped unless none is
rarer (``trim_common``); ``expansion_budget`` has nothing to bound here (a 1-2 character CJK term is one
GIN lookup over every gram it starts, never a vocabulary expansion); ``scoped_scan_limit`` neither: the
scope's conversation ids reach the planner as an array, which reads a small person's messages through
``messages_conversation`` instead of walking a common term's matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..health import SearchHealth
from ..search_index import (
    ClauseRole,
    FoundMessage,
    SearchHit,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
)
from ..search_windows import SemanticStatus
from .engine import Conn, PgDatabase
from .search_clauses import PgClause, PgIndex, PgQuery, pg_query_for, trim_common
from .search_ddl import SEARCH_INDEXES
from .search_reads import (
    MatchFilter,
    capped_counts,
    conversation_infos,
    estimated_matches,
    invalid_indexes,
    message_windows,
    newest_message_id,
    participant_conversations,
    ranked_matches,
    settled_message_id,
)

_PRIMARY = tuple((index, ClauseRole.PRIMARY) for index in (PgIndex.VECTOR, PgIndex.GRAMS, PgIndex.TRIGRAM))
_FALLBACK = (PgIndex.TRIGRAM, ClauseRole.FALLBACK)
Found = dict[int, tuple[FoundMessage, float]]


class PgSearchIndex:
    """``SearchIndex`` over one ``PgDatabase``; ``health`` is what readiness reports for search."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._watermark = 0  # the newest position proven settled; positions only move forward

    async def search_messages(self, request: SearchRequest) -> SearchSnapshot:
        """The visible messages matching ``request.query`` in its scope, best first, from ONE snapshot."""
        query = pg_query_for(request.query)
        if query.is_empty:
            return SearchSnapshot((), {})
        return await self._db.run_read(lambda conn: search(conn, query, request))

    async def message_windows(
        self, anchors: Mapping[str, Sequence[int]], *, around: int
    ) -> dict[str, list[FoundMessage]]:
        """Per conversation id, its messages within ``around`` positions of any anchor id, in order."""
        return await self._db.run_read(lambda conn: message_windows(conn, anchors, around))

    async def participants(self, scope: SearchScope, words: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        """Per word of ``words`` naming a speaker, the conversations in ``scope`` where they speak."""
        return {}

    async def semantic_status(self) -> SemanticStatus:
        return SemanticStatus("off", detail="no embedding model configured")

    async def rebuild_semantic(self) -> None:
        return None

    async def index_position(self) -> int:
        """The newest message id below which no uncommitted message can still appear (every one is indexed).

        While other transactions are writing messages, the last position proven settled.
        """
        settled = await self._db.run_read(settled_message_id)
        if settled is not None:
            self._watermark = max(self._watermark, settled)
        return self._watermark

    async def index_lag(self) -> int:
        """Always 0: a message is indexed by the statement that stores it."""
        return 0

    async def wait_indexed(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline, not a cancel
        """True at once: whatever committed before this call was indexed by its own INSERT."""
        return True

    async def search_health(self) -> SearchHealth:
        return await self.health()

    async def health(self) -> SearchHealth:
        """ "ok" with ``indexed_up_to == newest``, or "rebuilding" while a search index is not usable."""

        async def read(conn: Conn) -> tuple[int, list[str]]:
            return await newest_message_id(conn), await invalid_indexes(conn, SEARCH_INDEXES)

        newest, missing = await self._db.run_read(read)
        if missing:
            detail = f"index {', '.join(missing)} missing or being built; searches scan meanwhile"
            return SearchHealth("rebuilding", newest, newest, detail=detail)
        return SearchHealth("ok", newest, newest)


async def search(conn: Conn, query: PgQuery, request: SearchRequest) -> SearchSnapshot:
    """Run ``query`` for ``request`` on one snapshot; ``request.want`` conversations will be shown."""
    where = await _match_filter(conn, request.scope)
    if where.conversation_ids == ():
        return SearchSnapshot((), {})
    plan = _Plan(where, max(60, request.want * 20), request.budget.rank_window, await newest_message_id(conn))
    found: Found = {}
    for index, role in _PRIMARY:
        await _rank_into(found, conn, query, index, role, plan)
    if len({row.conversation_id for row, _ in found.values()}) < request.want:
        fallback: Found = {}
        await _rank_into(fallback, conn, query, *_FALLBACK, plan)
        found.update({i: hit for i, hit in fallback.items() if i not in found})
    hits = sorted(
        (SearchHit(row, score) for row, score in found.values()), key=lambda h: (h.score, -h.message.id)
    )
    conversations = await conversation_infos(
        conn, list(dict.fromkeys(h.message.conversation_id for h in hits))
    )
    return SearchSnapshot(tuple(hits), conversations)


async def _match_filter(conn: Conn, scope: SearchScope) -> MatchFilter:
    if scope.everything:
        return MatchFilter(None, scope.current_conversation_id)
    assert scope.person_id is not None  # SearchScope guarantees it
    conversation_ids = tuple(await participant_conversations(conn, scope.person_id))
    return MatchFilter(conversation_ids, scope.current_conversation_id)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What every ranked group of one search shares: its filter, sizes and the corpus size."""

    where: MatchFilter
    limit: int
    window: int
    newest: int

    def walk(self, estimate: float) -> bool:
        """Whether the newest matches are dense enough that walking the key beats sorting the GIN's matches.

        A walk reads about ``window * newest / matches`` rows at ~1.5 µs each (a vector test); the GIN path
        fetches and sorts every match at ~6 µs each (measured on the bench corpus). The walk wins once
        ``matches² > window * newest / 4``, and never when the matches would not fill the window (it would
        then read every row).
        """
        return estimate > 2 * self.window and estimate * estimate > self.window * self.newest / 4


async def _rank_into(
    found: Found, conn: Conn, query: PgQuery, index: PgIndex, role: ClauseRole, plan: _Plan
) -> None:
    """Rank one clause group of ``query`` and keep each message's best score in ``found``."""
    group = query.group(index, role)
    if not group:
        return
    excluded = query.excluded(index)

    async def estimate(clauses: Sequence[PgClause]) -> float:
        return await estimated_matches(conn, index, clauses, excluded, plan.where)

    async def without_common(clauses: Sequence[PgClause]) -> tuple[PgClause, ...]:
        counts = await capped_counts(conn, index, clauses, plan.window + 1)
        return trim_common(query, clauses, counts, plan.window).group(index, role)

    # The planner's estimate predicts an overflowing window, so common clauses are usually trimmed before
    # the one ranked read; an overflow it did not predict is trimmed after it, as on SQLite.
    expected = await estimate(group)
    trimmed = len(group) > 1 and expected > plan.window
    if trimmed:
        narrower = await without_common(group)
        if len(narrower) < len(group):
            group, expected = narrower, await estimate(narrower)
    matches = await ranked_matches(
        conn,
        index,
        group,
        excluded,
        plan.where,
        window=plan.window,
        limit=plan.limit,
        walk=plan.walk(expected),
    )
    if not trimmed and matches.matched > plan.window and len(group) > 1:
        narrower = await without_common(group)
        if len(narrower) < len(group):
            walk = plan.walk(await estimate(narrower))
            matches = await ranked_matches(
                conn, index, narrower, excluded, plan.where, window=plan.window, limit=plan.limit, walk=walk
            )
    for row, score in matches.hits:
        known = found.get(row.id)
        if known is None or score < known[1]:
            found[row.id] = (row, score)
