"""Many OS processes on one state.db: appends land exactly once and in order; concurrent opens migrate once;
concurrent compressions of one segment never fork the chain."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from agent_core.storage import NewSegment, Principal
from agent_core.storage.sqlite.connection import connect
from agent_core.storage.sqlite.schema import AGENT_LADDER
from gateway.storage.sqlite import GATEWAY_LADDER, open_state_store
from tests.spawned import SPAWN, run_spawned
from tests.storage.release_0_1 import create_database, schema_of, versions_of

from . import state_writer

_LINE = re.compile(r"writer (\d+) message (\d+) ")


def _writer_sequences(contents: list[str]) -> dict[int, list[int]]:
    by_writer: dict[int, list[int]] = {}
    for content in contents:
        match = _LINE.match(content)
        assert match is not None, content
        by_writer.setdefault(int(match.group(1)), []).append(int(match.group(2)))
    return by_writer


async def _contents_by_key(home: Path, keys: set[str]) -> tuple[set[str], list[str]]:
    async with open_state_store(home) as store:
        contents: list[str] = []
        conversations = set()
        for key in keys:
            conversation = await store.live_conversation(key)
            assert conversation is not None
            conversations.add(conversation.id)
            contents += [m.content or "" for m in await store.conversation_messages(conversation.id)]
    return conversations, contents


@pytest.mark.parametrize("shared", [False, True], ids=["own-conversations", "one-shared-conversation"])
def test_eight_processes_append_every_message_exactly_once_in_writer_order(
    tmp_path: Path, shared: bool
) -> None:
    writers, count = 8, 60
    barrier = SPAWN.Barrier(writers)
    keys = [("shared" if shared else f"own:{w}") for w in range(writers)]
    run_spawned(
        [
            SPAWN.Process(
                target=state_writer.append_in_process, args=(str(tmp_path), w, count, keys[w], barrier)
            )
            for w in range(writers)
        ]
    )
    conversations, contents = asyncio.run(_contents_by_key(tmp_path, set(keys)))
    assert len(conversations) == (1 if shared else writers)
    sequences = _writer_sequences(contents)
    assert sorted(sequences) == list(range(writers))
    # Read back in id order, each writer's messages appear once each and in the order it awaited them.
    assert all(seqs == list(range(count)) for seqs in sequences.values())


def test_processes_opening_a_fresh_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    processes = 6
    barrier = SPAWN.Barrier(processes)
    run_spawned(
        [
            SPAWN.Process(target=state_writer.open_in_process, args=(str(tmp_path), barrier))
            for _ in range(processes)
        ]
    )
    _assert_migrated_once(tmp_path)


def test_processes_opening_an_old_database_at_once_upgrade_it_once(tmp_path: Path) -> None:
    home, fresh = tmp_path / "old", tmp_path / "fresh"
    home.mkdir()
    fresh.mkdir()
    create_database(home / "state.db", 1)  # release 0.1 at version 1: one shared ladder
    processes = 6
    barrier = SPAWN.Barrier(processes)
    run_spawned(
        [
            SPAWN.Process(target=state_writer.open_in_process, args=(str(home), barrier))
            for _ in range(processes)
        ]
    )
    _assert_migrated_once(home)
    asyncio.run(_open_once(fresh))
    assert schema_of(home / "state.db") == schema_of(fresh / "state.db")


async def _open_once(home: Path) -> None:
    async with open_state_store(home):
        pass


def _assert_migrated_once(home: Path) -> None:
    # versions_of asserts one row in each version table.
    assert versions_of(home / "state.db") == {
        "schema_version": AGENT_LADDER.latest,
        "gateway_schema_version": GATEWAY_LADDER.latest,
    }
    conn = connect(home / "state.db", busy_timeout_ms=100)
    try:
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'db_uuid'").fetchone()[0] == 1
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"conversations", "sessions", "messages", "outbox", "turn_jobs", "leases"} <= tables
    finally:
        conn.close()


async def _new_conversation(home: Path) -> str:
    async with open_state_store(home) as store:
        conversation = await store.ensure_conversation("race", Principal(person_id="p"), NewSegment("root"))
        return conversation.tip_session_id


async def _chain_of(home: Path, segment_id: str) -> tuple[list[str], str, str]:
    async with open_state_store(home) as store:
        lineage = await store.lineage(segment_id)
        tip = await store.resolve_tip(segment_id)
        conversation = await store.get_conversation(lineage[0].conversation_id)
        assert conversation is not None
        return [s.id for s in lineage], tip.id, conversation.tip_session_id


def test_two_processes_compressing_one_segment_leave_one_tip_and_one_child(tmp_path: Path) -> None:
    for round_no in range(3):
        home = tmp_path / f"round{round_no}"
        home.mkdir()
        parent = asyncio.run(_new_conversation(home))
        barrier = SPAWN.Barrier(2)
        outs = [home / f"out{i}" for i in range(2)]
        run_spawned(
            [
                SPAWN.Process(
                    target=state_writer.compress_in_process,
                    args=(str(home), parent, str(i), barrier, str(outs[i])),
                )
                for i in range(2)
            ]
        )
        outcomes = sorted(out.read_text().split() for out in outs)
        assert [o[0] for o in outcomes] == ["already", "compressed"]
        child = outcomes[1][1]
        assert outcomes[0][1] == child  # the loser is told the current tip
        assert asyncio.run(_chain_of(home, parent)) == ([parent, child], child, child)
