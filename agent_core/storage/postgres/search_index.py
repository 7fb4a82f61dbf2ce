"""``PgSearchIndex``: the SearchIndex port on PostgreSQL — a planned query run in ONE read-only snapshot.

Invariants: every step of one search (scope, each ranked group, the fallback, conversation metadata) reads
the same repeatable-read snapshot, so hits and metadata agree — also when two costly groups are ranked side
by side, the second on a spare pooled connection that adopts the search's snapshot (``snapshot_reader``);
the plan becomes SQL only through search_clauses.py (user text is always a bound parameter); visibility and
ordering are the port's and
SQLite's: ``SEARCHED_ROLES`` with text, never ``UNSEARCHED_TOOLS``, never the caller's live tip segment,
archived segments as their conversation, ties to the newer message, FALLBACK clauses only when the
PRIMARY ones found fewer than ``want`` conversations.

The index is part of each row (search_ddl.py), so a committed message is searchable at once:
``wait_indexed`` is true at once, ``index_lag`` is 0 and health is "ok" with ``indexed_up_to == newest``
unless one of the search indexes is missing or being rebuilt (then search still answers, by scanning,
and health says "rebuilding"). ``index_position`` is a true watermark (see ``settled_message_id``).

Budget (``SearchBudget``): ``rank_window`` as on SQLite — each group ranks at most that many of its newest
matches, and when a group overflows it, clauses that alone fill the window are dropped unless none is rarer
(``trim_common``). The one difference: a clause's matches are counted among the messages the search may return
(visible, in its scope), where SQLite counts every message, so words other people use often never drop a word
that is rare in one person's own conversations; ``expansion_budget`` has nothing to bound here (a 1-2
character CJK term is one GIN lookup over every gram it starts, never a vocabulary expansion);
``scoped_scan_limit`` neither: the scope's conversation ids reach the planner as an array, which reads a small
person's messages through ``messages_conversation`` instead of walking a common term's matches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..health import SearchHealth
from ..search_index import (
    PARTICIPANT_CONVERSATIONS,
    ClauseRole,
    FoundMessage,
    SearchHit,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
    WindowHit,
    WindowRef,
)
from ..search_windows import Embedder, SemanticStatus
from .engine import Conn, PgDatabase, side_by_side
from .search_clauses import PgClause, PgIndex, PgQuery, pg_query_for, trim_common
from .search_ddl import SEARCH_INDEXES
from .search_reads import (
    MatchEstimate,
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
    start_ranked_reads,
    visible_messages,
)
from .window_builder import Horizon, build_batch
from .window_vectors import (
    PgVectorCache,
    forget_vectors,
    nearest_windows,
    participants,
    semantic_state,
    windows_of,
)

_PRIMARY = tuple((index, ClauseRole.PRIMARY) for index in (PgIndex.VECTOR, PgIndex.GRAMS, PgIndex.TRIGRAM))
_FALLBACK = (PgIndex.TRIGRAM, ClauseRole.FALLBACK)
Found = dict[int, tuple[FoundMessage, float]]
# A word clause asks its English stem OR its unstemmed form, two lexemes found in the same messages, and
# the planner adds their frequencies as if independent: its estimate of one word is about twice the truth
# (the English side of a stopword is empty, so there it is the truth; estimates only decide costs).
_SIDES = {PgIndex.VECTOR: 2.0}
# Two groups are ranked side by side (a second connection on the search's snapshot) only when the cheaper of
# the two costliest is predicted to rank this many matches: ~6 µs each, against ~1 ms for sharing.
_SHARED_MATCHES = 400


class PgSearchIndex:
    """``SearchIndex`` over one ``PgDatabase``; ``health`` is what readiness reports for search."""

    def __init__(self, db: PgDatabase, embedder: Embedder | None = None) -> None:
        """``embedder``: the model whose vectors semantic searches use (None: lexical only)."""
        self._db = db
        self._watermark = 0  # the newest position proven settled; positions only move forward
        self._vectors = PgVectorCache(embedder.model_id, embedder.dim) if embedder is not None else None

    async def search_messages(self, request: SearchRequest) -> SearchSnapshot:
        """The visible messages matching ``request.query`` in its scope, best first, from ONE snapshot."""
        query = pg_query_for(request.query)
        vectors = self._vectors

        async def read(conn: Conn) -> SearchSnapshot:
            where = await _match_filter(conn, request.scope)
            empty = query.is_empty
            lexical = SearchSnapshot((), {}) if empty else await search(self._db, conn, query, request, where)
            windows = await windows_of(conn, [hit.message for hit in lexical.hits])
            if request.query_vector is None:
                return dataclasses.replace(lexical, windows=windows)
            if vectors is None:
                status = SemanticStatus("off", detail="no embedding model in this process")
                return dataclasses.replace(lexical, windows=windows, semantic_status=status)
            return await _with_semantic(conn, lexical, windows, request, where, vectors)

        return await self._db.run_read(read)

    async def message_windows(
        self, anchors: Mapping[str, Sequence[int]], *, around: int
    ) -> dict[str, list[FoundMessage]]:
        """Per conversation id, its messages within ``around`` positions of any anchor id, in order."""
        return await self._db.run_read(lambda conn: message_windows(conn, anchors, around))

    async def participants(self, scope: SearchScope, words: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        """Per word of ``words`` naming a speaker, the conversations in ``scope`` where they speak."""
        if not words:
            return {}

        async def read(conn: Conn) -> dict[str, tuple[str, ...]]:
            where = await _match_filter(conn, scope)
            return await participants(conn, words, where.conversation_ids, PARTICIPANT_CONVERSATIONS)

        return await self._db.run_read(read)

    async def semantic_status(self) -> SemanticStatus:
        """How many windows exist and how many carry a vector of this process's model."""
        if self._vectors is None:
            return SemanticStatus("off", detail="no embedding model configured")
        model_id = self._vectors.model_id
        return await self._db.run_read(lambda conn: semantic_state(conn, model_id, counted=True))

    async def rebuild_semantic(self) -> None:
        """Forget every stored vector; whichever host embeds next starts again from the first window."""
        await self._db.run_write(lambda conn: forget_vectors(conn))

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
        """Whatever committed before this call is found by its own INSERT's index at once; this waits until
        its search windows are built too (building them here rather than waiting for the background
        worker), False on timeout."""
        deadline = time.monotonic() + timeout
        horizon = Horizon()
        target = await self._db.run_autocommit_read(horizon.advance)
        drawn = max(target, *(value for value, _ in horizon.candidates), 0)
        while True:
            settled = await self._db.run_autocommit_read(horizon.advance)
            marks = await self._db.run_write(
                functools.partial(build_batch, up_to=min(settled, drawn), limit=5_000)
            )
            if marks is not None and marks[1] >= drawn:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)

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


async def _with_semantic(
    conn: Conn,
    lexical: SearchSnapshot,
    windows: Mapping[int, tuple[WindowRef, ...]],
    request: SearchRequest,
    where: MatchFilter,
    vectors: PgVectorCache,
) -> SearchSnapshot:
    """``lexical`` with the windows nearest the request's vector (visible turns only) and their turns."""
    assert request.query_vector is not None
    semantic: list[WindowHit] = []
    if where.conversation_ids != ():
        tip = await _tip_segment(conn, where.current_conversation_id)
        semantic = await nearest_windows(
            conn, vectors, request.query_vector, where.conversation_ids, tip, request.semantic_limit
        )
    members = await visible_messages(conn, [i for hit in semantic for i in hit.window.message_ids])
    semantic = [hit for hit in semantic if any(i in members for i in hit.window.message_ids)]
    infos = await conversation_infos(conn, list(dict.fromkeys(h.window.conversation_id for h in semantic)))
    return dataclasses.replace(
        lexical,
        conversations={**infos, **lexical.conversations},
        windows=windows,
        semantic=tuple(semantic),
        messages=members,
        semantic_status=await semantic_state(conn, vectors.model_id, counted=False),
    )


async def _tip_segment(conn: Conn, conversation_id: str | None) -> str | None:
    if conversation_id is None:
        return None
    row = await (
        await conn.execute("SELECT tip_segment_id FROM conversations WHERE id = %s", (conversation_id,))
    ).fetchone()
    return str(row[0]) if row is not None else None


async def search(
    db: PgDatabase, conn: Conn, query: PgQuery, request: SearchRequest, where: MatchFilter | None = None
) -> SearchSnapshot:
    """Run ``query`` for ``request`` on ``conn``'s snapshot; ``request.want`` conversations will be shown."""
    where = where or await _match_filter(conn, request.scope)
    if where.conversation_ids == ():
        return SearchSnapshot((), {})
    newest = await start_ranked_reads(conn)
    plan = _Plan(where, max(60, request.want * 20), request.budget.rank_window, newest)
    found: Found = {}
    groups = [(index, role) for index, role in _PRIMARY if query.group(index, role)]
    await _rank_groups(found, db, conn, query, groups, plan)
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


async def _rank_groups(
    found: Found,
    db: PgDatabase,
    conn: Conn,
    query: PgQuery,
    groups: Sequence[tuple[PgIndex, ClauseRole]],
    plan: _Plan,
) -> None:
    """Rank ``groups`` into ``found``, the costliest beside the others when two of them are predicted to
    cost enough and the pool spares a second connection: it reads ``conn``'s snapshot, so the results are
    those of ranking them one after another (each message keeps its best score, whichever group found
    it). A query often has two costly groups: a CJK term's bigrams and its substrings (20 ms each over
    100,000 messages), or words next to an identifier."""
    if len(groups) < 2:
        await _rank_each(found, conn, query, [(*group, None) for group in groups], plan)
        return
    guesses = [await _estimate(conn, query, index, query.group(index, role), plan) for index, role in groups]
    planned = [(index, role, guess) for (index, role), guess in zip(groups, guesses, strict=True)]
    costs = [min(guess.total, plan.window) for guess in guesses]
    if sorted(costs)[-2] >= _SHARED_MATCHES:
        async with db.snapshot_reader(conn) as reader:
            if reader is not None:
                await start_ranked_reads(reader)
                costliest = planned[costs.index(max(costs))]
                side: Found = {}
                await side_by_side(
                    _rank_each(found, conn, query, [g for g in planned if g is not costliest], plan),
                    _rank_each(side, reader, query, [costliest], plan),
                )
                for message_id, (row, score) in side.items():
                    if message_id not in found or score < found[message_id][1]:
                        found[message_id] = (row, score)
                return
    await _rank_each(found, conn, query, planned, plan)


async def _rank_each(
    found: Found,
    conn: Conn,
    query: PgQuery,
    groups: Sequence[tuple[PgIndex, ClauseRole, MatchEstimate | None]],
    plan: _Plan,
) -> None:
    for index, role, guess in groups:
        await _rank_into(found, conn, query, index, role, plan, guess)


async def _estimate(
    conn: Conn, query: PgQuery, index: PgIndex, clauses: Sequence[PgClause], plan: _Plan
) -> MatchEstimate:
    """The planner's estimate of ``clauses``' matches, each word counted once (``_SIDES``)."""
    planned = await estimated_matches(conn, index, clauses, query.excluded(index), plan.where)
    sides = _SIDES.get(index, 1.0)
    largest = None if planned.largest_clause is None else planned.largest_clause / sides
    return MatchEstimate(planned.total / sides, largest)


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

    @property
    def walk_floor(self) -> int:
        """The fewest matches for which ``walk`` holds."""
        return math.floor(max(2 * self.window, math.sqrt(self.window * self.newest / 4))) + 1

    def doubtful_walk(self, estimate: float) -> bool:
        """Whether a walk chosen on ``estimate`` would be the wrong choice were the truth a quarter of it."""
        return self.walk(estimate) and not self.walk(estimate / 4)


async def _rank_into(
    found: Found,
    conn: Conn,
    query: PgQuery,
    index: PgIndex,
    role: ClauseRole,
    plan: _Plan,
    guess: MatchEstimate | None = None,
) -> None:
    """Rank one clause group of ``query`` and keep each message's best score in ``found``; ``guess``: the
    planner's estimate of the group's matches, when already asked (``_estimate``)."""
    group = query.group(index, role)
    if not group:
        return
    excluded = query.excluded(index)

    async def estimate(clauses: Sequence[PgClause]) -> MatchEstimate:
        return await _estimate(conn, query, index, clauses, plan)

    async def without_common(clauses: Sequence[PgClause], cap: int) -> tuple[tuple[PgClause, ...], float]:
        """The clauses kept once common ones are trimmed, and how many messages they can match at most.

        A clause is common when it alone has more than the window's matches among the messages this
        search may return; when every clause is, the first is kept (counts above the window tie, as on
        SQLite). Each clause is counted up to ``cap`` (at least the window + 1; exact below it), so the sum
        of the kept counts bounds their matches from above whenever every kept count is below it: a bound
        that replaces the planner's estimate for the walk-or-index choice.
        """
        counts = await capped_counts(conn, index, clauses, excluded, plan.where, cap)
        tied = [min(n, plan.window + 1) for n in counts]
        kept = trim_common(query, clauses, tied, plan.window).group(index, role)
        kept_counts = [n for clause, n in zip(clauses, counts, strict=True) if any(clause is k for k in kept)]
        bound = float(sum(kept_counts)) if all(n < cap for n in kept_counts) else math.inf
        return kept, bound

    # Counting each clause's matches costs about what ranking a window does, so it is done before the one
    # ranked read only when the planner's estimate says it pays: a clause that alone overflows the window
    # (it will be trimmed), or a walk that a smaller true count would make the wrong choice (the counts
    # bound the matches; estimates run up to four times the truth, and a walk chosen on one read 54,000
    # rows for 4,618 matches). Otherwise a clause that alone overflows makes the group's matches overflow
    # too, and is counted and trimmed after the read: both ways count the same messages (those the
    # search may return), so the prediction changes the cost of a search, never its results.
    if guess is None:
        guess = await estimate(group)
    expected = guess.total
    common = len(group) > 1 and (guess.largest_clause is None or guess.largest_clause > plan.window)
    doubtful = plan.doubtful_walk(expected)
    counted = expected > plan.window and (common or doubtful)
    if counted:
        narrower, bound = await without_common(group, plan.walk_floor if doubtful else plan.window + 1)
        if len(narrower) < len(group):
            group, expected = narrower, (await estimate(narrower)).total
        expected = min(expected, bound)
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
    if not counted and matches.matched > plan.window and len(group) > 1:
        narrower, bound = await without_common(group, plan.window + 1)
        if len(narrower) < len(group):
            walk = plan.walk(min((await estimate(narrower)).total, bound))
            matches = await ranked_matches(
                conn, index, narrower, excluded, plan.where, window=plan.window, limit=plan.limit, walk=walk
            )
    for row, score in matches.hits:
        known = found.get(row.id)
        if known is None or score < known[1]:
            found[row.id] = (row, score)
