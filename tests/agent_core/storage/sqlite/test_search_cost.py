"""Search cost tracks what matches, not how much history there is: no message scans for short CJK terms."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_core.search import SearchScope, SearchSettings
from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateSettings, StateStore
from agent_core.storage.sqlite.search_index import execute
from tests.agent_core.search.test_service import say, searchable
from tests.agent_core.storage.sqlite.fts_corpus import build_fts_query

_FILLER = ("今天天气很好我们去公园散步", "deploy the release tomorrow morning", "数据库索引重建完成了")


async def _vm_steps(store: StateStore, query: str) -> int:
    """SQLite virtual-machine steps (in thousands) one search executes on a reader connection."""
    plan = build_fts_query(query)

    def run(conn: sqlite3.Connection) -> int:
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        conn.set_progress_handler(tick, 1000)
        try:
            hits = execute(conn, plan, SearchScope.all_conversations(), 3, SearchSettings().budget()).hits
        finally:
            conn.set_progress_handler(None, 0)
        assert hits
        return steps[0]

    return await store.run_read(run, with_index=True)


async def _filler(store: StateStore, count: int) -> None:
    conversation = await store.ensure_conversation("filler", Principal(person_id="zed"))
    texts = [f"{_FILLER[i % 3]} {i}" for i in range(count)]
    await store.append_messages(conversation.tip_session_id, [NewMessage("user", t) for t in texts])


async def test_short_cjk_terms_cost_the_same_with_ten_times_more_history(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        await say(store, "k", "ana", "下周去北京出差", "北京的酒店订好了")
        await _filler(store, 300)
        assert await store.wait_indexed(10)
        small = await _vm_steps(store, "北京")
        await _filler(store, 3_000)
        assert await store.wait_indexed(10)
        large = await _vm_steps(store, "北京")
    assert large <= small * 2 + 5


async def test_substrings_of_words_are_found_when_the_trigram_index_covers_all_text(tmp_path: Path) -> None:
    async with StateStore(tmp_path, StateSettings(trigram_scope="all")) as store:
        conversation, ids = await say(store, "k", "ana", "the kubernetes upgrade went fine")
        search = await searchable(store)
        results = await search.search("bernet", SearchScope.person("ana"))
    assert [c.conversation_id for c in results.conversations] == [conversation]
    assert results.conversations[0].snippets[0].message_id == ids[0]
