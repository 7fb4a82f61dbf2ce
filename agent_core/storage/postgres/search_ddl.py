"""Search columns and indexes on ``messages``: a stored ``tsvector`` (words and CJK grams), a trigram index.

Invariants: the index is maintained by the INSERT itself (a generated column and two GIN indexes), so every
committed message is searchable the moment it is visible and there is no indexer, lag or watermark to
keep; the indexed text is SQLite's (``sidecar.searchable_text``): the content, plus the tool's name on tool
messages (``mg_search_text``); every row is indexed and visibility (roles, ``UNSEARCHED_TOOLS``, the live
tip) is decided at read time, as on SQLite; no statement here depends on the session's ``search_path`` at
run time (generated expressions hold function and configuration OIDs, the PL/pgSQL function uses only
``pg_catalog``), so a ``pg_dump`` restore, which runs with an empty ``search_path``, recomputes the column.

What answers which part of a planned query (search_clauses.py builds the queries):
- WORDS clauses: ``search_vector`` holds ``mg_english`` (unaccent + English Snowball stemming, stopwords
  dropped: "running" finds "runs", "café" finds "cafe") concatenated with ``mg_simple`` (unaccent, no
  stemming, no stopwords: names, identifiers, "The Who", and prefixes that stemming would cut, such as
  ``runnin*``). A clause asks both: ``phraseto_tsquery(mg_english) || phraseto_tsquery(mg_simple)``.
- 1-2 character CJK terms (``PlannedQuery.substring_prefixes``): pg_trgm cannot serve them (a pattern
  shorter than 3 characters yields no trigram, so ``LIKE '%北京%'`` is a full index scan). Instead
  ``mg_unsegmented_grams`` adds, for every run of an unsegmented script (the planner's
  ``agent_core.search.scripts`` ranges, copied into ``UNSEGMENTED_CLASS``), each overlapping bigram and
  the run's last character as lexemes of the same ``tsvector``, with positions. A 2-character term is
  one exact lexeme (``'北京'``); a 1-character term is a GIN prefix lookup (``'天':*`` finds every bigram
  starting with it, and the run-final unigram covers a word that ends a run: "我爱苹果" finds 果).
  Both are plain GIN index lookups, never a scan over messages. Chosen over a separate ``text[]`` of
  grams because it is one index and one column, the GIN prefix lookup does SQLite's vocabulary expansion
  exactly, and ``ts_rank_cd`` ranks the grams like any other lexeme. The grams depend only on code
  points, not on the database's locale.
- SUBSTRING clauses (3+ characters: CJK words inside a run, identifiers, parts of words): ``ILIKE`` on
  ``mg_search_text(...)`` through the ``gin_trgm_ops`` index ``messages_search_trgm``, over all the
  text (``LIKE`` when the text has no character with case, as CJK: the same rows without case-folding
  each candidate; pg_trgm's trigrams are case-folded either way, so one index serves both). pg_trgm
  classifies characters with the database's ctype: CJK needs a UTF-8 locale
  (``C.UTF-8``, ``en_US.UTF-8``, the official image's default); under ``LC_CTYPE=C`` CJK substrings are
  still found, but by a scan.

Limits (so that an INSERT can never fail on its search column): words and grams are taken from the first
``INDEXED_WORD_CHARS`` characters of a message (a ``tsvector`` is capped at 1 MB; the measured worst case,
random CJK without spaces, is 0.7 MB at 50,000 characters); substrings are matched over the whole text.
Positions beyond 16,383 are clamped (a PostgreSQL limit), which only blunts ranking deep inside a long text.

Write cost (measured here, 20k bench-corpus messages, 2 per transaction, one connection): the column and
both indexes add ~0.1 ms of server time per message; the heap grows ~2.7x (the stored vector) and the two
GIN indexes are ~1.7x the heap. GIN's fast-update list keeps inserts cheap; ``gin_pending_list_limit`` is
lowered to 1 MB so a search never scans a long pending list and the insert that flushes it pays less.
"""

from __future__ import annotations

from typing import Final, LiteralString

INDEXED_WORD_CHARS: Final = 50_000

# The planner's unsegmented scripts (agent_core.search.scripts._UNSEGMENTED_RANGES), as a regex class.
# None of these characters is a quote or a backslash, so a gram can be written into tsvector text unescaped.
UNSEGMENTED_CLASS: LiteralString = (
    r"[\u0E00-\u0EFF\u1000-\u109F\u1100-\u11FF\u1780-\u17FF\u3040-\u30FF\u3100-\u312F\u3130-\u318F"
    r"\u31A0-\u31BF\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF"
    r"\uFF66-\uFFDC\U00020000-\U0003134F]"
)

_SEARCH_TEXT: LiteralString = "mg_search_text(content, role, tool_name)"

SEARCH_DDL: tuple[LiteralString, ...] = (
    "CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public",
    # ASCII token types carry no accents; only tokens with other letters go through unaccent first.
    "CREATE TEXT SEARCH CONFIGURATION mg_english (COPY = pg_catalog.english)",
    "ALTER TEXT SEARCH CONFIGURATION mg_english ALTER MAPPING FOR word, hword, hword_part"
    " WITH unaccent, pg_catalog.english_stem",
    "CREATE TEXT SEARCH CONFIGURATION mg_simple (COPY = pg_catalog.simple)",
    "ALTER TEXT SEARCH CONFIGURATION mg_simple ALTER MAPPING FOR word, hword, hword_part"
    " WITH unaccent, pg_catalog.simple",
    # SQLite's searchable_text. An SQL-standard body is parsed once, here, and inlined where it is used.
    r"""CREATE FUNCTION mg_search_text(content text, role text, tool_name text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN CASE WHEN role = 'tool' AND tool_name <> ''
                    THEN concat_ws(E'\n', nullif(content, ''), tool_name) ELSE nullif(content, '') END""",
    # PL/pgSQL keeps its plan for the session (an SQL function with a query would be planned per INSERT);
    # regexp_matches walks each run twice for the bigrams at odd and even offsets, so the cost is linear.
    r"""CREATE FUNCTION mg_unsegmented_grams(body text) RETURNS tsvector
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE
        run text;
        offs integer := 0;
        parts text[] := '{}';
    BEGIN
        FOR run IN SELECT m[1] FROM regexp_matches(body, '"""
    + UNSEGMENTED_CLASS
    + r"""+', 'g') AS m LOOP
            parts := parts || ARRAY(SELECT '''' || e.m[1] || ''':' || least(offs + 2 * e.k - 1, 16383)
                FROM regexp_matches(run, '..', 'g') WITH ORDINALITY AS e(m, k));
            parts := parts || ARRAY(SELECT '''' || o.m[1] || ''':' || least(offs + 2 * o.k, 16383)
                FROM regexp_matches(substr(run, 2), '..', 'g') WITH ORDINALITY AS o(m, k));
            parts := parts || ('''' || right(run, 1) || ''':' || least(offs + length(run), 16383));
            offs := offs + length(run) + 1;
        END LOOP;
        RETURN array_to_string(parts, ' ')::tsvector;
    END $$""",
    # Written out rather than wrapped in a function: the generated expression is then evaluated inline.
    "ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ("
    f"to_tsvector('mg_english', left({_SEARCH_TEXT}, 50000))"
    f" || to_tsvector('mg_simple', left({_SEARCH_TEXT}, 50000))"
    " || CASE WHEN content ~ '"
    + UNSEGMENTED_CLASS
    + "' THEN mg_unsegmented_grams(left(content, 50000)) ELSE ''::tsvector END) STORED",
    "CREATE INDEX messages_search_vector ON messages USING gin (search_vector)"
    " WITH (gin_pending_list_limit = 1024)",
    f"CREATE INDEX messages_search_trgm ON messages USING gin ({_SEARCH_TEXT} gin_trgm_ops)"
    " WITH (gin_pending_list_limit = 1024)",
)

SEARCH_INDEXES: Final = ("messages_search_vector", "messages_search_trgm")
"""The indexes search needs; ``PgSearchIndex.search_health`` reports on them."""
