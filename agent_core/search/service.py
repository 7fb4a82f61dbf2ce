"""SessionSearch: the search service behind ``session_search``, ``mnemogate search``, the admin search and the
``local`` provider's recall.

Invariants: a search reads only the conversations its scope allows (a person's own or the ones they
wrote in; everything only for an explicit all-conversations scope); results name conversations, best
first, each with at most ``snippets_per_conversation`` distinct snippets; user text reaches the index
only as a ``plan_query`` plan, so no query text can raise a syntax error; the service talks to the
``SearchIndex`` port only (a names lookup, one search read, one more for summaries); ranking is
fusion.py's (names demoted, windows of turns, lexical and semantic fused); the semantic side runs only
for natural-language queries (not for quoted phrases, identifiers or prefixes alone) when a model is
loaded, and the results say when they are lexical only and why; an optional model summary per
conversation falls back to the snippets on any failure.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence

from agent_core.llm import LLMClient
from agent_core.metering import UsageRecorder
from agent_core.search.fusion import (
    RankedConversation,
    demote_names,
    fuse,
    message_ranking,
    name_candidates,
    participant_ranking,
    semantic_ranking,
    window_ranking,
)
from agent_core.search.query import plan_query
from agent_core.search.results import ConversationResult, RecallMode, SearchResults, Snippet
from agent_core.search.settings import SearchSettings
from agent_core.search.snippets import highlight_terms, labelled, make_snippet
from agent_core.search.summariser import ConversationSummariser, excerpt_text
from agent_core.storage.records import UsageKind
from agent_core.storage.search_index import (
    FoundMessage,
    PlannedQuery,
    SearchIndex,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
    WindowHit,
)
from agent_core.storage.search_windows import Embedder

_SUMMARY_CONTEXT = 2
# e5 reads at most 512 tokens; a query longer than this is cut before it is embedded.
_QUERY_EMBED_CHARS = 1_000


class SessionSearch:
    """Full-text search over past conversations, scoped to who is asking."""

    def __init__(
        self,
        index: SearchIndex,
        settings: SearchSettings | None = None,
        *,
        summary_client: LLMClient | None = None,
        embedder: Embedder | None = None,
        semantic_note: str = "",
        usage: UsageRecorder | None = None,
    ) -> None:
        """``embedder``: the model for query vectors (None: lexical only; ``semantic_note`` is why, and
        every result then says so); ``usage``: where summary calls are charged (to the conversation the
        search is made from; None: not recorded)."""
        self._index = index
        self._usage = usage
        self.settings = settings or SearchSettings()
        self._embedder = embedder if self.settings.semantic.enabled else None
        if embedder is not None and not self.settings.semantic.enabled:
            semantic_note = semantic_note or "semantic search is turned off (search.semantic.enabled: false)"
        self._semantic_note = semantic_note
        self._summariser = (
            None
            if summary_client is None
            else ConversationSummariser(
                summary_client,
                timeout_s=self.settings.summary_timeout_s,
                max_tokens=self.settings.summary_max_tokens,
                max_input_chars=self.settings.summary_input_chars,
            )
        )

    def clamp_limit(self, limit: int | None) -> int:
        wanted = self.settings.default_limit if limit is None else limit
        return max(1, min(wanted, self.settings.max_limit))

    async def search(
        self, query: str, scope: SearchScope, *, limit: int | None = None, summarise: bool = True
    ) -> SearchResults:
        """The conversations in ``scope`` that best match ``query``, at most ``limit`` (clamped)."""
        want = self.clamp_limit(limit)
        plan = plan_query(query)
        vector = asyncio.ensure_future(self._query_vector(query, plan))
        try:
            ranked_plan, by_name = await self._demoted(plan, scope)
            query_vector = await vector
        finally:
            vector.cancel()
        request = SearchRequest(
            ranked_plan,
            scope,
            want,
            self.settings.budget(),
            query_vector=query_vector,
            semantic_limit=self.settings.semantic.candidates,
        )
        snapshot = await self._index.search_messages(request)
        ranking = self._rank(snapshot, plan, query_vector is not None, by_name)
        terms = highlight_terms(plan)
        found = {hit.message.id: hit.message for hit in snapshot.hits} | dict(snapshot.messages)
        results = [self._result(item, found, snapshot, terms, scope) for item in ranking[:want]]
        if summarise and self._summariser is not None and results:
            results = await self._summarised(query, results, self._summariser, scope)
        mode, note = self._mode(snapshot, plan, query_vector is not None)
        return SearchResults(query, tuple(results), plan.truncated, mode, note)

    async def _demoted(
        self, plan: PlannedQuery, scope: SearchScope
    ) -> tuple[PlannedQuery, list[RankedConversation]]:
        """The plan without clauses that only name participants, and the ranking those names give."""
        if not self.settings.demote_names:
            return plan, []
        words = name_candidates(plan)
        participants = await self._index.participants(scope, words) if words else {}
        demoted, dropped = demote_names(plan, frozenset(participants))
        return demoted, participant_ranking(participants, dropped)

    async def _query_vector(self, query: str, plan: PlannedQuery) -> tuple[float, ...] | None:
        embedder = self._embedder
        if embedder is None or not _natural_language(plan):
            return None
        vector = await asyncio.to_thread(embedder.embed_query, query[:_QUERY_EMBED_CHARS])
        return tuple(float(x) for x in vector)

    def _rank(
        self,
        snapshot: SearchSnapshot,
        plan: PlannedQuery,
        semantic: bool,
        by_name: list[RankedConversation],
    ) -> list[RankedConversation]:
        settings = self.settings
        if settings.ranking == "messages":
            lexical = message_ranking(snapshot.hits)
        else:
            lexical = window_ranking(snapshot.hits, snapshot.windows)
        rankings = [(lexical, 1.0)]
        if semantic and snapshot.semantic and self._embedder is not None:
            floor = settings.semantic.min_similarity
            floor = self._embedder.similarity_floor if floor is None else floor
            near = [
                hit
                for hit in snapshot.semantic
                if hit.similarity >= floor and not _excluded(hit, plan, snapshot.messages)
            ]
            margin = settings.semantic.similarity_margin
            rankings.append((semantic_ranking(near, margin), settings.semantic.weight))
        if by_name:
            rankings.append((by_name, settings.name_weight))
        if len(rankings) == 1:
            return lexical
        return fuse(rankings, settings.rrf_k)

    def _mode(
        self, snapshot: SearchSnapshot, plan: PlannedQuery, asked: bool
    ) -> tuple[RecallMode, str | None]:
        if not asked:
            if self._embedder is None:
                return "lexical", self._semantic_note or None
            return "lexical", None if not _natural_language(plan) else "no query vector"
        status = snapshot.semantic_status
        if status.state == "ready":
            return "hybrid", None
        if status.state == "building":
            return (
                "hybrid",
                f"the semantic index is still building ({status.embedded} of {status.windows} windows)",
            )
        return "lexical", status.detail or f"semantic index {status.state}"

    def _result(
        self,
        item: RankedConversation,
        found: dict[int, FoundMessage],
        snapshot: SearchSnapshot,
        terms: Sequence[str],
        scope: SearchScope,
    ) -> ConversationResult:
        snippets: list[Snippet] = []
        seen: set[str] = set()
        for message_id in item.evidence:
            row = found.get(message_id)
            if row is None:
                continue
            text, untrusted = labelled(
                make_snippet(row.content or "", terms, self.settings.snippet_chars), row.role, row.tool_name
            )
            # Compression copies messages into the next segment; one excerpt of each text is enough.
            if text in seen:
                continue
            seen.add(text)
            snippets.append(Snippet(row.id, row.role, text, untrusted))
            if len(snippets) >= self.settings.snippets_per_conversation:
                break
        conversation_id = item.conversation_id
        meta = snapshot.conversations.get(conversation_id)
        return ConversationResult(
            conversation_id=conversation_id,
            score=round(item.relevance, 4),
            snippets=tuple(snippets),
            title=meta.title if meta else None,
            platform=meta.platform if meta else None,
            person_id=meta.person_id if meta else None,
            started_at=meta.created_at if meta else None,
            current=conversation_id == scope.current_conversation_id,
        )

    async def _summarised(
        self,
        query: str,
        results: list[ConversationResult],
        summariser: ConversationSummariser,
        scope: SearchScope,
    ) -> list[ConversationResult]:
        anchors = {r.conversation_id: [s.message_id for s in r.snippets] for r in results}
        windows = await self._index.message_windows(anchors, around=_SUMMARY_CONTEXT)
        gate = asyncio.Semaphore(self.settings.summary_concurrency)

        async def one(result: ConversationResult) -> ConversationResult:
            rows: list[FoundMessage] = windows.get(result.conversation_id, [])
            async with gate:
                reply = await summariser.summarise(query, excerpt_text(rows, summariser.max_input_chars))
            caller = scope.current_conversation_id
            if self._usage is not None and caller is not None:
                kind = UsageKind.SEARCH_SUMMARY
                await self._usage.record(caller, summariser.client_name, kind, reply.usage)
            return result if reply.text is None else _with_summary(result, reply.text)

        return list(await asyncio.gather(*(one(result) for result in results)))


def _natural_language(plan: PlannedQuery) -> bool:
    """Whether a query asks in words (the semantic side helps), not only for exact text or prefixes."""
    return any(term.isalpha() for term in plan.terms)


def _excluded(hit: WindowHit, plan: PlannedQuery, messages: Mapping[int, FoundMessage]) -> bool:
    """A window that holds a word the query excludes (``NOT staging``) takes no part."""
    if not plan.excluded:
        return False
    words = [word.casefold() for word in plan.excluded]
    for message_id in hit.window.message_ids:
        row = messages.get(message_id)
        text = (row.content or "").casefold() if row is not None else ""
        if any(word in text for word in words):
            return True
    return False


def _with_summary(result: ConversationResult, summary: str) -> ConversationResult:
    return dataclasses.replace(result, summary=summary)
