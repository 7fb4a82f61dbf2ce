"""A planned query in PostgreSQL's terms: ``tsquery`` expressions for the vector index, ``ILIKE`` patterns
for the trigram index, each carried as a SQL fragment with its own bound parameters.

Invariants: user text only ever travels as a bound parameter — into ``phraseto_tsquery`` (which reads
plain text, no syntax), into ``to_tsquery`` as ONE quoted token with a prefix mark (quotes and backslashes
escaped, so it cannot close the token), into ``::tsquery`` as one quoted CJK gram, or into an ``ILIKE``
pattern with ``%``, ``_`` and ``\\`` escaped — so no input can become SQL or query syntax or raise a syntax
error; a fragment's SQL holds only this module's templates and its parameters follow in textual order.

Mapping (search_ddl.py says why): WORDS clauses and the planner's 1-2 character ``substring_prefixes``
go to the vector index (``search_vector @@ tsquery``), as two groups ranked apart — the grams play the
part of SQLite's trigram-vocabulary expansions, so a common CJK character never trims a rarer word of
another group away; SUBSTRING clauses go to the trigram index. The planner's excluded clauses exclude
from the groups of their own index, as FTS5's ``NOT`` does on SQLite.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, LiteralString

from psycopg import sql

from ..search_index import ClauseRole, MatchKind, PlannedQuery, QueryClause


@dataclass(frozen=True, slots=True)
class Fragment:
    """A piece of SQL and the parameters its ``%s`` placeholders take, in order."""

    sql: sql.SQL | sql.Composed
    params: tuple[object, ...] = ()

    @classmethod
    def value(cls, value: object) -> Fragment:
        return cls(sql.SQL("%s"), (value,))


def joined(separator: LiteralString, parts: Iterable[Fragment]) -> Fragment:
    """``parts`` joined by ``separator`` (which holds no placeholder), parameters in the same order."""
    items = list(parts)
    pieces: list[sql.Composable] = []
    for position, part in enumerate(items):
        if position:
            pieces.append(sql.SQL(separator))
        pieces.append(part.sql)
    return Fragment(sql.Composed(pieces), tuple(x for p in items for x in p.params))


def formatted(template: LiteralString, *parts: Fragment) -> Fragment:
    """``template``'s ``{}`` fields filled with ``parts``; the template itself holds no ``%s``."""
    composed = sql.SQL(template).format(*(p.sql for p in parts))
    return Fragment(composed, tuple(x for p in parts for x in p.params))


class PgIndex(enum.Enum):
    """Which index answers a clause."""

    VECTOR = "vector"  # messages_search_vector: words (English + simple)
    GRAMS = "grams"  # the same index's CJK grams, ranked as a group of their own (SQLite's expansions)
    TRIGRAM = "trigram"  # messages_search_trgm: substrings of 3+ characters


_PHRASE: Final = "(phraseto_tsquery('mg_english', {}) || phraseto_tsquery('mg_simple', {}))"
_PREFIX: Final = "(to_tsquery('mg_english', {}) || to_tsquery('mg_simple', {}))"
_GRAM: Final = "{}::tsquery"


@dataclass(frozen=True, slots=True)
class PgClause:
    """One thing to look for on one index; ``query`` is a tsquery (VECTOR) or an ILIKE pattern (TRIGRAM).

    ``needle``: the case-folded text a TRIGRAM clause counts occurrences of when ranking; ``caseless``: the
    pattern holds no character with case (``is_caseless``), so ``LIKE`` finds exactly what ``ILIKE`` would.
    """

    index: PgIndex
    query: Fragment
    source: str
    role: ClauseRole = ClauseRole.PRIMARY
    needle: str = ""
    caseless: bool = False


@dataclass(frozen=True, slots=True)
class PgQuery:
    """A planned query as PostgreSQL asks it: clauses and exclusions per index."""

    clauses: tuple[PgClause, ...] = ()
    excluded_clauses: tuple[PgClause, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.clauses

    def group(self, index: PgIndex, role: ClauseRole) -> tuple[PgClause, ...]:
        return tuple(c for c in self.clauses if c.index is index and c.role is role)

    def excluded(self, index: PgIndex) -> tuple[PgClause, ...]:
        """The exclusions of ``index``'s groups; grams are excluded by the words of the same index."""
        own = PgIndex.VECTOR if index is PgIndex.GRAMS else index
        return tuple(c for c in self.excluded_clauses if c.index is own)

    def without(self, dropped: Sequence[PgClause]) -> PgQuery:
        kept = tuple(c for c in self.clauses if not any(c is d for d in dropped))
        return dataclasses.replace(self, clauses=kept)


def pg_query_for(planned: PlannedQuery) -> PgQuery:
    """The PostgreSQL form of ``planned``: its clauses in the planner's order, then the CJK prefixes."""
    prefixes = [prefix for prefix in planned.substring_prefixes if prefix]
    # A 1-2 character CJK run is also a WORDS clause; its gram clause finds all of that and more.
    clauses = [_clause(c) for c in planned.clauses if not _covered_by_grams(c, prefixes)]
    clauses.extend(gram_clause(prefix) for prefix in prefixes)
    return PgQuery(tuple(clauses), tuple(_clause(c) for c in planned.excluded_clauses))


def _covered_by_grams(clause: QueryClause, prefixes: Sequence[str]) -> bool:
    return clause.kind is MatchKind.WORDS and not clause.prefix and clause.text in prefixes


def _clause(clause: QueryClause) -> PgClause:
    text = safe_text(clause.text)
    if clause.kind is MatchKind.SUBSTRING:
        pattern = Fragment.value("%" + like_escape(text) + "%")
        trigram = functools.partial(PgClause, PgIndex.TRIGRAM, pattern, clause.source, clause.role)
        return trigram(needle=text.lower(), caseless=is_caseless(text))
    if clause.prefix:
        token = Fragment.value(tsquery_token(text) + ":*")
        return PgClause(PgIndex.VECTOR, formatted(_PREFIX, token, token), clause.source, clause.role)
    words = Fragment.value(text)
    return PgClause(PgIndex.VECTOR, formatted(_PHRASE, words, words), clause.source, clause.role)


def gram_clause(prefix: str) -> PgClause:
    """A 1-2 character run of an unsegmented script as the grams ``mg_unsegmented_grams`` indexes.

    Two characters are one bigram lexeme; one character is a prefix lookup over the bigrams it starts
    (and the run-final unigram), so the character is found wherever it occurs in a run.
    """
    token = tsquery_token(safe_text(prefix)[:2])
    literal = token if len(prefix) >= 2 else token + ":*"
    return PgClause(PgIndex.GRAMS, formatted(_GRAM, Fragment.value(literal)), prefix)


def is_caseless(text: str) -> bool:
    """True when no character of ``text`` has case (none changes under lower or upper casing, and none is a
    combining mark a full lower-casing of another letter could produce), so no other character case-folds
    into it: a case-insensitive match of ``text`` is then exactly a case-sensitive one."""
    return all(
        c.lower() == c and c.upper() == c and not unicodedata.category(c).startswith("M") for c in text
    )


def tsquery_token(text: str) -> str:
    """``text`` as ONE quoted tsquery token (quotes doubled, backslashes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def like_escape(text: str) -> str:
    """``text`` matched literally by LIKE/ILIKE (PostgreSQL's default escape character is ``\\``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def safe_text(text: str) -> str:
    """Text PostgreSQL accepts as a parameter: no NUL, no lone surrogate (the planner removes both too)."""
    safe = text.replace("\x00", " ")
    if not safe.isascii():
        safe = safe.encode("utf-8", "replace").decode("utf-8")
    return safe


def trim_common(query: PgQuery, group: Sequence[PgClause], counts: Sequence[int], cap: int) -> PgQuery:
    """Drop the clauses of ``group`` that alone match more than ``cap`` messages, keeping its rarest.

    ``counts[i]`` is how many messages ``group[i]`` matches (counted up to ``cap + 1``); the rule of
    SQLite's ``trim_common_clauses`` with the rank window as the threshold.
    """
    common = [clause for clause, count in zip(group, counts, strict=True) if count > cap]
    if common and len(common) == len(group):
        rarest = group[min(range(len(group)), key=counts.__getitem__)]
        common = [clause for clause in common if clause is not rarest]
    return query.without(common)
