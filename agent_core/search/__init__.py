"""Session search: the FTS5 query builder that turns raw text into safe ranked-OR MATCH plans."""

from agent_core.search.plan import MAX_EXPANSIONS_PER_PREFIX, ClauseRole, FtsClause, FtsIndex, FtsQuery, quote
from agent_core.search.query import MAX_QUERY_CHARS, MAX_TERMS, build_fts_query
from agent_core.search.stopwords import ENGLISH_STOPWORDS, is_stopword
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
    "ClauseRole",
    "FtsClause",
    "FtsIndex",
    "FtsQuery",
    "build_fts_query",
    "doc_count_limit",
    "is_stopword",
    "quote",
    "trigram_prefix_bounds",
    "trim_common_clauses",
]
