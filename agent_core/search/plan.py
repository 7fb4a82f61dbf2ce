"""The search plan types: FtsQuery and its clauses, and how they render as FTS5 MATCH expressions.

Invariant: an expression is only ever built from `quote`d tokens joined by our own `OR`/`NOT`,
parentheses and a prefix `*`, so nothing a user typed can become FTS5 syntax.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

MAX_EXPANSIONS_PER_PREFIX: Final = 32


class FtsIndex(enum.Enum):
    PORTER = "porter"
    TRIGRAM = "trigram"


class ClauseRole(enum.Enum):
    PRIMARY = "primary"
    FALLBACK = "fallback"


@dataclass(frozen=True, slots=True)
class FtsClause:
    """One quoted FTS5 phrase (optionally a prefix) for one index, and the user text it came from."""

    index: FtsIndex
    expression: str
    source: str
    role: ClauseRole = ClauseRole.PRIMARY


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """The search plan for one query: clauses per index plus what to highlight in snippets."""

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


def quote(text: str) -> str:
    """One FTS5 string token: double-quoted, internal quotes doubled (never FTS5 syntax).

    FTS5 ends a string at NUL ("unterminated string") and SQLite cannot bind a lone surrogate,
    so both become harmless characters.
    """
    safe = text.replace("\x00", " ")
    if not safe.isascii():
        safe = safe.encode("utf-8", "replace").decode("utf-8")
    return '"' + safe.replace('"', '""') + '"'
