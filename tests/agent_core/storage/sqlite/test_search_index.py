"""The search sidecar: contentless porter and trigram indexes that catch up, survive loss, and never lie."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateSettings, StateStore
from agent_core.storage.sqlite.sidecar import committed_watermark

NO_INDEXER = StateSettings(index_enabled=False)


async def _conversation_with(store: StateStore, key: str, texts: list[str]) -> tuple[str, list[int]]:
    conversation = await store.ensure_conversation(key, Principal(person_id=key))
    ids = await store.append_messages(conversation.tip_session_id, [NewMessage("user", t) for t in texts])
    return conversation.id, ids


async def test_porter_finds_word_forms_and_trigram_finds_chinese_substrings(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        _, ids = await _conversation_with(
            store, "k", ["we were running the benchmarks", "今天讨论数据库索引的性能问题", "nothing relevant"]
        )
        assert await store.wait_indexed(5)
        stemmed = await store.fts_match('"runs"', None, limit=5)
        chinese = await store.fts_match(None, '"数据库索引"', limit=5)
        both = await store.fts_match('"benchmark"', '"据库索"', limit=5)
    assert [h.message_id for h in stemmed] == [ids[0]] and stemmed[0].index == "porter"
    assert [h.message_id for h in chinese] == [ids[1]] and chinese[0].index == "trigram"
    assert chinese[0].content == "今天讨论数据库索引的性能问题" and chinese[0].role == "user"
    assert sorted(h.message_id for h in both) == ids[:2]
    assert [h.score for h in both] == sorted(h.score for h in both)


async def test_hits_can_be_limited_to_conversations_and_tool_names_are_searchable(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        mine, _ = await _conversation_with(store, "mine", ["deploy the gateway"])
        theirs, _ = await _conversation_with(store, "theirs", ["deploy the workers"])
        conversation = await store.get_conversation(mine)
        assert conversation is not None
        (tool_id,) = await store.append_messages(
            conversation.tip_session_id, [NewMessage("tool", "3 rows", tool_name="session_search")]
        )
        assert await store.wait_indexed(5)
        everywhere = await store.fts_match('"deploy"', None, limit=10)
        only_mine = await store.fts_match('"deploy"', None, limit=10, conversation_ids=[mine])
        tools = await store.fts_match('"session_search"', None, limit=10)
    assert {h.conversation_id for h in everywhere} == {mine, theirs}
    assert {h.conversation_id for h in only_mine} == {mine}
    assert [h.message_id for h in tools] == [tool_id] and tools[0].tool_name == "session_search"


async def test_messages_written_without_an_indexer_are_caught_up_by_the_next_one(tmp_path: Path) -> None:
    async with StateStore(tmp_path, NO_INDEXER) as writer:
        _, ids = await _conversation_with(writer, "k", [f"backlog item number{i}" for i in range(50)])
        assert await writer.index_lag() == 50
        assert not await writer.wait_indexed(0.05)
        async with StateStore(tmp_path) as indexer:
            assert await indexer.wait_indexed(10)
        assert await writer.index_lag() == 0
        hits = await writer.fts_match('"number49"', None, limit=5)
    assert [h.message_id for h in hits] == [ids[49]]


async def test_a_second_store_takes_over_indexing_when_the_first_closes(tmp_path: Path) -> None:
    first = StateStore(tmp_path)
    await first.open()
    async with StateStore(tmp_path) as second:
        await _conversation_with(second, "a", ["before handover"])
        assert await second.wait_indexed(5)
        await first.close()
        _, ids = await _conversation_with(second, "b", ["after handover"])
        assert await second.wait_indexed(10)
        hits = await second.fts_match('"handover"', None, limit=5)
    assert ids[0] in {h.message_id for h in hits}


def _damage_sidecar(sidecar: Path, how: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(sidecar) + suffix).unlink(missing_ok=True)
    if how == "garbage":
        sidecar.write_bytes(os.urandom(8192))


async def test_a_deleted_or_garbage_sidecar_is_rebuilt(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        _, ids = await _conversation_with(store, "k", ["alpha message", "beta message"])
        assert await store.wait_indexed(5)
    for damage in ("delete", "garbage"):
        _damage_sidecar(tmp_path / "search.db", damage)
        async with StateStore(tmp_path) as store:
            assert await store.wait_indexed(10)
            hits = await store.fts_match('"beta"', None, limit=5)
        assert [h.message_id for h in hits] == [ids[1]], damage


async def test_a_sidecar_built_for_another_database_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    old_home, new_home = tmp_path / "old", tmp_path / "new"
    async with StateStore(old_home) as store:
        await _conversation_with(store, "k", [f"stale entry{i}" for i in range(10)])
        assert await store.wait_indexed(5)
    async with StateStore(new_home, NO_INDEXER) as store:
        _, ids = await _conversation_with(store, "k", ["fresh entry"])
    shutil.copy(old_home / "search.db", new_home / "search.db")
    async with StateStore(new_home) as store:
        assert await store.wait_indexed(10)
        stale = await store.fts_match('"stale"', None, limit=20)
        fresh = await store.fts_match('"fresh"', None, limit=20)
        assert store.stats().index_rebuilds == 1
    assert stale == [] and [h.message_id for h in fresh] == ids


async def test_default_non_ascii_trigram_scope_keeps_chinese_substrings_and_rebuilds_on_change(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path, StateSettings(trigram_scope="all")) as store:
        _, ids = await _conversation_with(store, "k", ["database tuning 数据库索引优化"])
        assert await store.wait_indexed(5)
        assert len(await store.fts_match(None, '"abase"', limit=5)) == 1
    async with StateStore(tmp_path) as store:  # the default scope is non_ascii
        assert await store.wait_indexed(5)
        english_substring = await store.fts_match(None, '"abase"', limit=5)
        chinese = await store.fts_match(None, '"据库索"', limit=5)
        english_word = await store.fts_match('"tune"', None, limit=5)
        assert store.stats().index_rebuilds == 1
    assert english_substring == []
    assert [h.message_id for h in chinese] == ids == [h.message_id for h in english_word]


async def test_appends_are_never_throttled_when_no_indexer_makes_progress(tmp_path: Path) -> None:
    settings = StateSettings(index_enabled=False, index_max_backlog=10, index_backpressure_check_s=0.001)
    async with StateStore(tmp_path, settings) as store:
        conversation = await store.ensure_conversation("k", Principal())
        for i in range(100):
            await store.append_message(conversation.tip_session_id, NewMessage("user", f"unindexed {i}"))
        assert await store.index_lag() == 100
        assert store.stats().backpressure_pauses == 0


async def test_vocabulary_and_bounded_counts_support_query_planning(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        await _conversation_with(
            store, "k", ["我爱苹果", "苹果很好吃", "common word", "common thing", "rare"]
        )
        assert await store.wait_indexed(5)
        # A two-character word that ends a message still has a trigram starting with it.
        apple = await store.fts_vocabulary("trigram", "苹果", "苹果\U0010ffff", limit=10)
        common = await store.fts_count("porter", '"common"', cap=10)
        capped = await store.fts_count("porter", '"common"', cap=1)
        total = await store.message_count()
    assert {term for term, _ in apple} == {"苹果 ", "苹果很"}
    assert (common, capped, total) == (2, 1, 5)


async def test_the_index_watermark_is_the_largest_committed_message_id(tmp_path: Path) -> None:
    async with StateStore(tmp_path, NO_INDEXER) as store:
        assert await store.run_read(committed_watermark) == 0
        conversation, ids = await _conversation_with(store, "k", ["one", "two"])
        assert await store.run_read(committed_watermark) == ids[-1]
        record = await store.get_conversation(conversation)
        assert record is not None

        def doomed(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO messages(session_id, conversation_id, role, content, created_at) "
                "VALUES (?, ?, 'user', 'never committed', 0)",
                (record.tip_session_id, conversation),
            )
            raise RuntimeError("roll back")

        with pytest.raises(RuntimeError):
            await store.run_write(doomed)
        # A rolled-back id never becomes visible, so the watermark (and what the indexer may cover) stays.
        assert await store.run_read(committed_watermark) == ids[-1]
        (later,) = await store.append_messages(record.tip_session_id, [NewMessage("user", "three")])
        assert await store.run_read(committed_watermark) == later > ids[-1]
