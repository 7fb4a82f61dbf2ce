"""FTS5 MATCH expressions rendered from a planned query, and the vocabulary refinements that run on them.

Invariant: an expression is only ever built from `quote`d tokens joined by our own `OR`/`NOT`,
parentheses and a prefix `*`, so nothing a user typed can become FTS5 syntax. Refinements only remove
clauses or OR in quoted vocabulary terms, so a refined plan is never broader or less safe.

Indexes (sidecar.py): WORDS clauses go to a porter index (`porter unicode61 remove_diacritics 2`),
SUBSTRING clauses to a trigram index (`trigram`, detail=full). Each expression's hits are ranked by
bm25 and unioned; the trigram FALLBACK expression only widens recall when the others find too little.

CJK and other unsegmented scripts (measured on SQLite 3.40.1). unicode61 keeps a whole run of CJK
characters as ONE token, so the porter index finds a Chinese word only when it is the entire run
(a porter prefix query `"苹果"*` finds it only at the start of a run). The trigram index matches any
substring of 3+ characters, but a phrase or prefix query shorter than 3 characters matches nothing
(the tokenizer emits no trigram for it), and `LIKE '%苹果%'` on a trigram table is a full scan. So the
planner's 1-2 character `substring_prefixes` are expanded through an `fts5vocab` table over the
trigram index - an index range scan over the vocabulary, never over messages:
    CREATE VIRTUAL TABLE temp.vocab_trigram USING fts5vocab('idx', 'fts_trigram', 'row');
    SELECT term FROM temp.vocab_trigram WHERE term >= ? AND term < ? ORDER BY doc DESC LIMIT ?
with `trigram_prefix_bounds(prefix)` and MAX_EXPANSIONS_PER_PREFIX; `FtsQuery.with_trigram_expansions`
ORs the returned trigrams (`"苹果和" OR "苹果很" ...`) into the trigram expression. This finds the word
anywhere it is followed by another character; indexing text with a trailing space (sidecar.trigram_text)
closes the one gap, a word that ends the text inside a longer run (`我爱苹果`).

Very common terms: an OR with a term present in most messages makes bm25 walk huge doclists.
`trim_common_clauses` drops clauses whose document count exceeds a share of all messages (keeping
the rarest clause of each expression); the caller counts each clause with a bounded query
`SELECT count(*) FROM (SELECT 1 FROM <fts> WHERE <fts> MATCH ? LIMIT ?)` using `doc_count_limit`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..search_index import ClauseRole, MatchKind, PlannedQuery, QueryClause

MAX_EXPANSIONS_PER_PREFIX: Final = 32
DEFAULT_MAX_SHARE: Final = 0.25


class FtsIndex(enum.Enum):
    PORTER = "porter"
    TRIGRAM = "trigram"


_INDEX_OF: Final = {MatchKind.WORDS: FtsIndex.PORTER, MatchKind.SUBSTRING: FtsIndex.TRIGRAM}


@dataclass(frozen=True, slots=True)
class FtsClause:
    """One quoted FTS5 phrase (optionally a prefix) for one index, and the user text it came from."""

    index: FtsIndex
    expression: str
    source: str
    role: ClauseRole = ClauseRole.PRIMARY


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """A planned query as FTS5 sees it: clauses per index plus what to highlight in snippets."""

    clauses: tuple[FtsClause, ...] = ()
    excluded_clauses: tuple[FtsClause, ...] = ()
    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    trigram_prefixes: tuple[str, ...] = ()
    truncated: bool = False

    @property
    def porter(self) -> str | None:
        """MATCH expression for the porter index, or None when there is nothing to run there."""
        return self.expression(FtsIndex.PORTER)

    @property
    def trigram(self) -> str | None:
        """MATCH expression for the trigram index (CJK, identifiers, expanded prefixes), or None."""
        return self.expression(FtsIndex.TRIGRAM)

    @property
    def trigram_fallback(self) -> str | None:
        """Substring matches of plain words; run only when the other expressions find too little."""
        return self.expression(FtsIndex.TRIGRAM, ClauseRole.FALLBACK)

    @property
    def is_empty(self) -> bool:
        """True when no index can be asked anything (the caller returns no results)."""
        return not self.clauses and not self.trigram_prefixes

    def expression(self, index: FtsIndex, role: ClauseRole = ClauseRole.PRIMARY) -> str | None:
        positive = [c.expression for c in self.clauses if c.index is index and c.role is role]
        if not positive:
            return None
        joined = " OR ".join(positive)
        negative = [c.expression for c in self.excluded_clauses if c.index is index]
        return f"({joined}) NOT ({' OR '.join(negative)})" if negative else joined

    def with_trigram_expansions(self, expansions: Mapping[str, Sequence[str]]) -> FtsQuery:
        """OR the vocabulary trigrams found for each of `trigram_prefixes` into the trigram clauses."""
        clauses = list(self.clauses)
        seen = {(c.index, c.expression) for c in clauses}
        for prefix in self.trigram_prefixes:
            for term in list(expansions.get(prefix, ()))[:MAX_EXPANSIONS_PER_PREFIX]:
                clause = FtsClause(FtsIndex.TRIGRAM, quote(term), prefix)
                if term and (clause.index, clause.expression) not in seen:
                    seen.add((clause.index, clause.expression))
                    clauses.append(clause)
        return dataclasses.replace(self, clauses=tuple(clauses), trigram_prefixes=())


def fts_query_for(planned: PlannedQuery) -> FtsQuery:
    """The FTS5 form of ``planned``: every clause quoted, in the planner's order."""
    return FtsQuery(
        clauses=tuple(_clause(c) for c in planned.clauses),
        excluded_clauses=tuple(_clause(c) for c in planned.excluded_clauses),
        terms=planned.terms,
        phrases=planned.phrases,
        excluded=planned.excluded,
        trigram_prefixes=planned.substring_prefixes,
        truncated=planned.truncated,
    )


def _clause(clause: QueryClause) -> FtsClause:
    suffix = "*" if clause.prefix else ""
    return FtsClause(_INDEX_OF[clause.kind], quote(clause.text) + suffix, clause.source, clause.role)


def quote(text: str) -> str:
    """One FTS5 string token: double-quoted, internal quotes doubled (never FTS5 syntax).

    FTS5 ends a string at NUL ("unterminated string") and SQLite cannot bind a lone surrogate,
    so both become harmless characters.
    """
    safe = text.replace("\x00", " ")
    if not safe.isascii():
        safe = safe.encode("utf-8", "replace").decode("utf-8")
    return '"' + safe.replace('"', '""') + '"'


def trigram_prefix_bounds(prefix: str) -> tuple[str, str]:
    """`term >= low AND term < high` bounds selecting vocabulary trigrams that start with `prefix`."""
    folded = prefix.lower()  # the trigram tokenizer folds case by default
    return folded, folded + "\U0010ffff"


def doc_count_limit(total_docs: int, max_share: float = DEFAULT_MAX_SHARE) -> int:
    """LIMIT for a bounded per-clause document count: one more than the trimming threshold."""
    return int(max(total_docs, 0) * max_share) + 1


def trim_common_clauses(
    query: FtsQuery,
    doc_counts: Mapping[FtsClause, int],
    total_docs: int,
    *,
    max_share: float = DEFAULT_MAX_SHARE,
) -> FtsQuery:
    """Drop clauses found in more than `max_share` of `total_docs`, keeping each expression's rarest.

    Clauses without a count are kept. An expression never loses all of its clauses.
    """
    threshold = total_docs * max_share
    kept: list[FtsClause] = []
    groups: dict[tuple[FtsIndex, ClauseRole], list[FtsClause]] = {}
    for clause in query.clauses:
        groups.setdefault((clause.index, clause.role), []).append(clause)
    for group in groups.values():
        survivors = [c for c in group if c not in doc_counts or doc_counts[c] <= threshold]
        if not survivors:
            survivors = [min(group, key=lambda c: doc_counts[c])]
        kept.extend(survivors)
    order = {clause: position for position, clause in enumerate(query.clauses)}
    return dataclasses.replace(query, clauses=tuple(sorted(kept, key=order.__getitem__)))
