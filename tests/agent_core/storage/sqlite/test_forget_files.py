"""Forgetting on SQLite leaves no byte of a forgotten conversation in any file of the home — state.db,
search.db (contentless FTS5: the terms themselves), their -wal/-shm files — while the store is still open,
and a batch the indexer read before the deletion is never indexed after it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agent_core.search.embedding import WordHashEmbedder
from agent_core.storage import ModelCall, NewMessage, NewSegment, Principal
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.sidecar import Alive, PendingRow, index_rows, open_sidecar, read_progress
from agent_core.storage.sqlite.window_store import live_ids

ANA = Principal(person_id="ana", platform="web", display_name="Ana")
BOB = Principal(person_id="bob", platform="web", display_name="Bob")


def files_holding(home: Path, needle: str) -> list[str]:
    """Every file under ``home`` whose bytes contain ``needle`` (UTF-8)."""
    data = needle.encode()
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and data in p.read_bytes())


async def converse(store: StateStore, key: str, who: Principal, canary: str, turns: int = 30) -> str:
    conversation = await store.ensure_conversation(key, who, NewSegment(f"system about {canary}", "m"))
    tip = conversation.tip_session_id
    for n in range(turns):
        await store.append_messages(
            tip,
            [
                NewMessage("user", f"turn {n}: please keep {canary} and {canary}{n}", author=who.person_id),
                NewMessage("assistant", f"kept {canary}{n} — 北京{canary}"),
                NewMessage("tool", f"lookup result {canary}", tool_call_id=f"c{n}", tool_name="lookup"),
            ],
            ModelCall(10, 2),
        )
    await store.compress(tip, NewSegment(f"system v2 {canary}"), [NewMessage("user", f"[summary] {canary}")])
    return conversation.id


async def embedded(store: StateStore, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while (status := await store.semantic_status()).state != "ready" or status.windows == 0:
        assert time.monotonic() < deadline, f"windows never embedded: {status}"
        await store.wait_indexed(0.05)  # a bounded wait on the index, not a sleep


async def test_no_file_of_the_home_keeps_a_forgotten_conversation(home: Path) -> None:
    async with StateStore(home, embedder=WordHashEmbedder()) as store:
        ana = await converse(store, "web:dm:ana", ANA, "quokkacanary")
        bob = await converse(store, "web:dm:bob", BOB, "wombatcanary")
        assert await store.wait_indexed(10)
        await embedded(store)
        assert "state.db-wal" in files_holding(home, "quokkacanary")

        await store.forget_conversations([ana])

        assert files_holding(home, "quokkacanary") == []
        assert files_holding(home, "wombatcanary") != []
        assert [h.message_id for h in await store.fts_match('"quokkacanary"', None, limit=5)] == []
        # The terms are gone from the index itself, not only from results (FTS5 stores a term without the
        # prefix it shares with the one before it, so a byte scan alone could miss one).
        assert await store.fts_vocabulary("porter", "quokkacanary", "quokkacanarz", limit=50) == []
        assert await store.fts_vocabulary("porter", "wombatcanary", "wombatcanarz", limit=50) != []
        assert {h.conversation_id for h in await store.fts_match('"wombatcanary"', None, limit=500)} == {bob}
    sidecar = sqlite3.connect(home / "search.db")
    try:
        for table in ("fts_porter", "fts_trigram"):
            sidecar.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        assert sidecar.execute("SELECT count(*) FROM windows").fetchone()[0] > 0  # bob's
    finally:
        sidecar.close()
    assert files_holding(home, "quokkacanary") == []


async def test_a_batch_read_before_a_forgetting_is_not_indexed_after_it(home: Path) -> None:
    async with StateStore(home) as store:
        conversation = await store.ensure_conversation("web:dm:ana", ANA)
        tip = conversation.tip_session_id
        (message_id,) = await store.append_messages(tip, [NewMessage("user", "stale ibexcanary")])
        assert await store.wait_indexed(10)
        await store.forget_conversations([conversation.id])
    # What the indexer holds when it read the row just before the deletion: the sidecar transaction asks
    # state.db which segments still exist and leaves the rest out.
    state = sqlite3.connect(home / "state.db")
    sidecar = open_sidecar(home / "search.db", busy_timeout_ms=1000)
    try:
        progress = read_progress(sidecar)
        stale = PendingRow(progress.last_id + 1, "user", "stale ibexcanary", None, conversation.id, tip)
        index_rows(
            sidecar,
            [stale],
            progress.db_uuid,
            "all",
            None,
            lambda ids, segs: Alive(*live_ids(state, ids, segs)),
        )
        hits = sidecar.execute("SELECT rowid FROM fts_porter WHERE fts_porter MATCH 'ibexcanary'").fetchall()
        assert hits == [] and message_id <= progress.last_id
        assert read_progress(sidecar).last_id == stale.id  # the mark still moves past the batch
    finally:
        sidecar.close()
        state.close()
