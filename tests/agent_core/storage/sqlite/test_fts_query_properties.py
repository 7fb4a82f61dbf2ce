"""Property tests: any text at all plans without raising and runs on real FTS5 tables without error."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core.storage.sqlite.match_expressions import FtsIndex, quote
from tests.agent_core.storage.sqlite.fts_corpus import FtsCorpus, build_fts_query, open_corpus

ROWS = [
    (1, "the runner runs NOT AND OR NEAR quickly"),
    (2, "我昨天买了苹果和香蕉"),
    (3, 'quotes " and "" and stars * ^ : ( ) { } + -'),
    (4, "나는 사과를 좋아해요 東京に行きます"),
]
SYNTAX = [
    "NOT",
    "AND",
    "OR",
    "NEAR(",
    "NEAR",
    ")",
    "(",
    "*",
    "^",
    ":",
    "{}",
    "{",
    "}",
    "+",
    "-",
    '"',
    '""',
    "“",
    "”",
    "'",
    "\\",
    "col:",
    "body:",
    "\x00",
    "\ud800",
    "\udfff",
    "苹果",
    "的",
    "人工智能",
    "ab",
]
ANY_CHAR = st.characters(codec=None, categories=None)
SURROGATES_AND_CONTROLS = st.characters(categories=["Cs", "Cc", "Cf", "Zs", "Po", "Lo"])
# Everything outside quoted tokens must be our own syntax: OR, NOT, parentheses, prefix stars.
QUOTED_TOKEN = re.compile(r'"(?:[^"]|"")*"')
OWN_SYNTAX = re.compile(r"(?:\s|OR|NOT|\(|\)|\*)*")

query_text = st.one_of(
    st.text(alphabet=ANY_CHAR, max_size=60),
    st.text(alphabet=SURROGATES_AND_CONTROLS, max_size=40),
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(alphabet=ANY_CHAR, max_size=6)), max_size=12).map(
        " ".join
    ),
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(alphabet=ANY_CHAR, max_size=3)), max_size=12).map(
        "".join
    ),
)


@pytest.fixture(scope="module")
def corpus() -> Iterator[FtsCorpus]:
    with open_corpus(ROWS) as opened:
        yield opened


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=query_text)
def test_any_text_plans_and_runs_without_error(corpus: FtsCorpus, text: str) -> None:
    query = corpus.expand(build_fts_query(text))
    expressions = {
        "porter_fts": query.porter,
        "trigram_fts": query.trigram,
        "trigram_fallback": query.trigram_fallback,
    }
    for table, expression in expressions.items():
        if expression is None:
            continue
        expression.encode("utf-8")  # no lone surrogate ever reaches SQLite
        assert OWN_SYNTAX.fullmatch(QUOTED_TOKEN.sub(" ", expression)), expression
        corpus.match("trigram_fts" if table == "trigram_fallback" else table, expression)
    for clause in query.clauses + query.excluded_clauses:
        assert clause.index in (FtsIndex.PORTER, FtsIndex.TRIGRAM)
        assert QUOTED_TOKEN.match(clause.expression)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=ANY_CHAR, max_size=30))
def test_quote_always_yields_one_fts5_string(corpus: FtsCorpus, text: str) -> None:
    quoted = quote(text)
    assert QUOTED_TOKEN.fullmatch(quoted)
    corpus.match("porter_fts", quoted)
    corpus.match("trigram_fts", quoted + " OR " + quoted + "*")
