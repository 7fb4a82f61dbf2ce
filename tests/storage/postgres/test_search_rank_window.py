"""On PostgreSQL, which clauses a search drops to keep its rank window bounded depends on the messages the
search may return, never on the planner's statistics: the same data answers the same way before and after
``ANALYZE`` (which decides whether clauses are counted before or after the ranked read)."""

from __future__ import annotations

from pathlib import Path

import psycopg

from agent_core.search import plan_query
from agent_core.storage.search_index import SearchBudget, SearchIndex, SearchRequest, SearchScope
from tests import postgres_server
from tests.storage.contract.backends import backend_for
from tests.storage.contract.test_search_index import say

WINDOW = SearchBudget(rank_window=50)


async def found(search: SearchIndex, text: str, scope: SearchScope) -> list[int]:
    snapshot = await search.search_messages(SearchRequest(plan_query(text), scope, 100, WINDOW))
    return [hit.message.id for hit in snapshot.hits]


def analyse(postgres_database: str, home: Path) -> None:
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f'ANALYZE "{postgres_server.schema_for(home)}".messages')


async def test_a_common_word_is_dropped_the_same_way_whatever_the_statistics_say(
    postgres_database: str, home: Path
) -> None:
    async with backend_for("postgres", home).open() as storage:
        store, search = storage.agent, storage.search
        _, (rare,) = await say(store, "old", "ana", "deploy the kubernetes operator")
        for n in range(300):
            await say(store, f"k{n}", "ana", f"deploy note number {n}")
        assert await search.wait_indexed(10)
        before = await found(search, "deploy kubernetes", SearchScope.all_conversations())
        analyse(postgres_database, home)
        after = await found(search, "deploy kubernetes", SearchScope.all_conversations())
    assert before == after == [rare]  # "deploy" alone fills the window: only "kubernetes" is ranked


async def test_other_peoples_messages_never_drop_a_word_from_a_persons_search(
    postgres_database: str, home: Path
) -> None:
    async with backend_for("postgres", home).open() as storage:
        store, search = storage.agent, storage.search
        for n in range(200):
            await say(store, f"b{n}", "bob", f"alpha report {n}")
        alpha = {(await say(store, f"a{n}", "ana", f"alpha notes {n}"))[1][0] for n in range(40)}
        beta = {(await say(store, f"c{n}", "ana", f"beta notes {n}"))[1][0] for n in range(40)}
        assert await search.wait_indexed(10)
        before = await found(search, "alpha beta", SearchScope.person("ana"))
        analyse(postgres_database, home)
        after = await found(search, "alpha beta", SearchScope.person("ana"))
    # Bob's 200 make "alpha" common overall, but in Ana's conversations neither word fills the window of
    # 50 alone: both stay, and the window holds her newest 50 matches of either.
    assert before == after
    assert set(after) == beta | set(sorted(alpha)[-10:])
