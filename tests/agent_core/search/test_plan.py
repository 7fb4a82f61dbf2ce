"""The planner's output as the SearchIndex port receives it: plain words, phrases, substrings; no syntax."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.search import MAX_TERMS, plan_query
from agent_core.storage.search_index import ClauseRole, MatchKind, QueryClause


def _kinds(text: str) -> list[tuple[MatchKind, str, ClauseRole, bool]]:
    return [(c.kind, c.text, c.role, c.prefix) for c in plan_query(text).clauses]


def test_natural_language_keeps_content_words_as_plain_text() -> None:
    plan = plan_query("what did we decide about the config")
    assert plan.terms == ("decide", "config")
    assert _kinds("what did we decide about the config") == [
        (MatchKind.WORDS, "decide", ClauseRole.PRIMARY, False),
        (MatchKind.SUBSTRING, "decide", ClauseRole.FALLBACK, False),
        (MatchKind.WORDS, "config", ClauseRole.PRIMARY, False),
        (MatchKind.SUBSTRING, "config", ClauseRole.FALLBACK, False),
    ]


def test_quotes_and_operators_become_phrases_exclusions_and_prefixes_not_syntax() -> None:
    plan = plan_query('"blue whale" deplo* NOT staging')
    assert plan.phrases == ("blue whale",) and plan.excluded == ("staging",)
    assert QueryClause(MatchKind.WORDS, "blue whale", "blue whale") in plan.clauses
    assert QueryClause(MatchKind.WORDS, "deplo", "deplo", prefix=True) in plan.clauses
    assert [c.text for c in plan.excluded_clauses if c.kind is MatchKind.WORDS] == ["staging"]
    assert not any('"' in c.text for c in plan.clauses)


def test_identifiers_are_words_and_exact_substrings() -> None:
    assert _kinds("chat-send") == [
        (MatchKind.WORDS, "chat-send", ClauseRole.PRIMARY, False),
        (MatchKind.SUBSTRING, "chat-send", ClauseRole.PRIMARY, False),
    ]


def test_short_cjk_words_become_substring_prefixes_and_long_runs_substrings() -> None:
    short = plan_query("苹果")
    assert short.substring_prefixes == ("苹果",)
    assert [(c.kind, c.text) for c in short.clauses] == [(MatchKind.WORDS, "苹果")]
    long = plan_query("人工智能")
    assert (MatchKind.SUBSTRING, "人工智能") in [(c.kind, c.text) for c in long.clauses]
    assert {"人工智", "工智能"} <= {c.text for c in long.clauses}


def test_exclusions_alone_plan_nothing() -> None:
    plan = plan_query("NOT secret")
    assert plan.is_empty and plan.excluded_clauses == ()


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_plans_without_raising_into_clean_bounded_clauses(text: str) -> None:
    plan = plan_query(text)
    assert len(plan.terms) + len(plan.phrases) + len(plan.excluded) <= MAX_TERMS
    for clause in plan.clauses + plan.excluded_clauses:
        assert clause.text.strip() and "\x00" not in clause.text
        clause.text.encode("utf-8")  # no lone surrogate reaches a backend
        assert not clause.prefix or clause.kind is MatchKind.WORDS
