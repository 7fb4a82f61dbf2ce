"""The search planner: turns raw user or model text into a safe PlannedQuery (words, phrases, substrings).

Invariants: planning never raises for any `str` (lone surrogates, control characters, quotes, query
operators, empty input); a clause's text is plain user text, never query syntax (each backend quotes it
in its own dialect, so user text can never become syntax); the module is pure (no I/O) and names no
backend. The backend ranks each clause group's hits and unions them (WORDS first); FALLBACK clauses
only widen recall when the others find too little.

Rules
- Natural language works as typed: English stopwords are dropped (unless nothing else is left) and
  the remaining terms are OR-ed, so ranking puts messages sharing more of the rarer words first.
- `"quoted phrases"` (straight or curly quotes) stay phrases; an unmatched quote is ignored.
- Identifiers (`chat-send`, `P2.2`, `foo_bar`, `user@example.com`) become WORDS phrases (the word
  tokenizer splits them into adjacent tokens) plus an exact SUBSTRING clause.
- `AND`/`OR` in capitals are ignored (everything is OR-ed anyway); a capital `NOT` excludes the next
  term or phrase: `deploy NOT staging` finds deploy without staging. A query made only of exclusions
  matches nothing rather than silently searching for the excluded word (the anchor turned `NOT secret`
  into `secret`). A trailing `*` on a word of 3+ characters is a prefix query.
- Input is capped at MAX_QUERY_CHARS characters and MAX_TERMS terms (`truncated` says so).

Unsegmented scripts (CJK, Thai, ...): a word tokenizer keeps a whole run as ONE token, so a word inside
a run is only reachable as a SUBSTRING, and substring indexes match 3+ characters only. Strategy:
- a run of 3+ characters -> an exact SUBSTRING clause; runs of 4+ also add their overlapping trigrams
  and bigrams, so a query typed without spaces still matches messages sharing its words;
- a 1-2 character run -> the WORDS clause (the word standing alone) plus an entry in
  `substring_prefixes`, which the backend finds as the start of longer indexed substrings (SQLite:
  through the trigram vocabulary, see agent_core/storage/sqlite/match_expressions.py);
- one-character particles (的, 了, の, ...) are dropped as terms; they would match everything.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Final

from agent_core.search.scripts import (
    CJK_PARTICLES,
    has_token_char,
    has_unsegmented,
    is_token_char,
    script_runs,
)
from agent_core.search.stopwords import is_stopword
from agent_core.storage.search_index import ClauseRole, MatchKind, PlannedQuery, QueryClause

MAX_QUERY_CHARS: Final = 2_048
MAX_TERMS: Final = 32
MAX_CLAUSES_PER_KIND: Final = 64
MAX_GRAMS_PER_RUN: Final = 16
MAX_SUBSTRING_PREFIXES: Final = 8
MIN_PREFIX_CHARS: Final = 3

# Characters that always end a word. Identifier joiners (- _ . @ / : # + ' & $ %) are absent on
# purpose: they stay inside a word and are only stripped from its ends.
_SEPARATORS: Final = '\\s"“”*,;!?()\\[\\]{}<>|\\\\^~=`、，。！？：；（）「」『』【】《》〈〉…'
_TOKEN: Final = re.compile(
    '"(?P<quoted>[^"]*)"|“(?P<curly>[^”]*)”|(?P<word>[^' + _SEPARATORS + "]+)(?P<star>\\*)?"
)
_IGNORED_OPERATORS: Final = frozenset({"AND", "OR"})
_NEGATION: Final = "NOT"


def plan_query(text: str, *, max_chars: int = MAX_QUERY_CHARS, max_terms: int = MAX_TERMS) -> PlannedQuery:
    """Plan the search for `text`; never raises."""
    truncated = len(text) > max_chars
    units = _content_units(_parse(_clean(text[:max_chars])))
    if len(units) > max_terms:
        truncated, units = True, units[:max_terms]
    positive = _Plan()
    negative = _Plan()
    for unit in units:
        _plan_unit(unit, negative if unit.negated else positive)
    return PlannedQuery(
        clauses=positive.clauses(),
        excluded_clauses=negative.clauses() if positive.primary or positive.prefixes else (),
        terms=tuple(u.text for u in units if not u.negated and not u.phrase),
        phrases=tuple(u.text for u in units if not u.negated and u.phrase),
        excluded=tuple(u.text for u in units if u.negated),
        substring_prefixes=tuple(dict.fromkeys(positive.prefixes + positive.gram_prefixes))[
            :MAX_SUBSTRING_PREFIXES
        ],
        truncated=truncated,
    )


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    phrase: bool
    prefix: bool = False
    negated: bool = False


@dataclass(slots=True)
class _Plan:
    """Clauses collected for one query, in priority order (user terms before derived n-grams)."""

    primary: list[QueryClause] = field(default_factory=list)
    grams: list[QueryClause] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    gram_prefixes: list[str] = field(default_factory=list)

    def add(
        self,
        kind: MatchKind,
        text: str,
        source: str,
        role: ClauseRole = ClauseRole.PRIMARY,
        *,
        prefix: bool = False,
    ) -> None:
        self.primary.append(QueryClause(kind, text, source, role, prefix))

    def clauses(self) -> tuple[QueryClause, ...]:
        result: list[QueryClause] = []
        per_kind: dict[MatchKind, int] = {}
        seen: set[tuple[MatchKind, ClauseRole, str, bool]] = set()
        for clause in self.primary + self.grams:
            key = (clause.kind, clause.role, clause.text, clause.prefix)
            if key in seen or per_kind.get(clause.kind, 0) >= MAX_CLAUSES_PER_KIND:
                continue
            seen.add(key)
            per_kind[clause.kind] = per_kind.get(clause.kind, 0) + 1
            result.append(clause)
        return tuple(result)


def _clean(text: str) -> str:
    """Drop format characters (zero-width joiners glue words); blank controls and lone surrogates."""
    kept: list[str] = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        kept.append(" " if category in ("Cc", "Cs") else char)
    return "".join(kept)


def _strip_edges(word: str) -> str:
    start, end = 0, len(word)
    while start < end and not is_token_char(word[start]):
        start += 1
    while end > start and not is_token_char(word[end - 1]):
        end -= 1
    return word[start:end]


def _parse(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    negate_next = False
    for match in _TOKEN.finditer(text):
        quoted = match.group("quoted")
        if quoted is None:
            quoted = match.group("curly")
        if quoted is not None:
            phrase = " ".join(quoted.split())
            if has_token_char(phrase):
                units.append(_Unit(phrase, phrase=True, negated=negate_next))
            negate_next = False
            continue
        raw = match.group("word")
        if raw in _IGNORED_OPERATORS:
            continue
        if raw == _NEGATION:
            negate_next = True
            continue
        word = _strip_edges(raw)
        if word:
            prefix = match.group("star") is not None and is_token_char(raw[-1])
            units.append(_Unit(word, phrase=False, prefix=prefix, negated=negate_next))
        negate_next = False
    return units


def _content_units(units: list[_Unit]) -> list[_Unit]:
    """Drop stopwords (unless every positive term is one) and duplicates, keeping first-seen order."""

    def plain_stopword(unit: _Unit) -> bool:
        if unit.phrase or unit.prefix:
            return False
        return is_stopword(unit.text) or unit.text in CJK_PARTICLES

    positive = [u for u in units if not u.negated]
    keep_stopwords = all(plain_stopword(u) for u in positive)
    kept: dict[tuple[str, bool, bool, bool], _Unit] = {}
    for unit in units:
        if plain_stopword(unit) and (unit.negated or not keep_stopwords):
            continue
        kept.setdefault((unit.text.casefold(), unit.phrase, unit.prefix, unit.negated), unit)
    return list(kept.values())


def _is_identifier(word: str) -> bool:
    return any(not is_token_char(char) for char in word)


def _plan_unit(unit: _Unit, plan: _Plan) -> None:
    text = unit.text
    if not has_unsegmented(text):
        plan.add(MatchKind.WORDS, text, text, prefix=unit.prefix and len(text) >= MIN_PREFIX_CHARS)
        if len(text) >= 3:
            exact = not unit.phrase and _is_identifier(text)
            role = ClauseRole.PRIMARY if exact else ClauseRole.FALLBACK
            plan.add(MatchKind.SUBSTRING, text, text, role)
        return
    if unit.phrase:
        _plan_run(text, plan, split=False)
        return
    runs = script_runs(text)
    if len(runs) > 1 and len(text) >= 3:
        plan.add(MatchKind.SUBSTRING, text, text)
    for run, unsegmented in runs:
        if unsegmented:
            _plan_run(run, plan, split=True)
            continue
        part = _strip_edges(run)
        if part:
            # Glued to CJK in the query, so probably glued in messages too: one unicode61 token.
            plan.add(MatchKind.WORDS, part, part)
            if len(part) >= 3:
                plan.add(MatchKind.SUBSTRING, part, part)


def _plan_run(run: str, plan: _Plan, *, split: bool) -> None:
    """Plan a run of unsegmented text; `split` also adds its n-grams (not for quoted phrases)."""
    if len(run) <= 2:
        if len(run) == 1 and run in CJK_PARTICLES:
            return
        plan.add(MatchKind.WORDS, run, run)
        plan.prefixes.append(run)
        return
    plan.add(MatchKind.SUBSTRING, run, run)
    if not split or len(run) < 4:
        return
    for start in range(min(len(run) - 2, MAX_GRAMS_PER_RUN)):
        plan.grams.append(QueryClause(MatchKind.SUBSTRING, run[start : start + 3], run))
    for start in range(min(len(run) - 1, MAX_GRAMS_PER_RUN + 1)):
        bigram = run[start : start + 2]
        if not any(char in CJK_PARTICLES for char in bigram):
            plan.gram_prefixes.append(bigram)
