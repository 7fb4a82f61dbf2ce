"""The FTS5 query builder: turns raw user or model text into safe, ranked-OR MATCH expressions.

Invariants: building never raises for any `str` (lone surrogates, control characters, quotes,
FTS5 operators, empty input); every token in an emitted expression is double-quoted with internal
quotes doubled, so user text can never become FTS5 syntax; the only operators emitted are our own
`OR`, `NOT`, parentheses and a prefix `*` after a closing quote. The module is pure (no I/O).

Target indexes (built by agent_core/storage/sqlite): a porter index (`porter unicode61 remove_diacritics 2`)
and a trigram index (`trigram`, detail=full). The caller ranks each expression's hits by bm25 and
unions them (porter hits first); `trigram_fallback` only widens recall when the others find too little.

Rules
- Natural language works as typed: English stopwords are dropped (unless nothing else is left) and
  the remaining terms are OR-ed, so bm25 ranks messages sharing more of the rarer words first.
- `"quoted phrases"` (straight or curly quotes) stay phrases; an unmatched quote is ignored.
- Identifiers (`chat-send`, `P2.2`, `foo_bar`, `user@example.com`) become porter phrases (unicode61
  splits them into adjacent tokens) plus an exact trigram substring clause.
- `AND`/`OR` in capitals are ignored (everything is OR-ed anyway); a capital `NOT` excludes the next
  term or phrase: `deploy NOT staging` -> `("deploy") NOT ("staging")`. A query made only of
  exclusions matches nothing rather than silently searching for the excluded word (the anchor turned
  `NOT secret` into `secret`). A trailing `*` on a word of 3+ characters is a prefix query.
- Input is capped at MAX_QUERY_CHARS characters and MAX_TERMS terms (`truncated` says so).

CJK and other unsegmented scripts (measured on SQLite 3.40.1). unicode61 keeps a whole run of CJK
characters as ONE token, so the porter index finds a Chinese word only when it is the entire run
(a porter prefix query `"苹果"*` finds it only at the start of a run). The trigram index matches any
substring of 3+ characters, but a phrase or prefix query shorter than 3 characters matches nothing
(the tokenizer emits no trigram for it), and `LIKE '%苹果%'` on a trigram table is a full scan.
Strategy:
- a run of 3+ characters -> an exact trigram phrase; runs of 4+ also add their overlapping trigrams
  and bigrams, so a query typed without spaces still matches messages sharing its words;
- a 1-2 character run -> the porter token `"苹果"` (the word standing alone) plus an entry in
  `trigram_prefixes`. The caller expands each prefix through an `fts5vocab` table over the trigram
  index - an index range scan over the vocabulary, never over messages:
      CREATE VIRTUAL TABLE temp.tri_vocab USING fts5vocab(<schema>, <trigram_table>, 'row');
      SELECT term FROM temp.tri_vocab WHERE term >= ? AND term < ? ORDER BY doc DESC LIMIT ?
  with `vocabulary.trigram_prefix_bounds(prefix)` and MAX_EXPANSIONS_PER_PREFIX, then calls
  `FtsQuery.with_trigram_expansions` to OR the returned trigrams (`"苹果和" OR "苹果很" ...`) into `trigram`.
  This finds the word anywhere it is followed by another character. The one gap: a word that ends
  the indexed text inside a longer run (`我爱苹果`); indexing the text with a trailing space closes it.
- one-character particles (的, 了, の, ...) are dropped as terms; they would match everything.

Very common terms: an OR with a term present in most messages makes bm25 walk huge doclists.
`vocabulary.trim_common_clauses` drops clauses whose document count exceeds a share of all messages (keeping
the rarest clause of each expression); the caller counts each clause with a bounded query
`SELECT count(*) FROM (SELECT 1 FROM <fts> WHERE <fts> MATCH ? LIMIT ?)` using `doc_count_limit`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Final

from agent_core.search.plan import ClauseRole, FtsClause, FtsIndex, FtsQuery, quote
from agent_core.search.scripts import (
    CJK_PARTICLES,
    has_token_char,
    has_unsegmented,
    is_token_char,
    script_runs,
)
from agent_core.search.stopwords import is_stopword

MAX_QUERY_CHARS: Final = 2_048
MAX_TERMS: Final = 32
MAX_CLAUSES_PER_INDEX: Final = 64
MAX_GRAMS_PER_RUN: Final = 16
MAX_TRIGRAM_PREFIXES: Final = 8
MIN_PREFIX_CHARS: Final = 3

# Characters that always end a word. Identifier joiners (- _ . @ / : # + ' & $ %) are absent on
# purpose: they stay inside a word and are only stripped from its ends.
_SEPARATORS: Final = '\\s"“”*,;!?()\\[\\]{}<>|\\\\^~=`、，。！？：；（）「」『』【】《》〈〉…'
_TOKEN: Final = re.compile(
    '"(?P<quoted>[^"]*)"|“(?P<curly>[^”]*)”|(?P<word>[^' + _SEPARATORS + "]+)(?P<star>\\*)?"
)
_IGNORED_OPERATORS: Final = frozenset({"AND", "OR"})
_NEGATION: Final = "NOT"


def build_fts_query(text: str, *, max_chars: int = MAX_QUERY_CHARS, max_terms: int = MAX_TERMS) -> FtsQuery:
    """Plan the FTS5 search for `text`; never raises."""
    truncated = len(text) > max_chars
    units = _content_units(_parse(_clean(text[:max_chars])))
    if len(units) > max_terms:
        truncated, units = True, units[:max_terms]
    positive = _Plan()
    negative = _Plan()
    for unit in units:
        _plan_unit(unit, negative if unit.negated else positive)
    return FtsQuery(
        clauses=positive.clauses(),
        excluded_clauses=negative.clauses() if positive.primary or positive.prefixes else (),
        terms=tuple(u.text for u in units if not u.negated and not u.phrase),
        phrases=tuple(u.text for u in units if not u.negated and u.phrase),
        excluded=tuple(u.text for u in units if u.negated),
        trigram_prefixes=tuple(dict.fromkeys(positive.prefixes + positive.gram_prefixes))[
            :MAX_TRIGRAM_PREFIXES
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

    primary: list[FtsClause] = field(default_factory=list)
    grams: list[FtsClause] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    gram_prefixes: list[str] = field(default_factory=list)

    def add(
        self, index: FtsIndex, expression: str, source: str, role: ClauseRole = ClauseRole.PRIMARY
    ) -> None:
        self.primary.append(FtsClause(index, expression, source, role))

    def clauses(self) -> tuple[FtsClause, ...]:
        result: list[FtsClause] = []
        per_index: dict[FtsIndex, int] = {}
        seen: set[tuple[FtsIndex, ClauseRole, str]] = set()
        for clause in self.primary + self.grams:
            key = (clause.index, clause.role, clause.expression)
            if key in seen or per_index.get(clause.index, 0) >= MAX_CLAUSES_PER_INDEX:
                continue
            seen.add(key)
            per_index[clause.index] = per_index.get(clause.index, 0) + 1
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
        suffix = "*" if unit.prefix and len(text) >= MIN_PREFIX_CHARS else ""
        plan.add(FtsIndex.PORTER, quote(text) + suffix, text)
        if len(text) >= 3:
            exact = not unit.phrase and _is_identifier(text)
            role = ClauseRole.PRIMARY if exact else ClauseRole.FALLBACK
            plan.add(FtsIndex.TRIGRAM, quote(text), text, role)
        return
    if unit.phrase:
        _plan_run(text, plan, split=False)
        return
    runs = script_runs(text)
    if len(runs) > 1 and len(text) >= 3:
        plan.add(FtsIndex.TRIGRAM, quote(text), text)
    for run, unsegmented in runs:
        if unsegmented:
            _plan_run(run, plan, split=True)
            continue
        part = _strip_edges(run)
        if part:
            # Glued to CJK in the query, so probably glued in messages too: one unicode61 token.
            plan.add(FtsIndex.PORTER, quote(part), part)
            if len(part) >= 3:
                plan.add(FtsIndex.TRIGRAM, quote(part), part)


def _plan_run(run: str, plan: _Plan, *, split: bool) -> None:
    """Plan a run of unsegmented text; `split` also adds its n-grams (not for quoted phrases)."""
    if len(run) <= 2:
        if len(run) == 1 and run in CJK_PARTICLES:
            return
        plan.add(FtsIndex.PORTER, quote(run), run)
        plan.prefixes.append(run)
        return
    plan.add(FtsIndex.TRIGRAM, quote(run), run)
    if not split or len(run) < 4:
        return
    for start in range(min(len(run) - 2, MAX_GRAMS_PER_RUN)):
        plan.grams.append(FtsClause(FtsIndex.TRIGRAM, quote(run[start : start + 3]), run))
    for start in range(min(len(run) - 1, MAX_GRAMS_PER_RUN + 1)):
        bigram = run[start : start + 2]
        if not any(char in CJK_PARTICLES for char in bigram):
            plan.gram_prefixes.append(bigram)
