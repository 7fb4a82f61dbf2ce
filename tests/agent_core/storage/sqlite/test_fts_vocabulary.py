"""Document-frequency trimming and trigram prefix bounds, driven by counts from real FTS5 tables."""

from __future__ import annotations

from agent_core.storage.sqlite.match_expressions import (
    FtsClause,
    FtsIndex,
    doc_count_limit,
    trigram_prefix_bounds,
    trim_common_clauses,
)
from tests.agent_core.storage.sqlite.fts_corpus import FtsCorpus, build_fts_query, open_corpus

TABLES = {FtsIndex.PORTER: "porter_fts", FtsIndex.TRIGRAM: "trigram_fts"}


def _counts(corpus: FtsCorpus, clauses: tuple[FtsClause, ...], total: int) -> dict[FtsClause, int]:
    limit = doc_count_limit(total)
    return {c: corpus.count(TABLES[c.index], c.expression, limit) for c in clauses}


def test_very_common_term_is_trimmed_and_rare_term_still_finds_its_message() -> None:
    rows = [(n, f"hello again, message number {n}") for n in range(1, 201)]
    rows.append((500, "hello zebra"))
    with open_corpus(rows) as corpus:
        query = build_fts_query("hello zebra")
        counts = _counts(corpus, query.clauses, total=len(rows))
        assert counts[query.clauses[0]] == doc_count_limit(len(rows))  # counting stopped at the limit
        trimmed = trim_common_clauses(query, counts, total_docs=len(rows))
        assert trimmed.porter == '"zebra"'
        assert corpus.run(trimmed).ids == (500,)


def test_trimming_never_empties_an_expression() -> None:
    rows = [(n, f"hello world {n}") for n in range(1, 51)]
    with open_corpus(rows) as corpus:
        query = build_fts_query("hello world")
        counts = _counts(corpus, query.clauses, total=len(rows))
        trimmed = trim_common_clauses(query, counts, total_docs=len(rows))
        assert trimmed.porter is not None and " OR " not in trimmed.porter
        assert len(corpus.run(trimmed).ids) == 50


def test_clauses_without_counts_are_kept() -> None:
    query = build_fts_query("alpha beta")
    assert trim_common_clauses(query, {}, total_docs=10).porter == query.porter


def test_prefix_bounds_select_exactly_the_trigrams_starting_with_the_prefix() -> None:
    with open_corpus([(1, "苹果和香蕉"), (2, "ABCdef 苹")]) as corpus:
        assert corpus.vocabulary(*trigram_prefix_bounds("苹果")) == ["苹果和"]
        # The trigram tokenizer folds case, so the bounds must too.
        assert corpus.vocabulary(*trigram_prefix_bounds("AB")) == ["abc"]
