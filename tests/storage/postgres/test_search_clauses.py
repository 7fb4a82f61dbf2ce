"""Which substring clauses PostgreSQL may match case-sensitively: only text with no character that has case
(nor a combining mark a full lower-casing could produce), where LIKE finds exactly what ILIKE finds."""

from __future__ import annotations

import pytest

from agent_core.storage.postgres.search_clauses import PgIndex, is_caseless, pg_query_for
from agent_core.storage.search_index import MatchKind, PlannedQuery, QueryClause


@pytest.mark.parametrize(
    "text", ["服务器部署", "今天的会议", "サーバー", "서버배포", "2024-06-01", "#42_!?", "ٱ"]
)
def test_text_without_case_is_caseless(text: str) -> None:
    assert is_caseless(text)


@pytest.mark.parametrize(
    "text", ["Deploy", "deploy", "服务器deploy", "straße", "ǅ", "ΣΊΣΥΦΟΣ", "i\u0307", "Ｓ"]
)
def test_text_with_a_cased_letter_or_a_combining_mark_is_not(text: str) -> None:
    assert not is_caseless(text)


def test_only_caseless_substrings_are_matched_with_like() -> None:
    planned = PlannedQuery(
        clauses=(
            QueryClause(MatchKind.SUBSTRING, "服务器", "服务器"),
            QueryClause(MatchKind.SUBSTRING, "pgBouncer", "pgBouncer"),
        )
    )
    cjk, latin = pg_query_for(planned).clauses
    assert (cjk.index, cjk.caseless, cjk.needle) == (PgIndex.TRIGRAM, True, "服务器")
    assert (latin.caseless, latin.needle) == (False, "pgbouncer")
