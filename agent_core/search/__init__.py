"""Session search: the FTS5 query planner, the search service over state.db, and the session_search tool."""

from agent_core.search.errors import SearchError, SearchScopeError
from agent_core.search.plan import MAX_EXPANSIONS_PER_PREFIX, ClauseRole, FtsClause, FtsIndex, FtsQuery, quote
from agent_core.search.query import MAX_QUERY_CHARS, MAX_TERMS, build_fts_query
from agent_core.search.results import UNTRUSTED_LABEL, ConversationResult, SearchResults, Snippet
from agent_core.search.scope import SearchScope
from agent_core.search.service import SessionSearch
from agent_core.search.settings import SearchSettings
from agent_core.search.stopwords import ENGLISH_STOPWORDS, is_stopword
from agent_core.search.summariser import ConversationSummariser
from agent_core.search.tool import SESSION_SEARCH_TOOL_NAME, session_search_tool
from agent_core.search.vocabulary import (
    DEFAULT_MAX_SHARE,
    doc_count_limit,
    trigram_prefix_bounds,
    trim_common_clauses,
)

__all__ = [
    "DEFAULT_MAX_SHARE",
    "ENGLISH_STOPWORDS",
    "MAX_EXPANSIONS_PER_PREFIX",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "SESSION_SEARCH_TOOL_NAME",
    "UNTRUSTED_LABEL",
    "ClauseRole",
    "ConversationResult",
    "ConversationSummariser",
    "FtsClause",
    "FtsIndex",
    "FtsQuery",
    "SearchError",
    "SearchResults",
    "SearchScope",
    "SearchScopeError",
    "SearchSettings",
    "SessionSearch",
    "Snippet",
    "build_fts_query",
    "doc_count_limit",
    "is_stopword",
    "quote",
    "session_search_tool",
    "trigram_prefix_bounds",
    "trim_common_clauses",
]
