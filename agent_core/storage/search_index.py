"""The session-search port: a planned query and its scope in, ranked visible messages out, in any dialect;
plus the search windows holding those messages and, given a query vector, the windows nearest to it.

Invariants: nothing here names a query language (no MATCH string, no tokenizer, no rowid): a planned
query is words, phrases, substrings and short prefixes the planner (agent_core.search.query) derived
from user text, and a backend translates them into its own safe syntax, so no user text can ever become
query syntax; a search reads only the conversations its ``SearchScope`` allows, for words and vectors
alike; results name messages and conversations, never a backend's index rows (a window's id is opaque:
its message ids say what it holds).

Ordering rule (what a backend must honour for ``index_position`` and ``wait_indexed``): the index's
progress mark is a *watermark* — a position below which no uncommitted message can later appear. An
indexer may advance its mark to W only when every message at or below W is either committed and indexed
or will never exist. On SQLite the watermark is the largest committed message id (writers are
serialised, so ids become visible in commit order); a backend with concurrent writers must not use
"the largest id I have seen" (a smaller id may still commit) but a per-row commit sequence assigned under
a lock at commit, or a transaction-id horizon (no transaction older than the horizon is still open).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from agent_core.actor import Actor

from .health import SearchHealth
from .search_windows import SemanticStatus

# Only these roles are searched; system prompts and summaries-as-system are not conversation text.
SEARCHED_ROLES: Final = frozenset({"user", "assistant", "tool"})
# How many conversations ``SearchIndex.participants`` lists per name.
PARTICIPANT_CONVERSATIONS: Final = 1_000
# Results of earlier searches are never searched again: they only echo other hits.
UNSEARCHED_TOOLS: Final = frozenset({"session_search"})


class SearchScopeError(ValueError):
    """A search was asked for without saying whose conversations it may read."""


@dataclass(frozen=True, slots=True)
class SearchScope:
    """Whose conversations one search may read: one person's (owned or written in), or every one (admins).

    A person's scope covers the conversations they own and the shared ones (group chats, threads) they
    wrote a message in. ``current_conversation_id``: the conversation the search is made from; its
    archived (compressed) segments are searched like any other, its live tip segment is skipped
    (already in the context). A scope always names its reader: there is no default that reads
    everything, so a forgotten argument never widens a person's search to other people's conversations.
    """

    person_id: str | None
    everything: bool = False
    current_conversation_id: str | None = None

    def __post_init__(self) -> None:
        if not self.everything and not self.person_id:
            raise SearchScopeError("a search scope needs a person_id unless it covers everything")

    @classmethod
    def person(cls, person_id: str, *, current_conversation_id: str | None = None) -> SearchScope:
        """Conversations ``person_id`` owns or wrote in."""
        return cls(person_id, False, current_conversation_id)

    @classmethod
    def all_conversations(cls, *, current_conversation_id: str | None = None) -> SearchScope:
        """Every conversation (admins and the operator's console)."""
        return cls(None, True, current_conversation_id)

    @classmethod
    def for_actor(cls, actor: Actor) -> SearchScope:
        """What ``actor`` may read, searching from its conversation: everything for an admin, else its own.

        The one place a search scope is derived from who is asking (tool, CLI and admin paths call it).
        """
        if actor.is_admin:
            return cls.all_conversations(current_conversation_id=actor.conversation_id)
        return cls.person(actor.person_id, current_conversation_id=actor.conversation_id)


class MatchKind(enum.Enum):
    """How a clause's text is matched against message text."""

    # Word tokens, stemmed and with diacritics folded ("running" finds "runs"); adjacent tokens of a
    # clause form a phrase. Scripts written without spaces form one token per run.
    WORDS = "words"
    # A case-folded substring of at least 3 characters (CJK words inside a run, identifiers, parts of words).
    SUBSTRING = "substring"


class ClauseRole(enum.Enum):
    """When a clause is asked: always, or only when the primary clauses found too few conversations."""

    PRIMARY = "primary"
    FALLBACK = "fallback"


@dataclass(frozen=True, slots=True)
class QueryClause:
    """One thing to look for: ``text`` matched as ``kind``; ``source`` is the user text it came from.

    ``prefix``: the last word of ``text`` may continue (``deplo*`` finds "deploying"); WORDS only.
    """

    kind: MatchKind
    text: str
    source: str
    role: ClauseRole = ClauseRole.PRIMARY
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class PlannedQuery:
    """The plan for one search: clauses OR-ed per kind and role, minus the excluded clauses.

    Hits rank by how well a message matches the clauses (rarer ones weigh more). ``substring_prefixes``
    are 1-2 character runs of unsegmented scripts (CJK), too short for a substring match: a backend finds
    them as the start of longer indexed substrings. ``terms``, ``phrases`` and ``excluded`` are the user's
    words, for highlighting; ``truncated`` says the input was cut to the planner's limits.
    """

    clauses: tuple[QueryClause, ...] = ()
    excluded_clauses: tuple[QueryClause, ...] = ()
    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    substring_prefixes: tuple[str, ...] = ()
    truncated: bool = False

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to look for (the search returns no results)."""
        return not self.clauses and not self.substring_prefixes


@dataclass(frozen=True, slots=True)
class SearchBudget:
    """Cost bounds of one search, so it stays fast when a term is in most messages.

    ``rank_window``: relevance is computed for at most this many of the newest matches of one clause
    group; ``scoped_scan_limit``: a person-scoped search reads at most this many of the newest matches
    before its scope filter; ``expansion_budget``: longer substrings found for all ``substring_prefixes``
    of one query together.
    """

    rank_window: int = 2_500
    scoped_scan_limit: int = 20_000
    expansion_budget: int = 32


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search: the plan, whose conversations it may read, and how many conversations will be shown.

    ``query_vector``: the query's embedding (``Embedder.embed_query``) when the semantic side is asked
    too; the backend then returns the ``semantic_limit`` windows nearest to it in the scope.
    """

    query: PlannedQuery
    scope: SearchScope
    want: int
    budget: SearchBudget = field(default_factory=SearchBudget)
    query_vector: tuple[float, ...] | None = None
    semantic_limit: int = 40


@dataclass(frozen=True, slots=True)
class FoundMessage:
    """A message as search results and summaries need it."""

    id: int
    conversation_id: str
    segment_id: str
    role: str
    content: str | None
    tool_name: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A visible matching message and its score: lower is better, comparable within one search only."""

    message: FoundMessage
    score: float


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """Conversation metadata shown next to search results."""

    id: str
    person_id: str | None
    platform: str | None
    title: str | None
    created_at: float
    ended_at: float | None
    tip_segment_id: str


@dataclass(frozen=True, slots=True)
class WindowRef:
    """A stored window (search_windows.py): adjacent turns of one segment, by message id."""

    id: int
    conversation_id: str
    segment_id: str
    message_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WindowHit:
    """A window near the query's embedding; ``similarity`` is a cosine, higher is better."""

    window: WindowRef
    similarity: float


@dataclass(frozen=True, slots=True)
class SearchSnapshot:
    """What one search read in one consistent snapshot.

    ``hits``: matching messages best first; ``windows``: per hit message id, the windows holding it;
    ``semantic``: the windows nearest the query vector, best first (only visible ones); ``messages``: the
    visible messages of those windows (for excerpts); ``conversations``: metadata of every conversation
    named; ``semantic_status``: whether vectors could answer (``off`` when no vector was asked for).
    """

    hits: tuple[SearchHit, ...]
    conversations: Mapping[str, ConversationInfo]
    windows: Mapping[int, tuple[WindowRef, ...]] = field(default_factory=dict)
    semantic: tuple[WindowHit, ...] = ()
    messages: Mapping[int, FoundMessage] = field(default_factory=dict)
    semantic_status: SemanticStatus = field(default_factory=lambda: SemanticStatus("off"))


class SearchIndex(Protocol):
    """Full-text search over the messages of past conversations."""

    async def search_messages(self, request: SearchRequest) -> SearchSnapshot:
        """The visible messages matching ``request.query`` in its scope, best first, from ONE snapshot.

        Visible: ``SEARCHED_ROLES`` with text, not of ``UNSEARCHED_TOOLS``, in the scope's conversations,
        not in the live tip segment of ``scope.current_conversation_id``. Archived segments count as their
        conversation. Ties in score go to the newer message. FALLBACK clauses are asked only when the
        PRIMARY ones found fewer than ``want`` conversations. Raises SearchIndexUnavailableError while the
        index cannot answer (being rebuilt).
        """
        ...

    async def message_windows(
        self, anchors: Mapping[str, Sequence[int]], *, around: int
    ) -> dict[str, list[FoundMessage]]:
        """Per conversation id, its messages within ``around`` positions of any anchor id, in order."""
        ...

    async def participants(self, scope: SearchScope, words: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        """Which of ``words`` (case-folded) name a speaker of a conversation in ``scope``: per name, the
        conversations in the scope where they speak (at most ``PARTICIPANT_CONVERSATIONS``)."""
        ...

    async def semantic_status(self) -> SemanticStatus:
        """How many windows exist and how many carry a vector of the configured model."""
        ...

    async def rebuild_semantic(self) -> None:
        """Forget every stored vector, so the windows are embedded again (by the background builder)."""
        ...

    async def index_position(self) -> int:
        """The index's watermark (see the module's ordering rule); 0 while it is empty or unavailable."""
        ...

    async def index_lag(self) -> int:
        """How many committed messages are not yet searchable."""
        ...

    async def wait_indexed(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline, not a cancel
        """Wait until every message committed before this call is searchable; False on timeout."""
        ...

    async def search_health(self) -> SearchHealth:
        """Whether search answers from a complete index now, is catching up, or cannot answer."""
        ...
