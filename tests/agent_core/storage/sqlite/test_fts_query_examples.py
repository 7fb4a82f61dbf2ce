"""Example searches a person or the model would type, run against real FTS5 tables."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from agent_core.search import MAX_TERMS
from agent_core.storage.sqlite.match_expressions import quote
from tests.agent_core.storage.sqlite.fts_corpus import FtsCorpus, build_fts_query, open_corpus

MESSAGES = {
    1: "We moved the config to YAML last week.",
    2: "She runs every morning before work.",
    3: "A blue whale surfaced near the boat.",
    4: "The whale was blue and enormous.",
    5: "Call chat-send with P2.2 and foo_bar, then mail user@example.com.",
    6: "我昨天买了苹果和香蕉，味道很好",
    7: "我们讨论了人工智能的发展方向",
    8: "Deploying to production went fine after the rollback.",
    9: "Deploying to staging broke the login page.",
    10: "我用Python写了一个脚本",
    11: "나는 사과를 좋아해요",
    12: "明日東京に行きます",
    13: "The secret handshake is documented in the wiki.",
    14: "mnemogate.chat-sender retries on 429",
}


@pytest.fixture
def corpus() -> Iterator[FtsCorpus]:
    with open_corpus(MESSAGES.items()) as opened:
        yield opened


def test_english_sentence_finds_message_sharing_one_word(corpus: FtsCorpus) -> None:
    assert 1 in corpus.search("What did we decide about the deployment config?")


def test_stopwords_are_not_searched(corpus: FtsCorpus) -> None:
    query = build_fts_query("what did we decide about the config")
    assert query.terms == ("decide", "config")
    assert query.porter == '"decide" OR "config"'


def test_query_of_only_stopwords_still_searches(corpus: FtsCorpus) -> None:
    assert build_fts_query("to be or not to be").porter is not None


def test_stemming_running_finds_runs(corpus: FtsCorpus) -> None:
    assert corpus.search("running") == (2,)


def test_phrase_is_honoured(corpus: FtsCorpus) -> None:
    assert corpus.search('"blue whale"') == (3,)
    assert set(corpus.search("blue whale")) == {3, 4}


def test_curly_quotes_make_a_phrase(corpus: FtsCorpus) -> None:
    assert corpus.search("“blue whale”") == (3,)


@pytest.mark.parametrize("identifier", ["chat-send", "P2.2", "foo_bar", "user@example.com"])
def test_identifiers_stay_searchable(corpus: FtsCorpus, identifier: str) -> None:
    assert 5 in corpus.search(identifier)


def test_identifier_matches_as_substring_through_trigram(corpus: FtsCorpus) -> None:
    assert set(corpus.search("chat-send")) == {5, 14}


def test_chinese_two_character_word_inside_sentence(corpus: FtsCorpus) -> None:
    assert corpus.search("苹果") == (6,)


def test_chinese_four_character_word(corpus: FtsCorpus) -> None:
    assert corpus.search("人工智能") == (7,)


def test_chinese_sentence_without_spaces_finds_shared_words(corpus: FtsCorpus) -> None:
    found = corpus.search("有没有关于人工智能发展的消息")
    assert found[0] == 7


def test_korean_and_japanese_words(corpus: FtsCorpus) -> None:
    assert corpus.search("사과") == (11,)
    assert corpus.search("東京") == (12,)


def test_latin_word_glued_to_chinese_is_found_by_fallback(corpus: FtsCorpus) -> None:
    query = build_fts_query("Python")
    assert query.trigram is None and query.trigram_fallback == '"Python"'
    assert corpus.search("Python") == (10,)
    assert corpus.search("用Python写") == (10,)


def test_operator_laden_query_returns_results(corpus: FtsCorpus) -> None:
    found = corpus.search('AND OR NEAR( ^config: (whale) {x} + - * " : ) NEAR/3 col:blue')
    assert {1, 3, 4} <= set(found)


def test_not_excludes_next_term(corpus: FtsCorpus) -> None:
    query = build_fts_query("deploying NOT staging")
    assert query.excluded == ("staging",)
    assert corpus.search("deploying NOT staging") == (8,)


def test_leading_not_matches_nothing_instead_of_the_excluded_word(corpus: FtsCorpus) -> None:
    query = build_fts_query("NOT secret")
    assert query.is_empty and query.porter is None and query.trigram is None
    assert corpus.search("NOT secret") == ()


def test_trailing_star_is_a_prefix_query(corpus: FtsCorpus) -> None:
    assert build_fts_query("deplo*").porter == '"deplo"*'
    assert set(corpus.search("deplo*")) == {8, 9}
    assert build_fts_query("de*").porter == '"de"'


@pytest.mark.parametrize("text", ["", "   \n\t", "\x00\x01", "\ud800", '"', "“", "*", "NOT", "AND OR", "的"])
def test_empty_or_junk_input_plans_nothing(corpus: FtsCorpus, text: str) -> None:
    query = build_fts_query(text)
    assert query.is_empty
    assert corpus.search(text) == ()


def test_zero_width_characters_do_not_split_words(corpus: FtsCorpus) -> None:
    assert corpus.search("ru\u200bnning") == (2,)


def test_input_length_and_term_count_are_capped() -> None:
    many = " ".join(f"word{n}" for n in range(100))
    query = build_fts_query(many)
    assert query.truncated and len(query.terms) == MAX_TERMS
    long_query = build_fts_query("x" * 10_000)
    assert long_query.truncated and len(long_query.terms[0]) == 2_048


def test_quote_doubles_internal_quotes() -> None:
    assert quote('say "hi"') == '"say ""hi"""'


def test_every_chinese_hit_comes_from_the_index_not_a_scan() -> None:
    rng = random.Random(7)
    alphabet = [chr(code) for code in range(0x4E00, 0x4E00 + 1500) if chr(code) not in "苹果"]
    filler = ((n, "".join(rng.choice(alphabet) for _ in range(30))) for n in range(1, 3001))
    with open_corpus(filler) as corpus:
        corpus.add([(5000, "我们昨天在超市买了很多苹果还有别的东西")])
        outcome = corpus.run(build_fts_query("苹果"))
        assert outcome.ids == (5000,)
        # A LIKE scan visits all 3,000 rows; the indexed plan does work proportional to its hits.
        assert outcome.vm_steps * 20 < corpus.like_scan_steps("苹果")


def test_word_ending_the_text_needs_the_trailing_space() -> None:
    with open_corpus([(1, "我爱苹果")]) as bare:
        assert bare.search("苹果") == ()
    with open_corpus([(1, "我爱苹果")], trailing_space=True) as padded:
        assert padded.search("苹果") == (1,)


def test_sqlite_trigram_cannot_match_two_characters() -> None:
    """Pins the SQLite behaviour the CJK strategy is built on (see the query module docstring)."""
    with open_corpus([(1, "今天天气很好"), (2, "天气很好")]) as corpus:
        assert corpus.match("trigram_fts", '"天气"') == []
        assert corpus.match("trigram_fts", '"天气"*') == []
        assert corpus.match("porter_fts", '"天气"*') == [2]  # only where the run starts with it
        assert sorted(corpus.match("trigram_fts", '"天气很"')) == [1, 2]


def test_expansions_are_quoted_capped_and_deduplicated() -> None:
    query = build_fts_query("苹果")
    expanded = query.with_trigram_expansions(
        {"苹果": ['苹果"', "苹果和", "苹果和", *(f"苹果{n}" for n in range(99))]}
    )
    trigram = expanded.trigram
    assert trigram is not None and trigram.startswith('"苹果""" OR "苹果和" OR "苹果0"')
    assert trigram.count(" OR ") == 31 - 1  # 32 taken, one duplicate dropped
    assert expanded.trigram_prefixes == ()
