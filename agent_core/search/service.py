"""SessionSearch: the search service behind the ``session_search`` tool and ``mnemogate search``.

Invariants: a search reads only the conversations its scope allows (a person's own or the ones they
wrote in; everything only for an explicit all-conversations scope); results name conversations, best
first, each with at most ``snippets_per_conversation`` distinct snippets; user text reaches the index
only as a ``plan_query`` plan, so no query text can raise a syntax error; the service talks to the
``SearchIndex`` port only (one read per search, one more for summaries); an optional model summary
per conversation falls back to the snippets on any failure.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from agent_core.llm import LLMClient
from agent_core.search.query import plan_query
from agent_core.search.results import ConversationResult, SearchResults, Snippet
from agent_core.search.settings import SearchSettings
from agent_core.search.snippets import highlight_terms, labelled, make_snippet
from agent_core.search.summariser import ConversationSummariser, excerpt_text
from agent_core.storage.search_index import (
    FoundMessage,
    SearchHit,
    SearchIndex,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
)

_SUMMARY_CONTEXT = 2


class SessionSearch:
    """Full-text search over past conversations, scoped to who is asking."""

    def __init__(
        self,
        index: SearchIndex,
        settings: SearchSettings | None = None,
        *,
        summary_client: LLMClient | None = None,
    ) -> None:
        self._index = index
        self.settings = settings or SearchSettings()
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
        snapshot = await self._index.search_messages(SearchRequest(plan, scope, want, self.settings.budget()))
        terms = highlight_terms(plan)
        results = [
            self._result(conversation_id, hits, snapshot, terms, scope)
            for conversation_id, hits in _grouped(snapshot.hits, want)
        ]
        if summarise and self._summariser is not None and results:
            results = await self._summarised(query, results, self._summariser)
        return SearchResults(query, tuple(results), plan.truncated)

    def _result(
        self,
        conversation_id: str,
        hits: Sequence[SearchHit],
        snapshot: SearchSnapshot,
        terms: Sequence[str],
        scope: SearchScope,
    ) -> ConversationResult:
        snippets: list[Snippet] = []
        seen: set[str] = set()
        for hit in hits:
            row = hit.message
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
        meta = snapshot.conversations.get(conversation_id)
        return ConversationResult(
            conversation_id=conversation_id,
            score=round(-hits[0].score, 4),
            snippets=tuple(snippets),
            title=meta.title if meta else None,
            platform=meta.platform if meta else None,
            person_id=meta.person_id if meta else None,
            started_at=meta.created_at if meta else None,
            current=conversation_id == scope.current_conversation_id,
        )

    async def _summarised(
        self, query: str, results: list[ConversationResult], summariser: ConversationSummariser
    ) -> list[ConversationResult]:
        anchors = {r.conversation_id: [s.message_id for s in r.snippets] for r in results}
        windows = await self._index.message_windows(anchors, around=_SUMMARY_CONTEXT)
        gate = asyncio.Semaphore(self.settings.summary_concurrency)

        async def one(result: ConversationResult) -> ConversationResult:
            rows: list[FoundMessage] = windows.get(result.conversation_id, [])
            async with gate:
                summary = await summariser.summarise(query, excerpt_text(rows, summariser.max_input_chars))
            return result if summary is None else _with_summary(result, summary)

        return list(await asyncio.gather(*(one(result) for result in results)))


def _grouped(hits: Sequence[SearchHit], want: int) -> list[tuple[str, list[SearchHit]]]:
    """Hits grouped by conversation, conversations ordered by their best hit, the first ``want``."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        conversation_id = hit.message.conversation_id
        if conversation_id not in groups and len(groups) >= want:
            continue
        groups.setdefault(conversation_id, []).append(hit)
    return list(groups.items())


def _with_summary(result: ConversationResult, summary: str) -> ConversationResult:
    return dataclasses.replace(result, summary=summary)
