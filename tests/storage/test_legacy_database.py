"""A state.db written by release 0.1 opens with today's code and everything in it is reachable through the
storage port: conversations and their compressed chain, messages, persons and linked accounts, pairing
requests, adapter checkpoints, the outbox and a job still queued. The agent's ladder then goes on past the
shared version 8 (step 9: the usage log), so its one ``schema_version`` row reads 9, a version release 0.1
does not know; the gateway's own ladder starts counting at the shared version.

The data is ``data/state_0_1.sql``, dumped from a home that release 0.1 itself built
(``data/make_state_0_1.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.schema import AGENT_LADDER, SHARED_LADDER_END
from gateway.storage import PairingState
from gateway.storage.sqlite import GATEWAY_LADDER, SqliteStorage, open_state_store

from .release_0_1 import create_database, load_dump, schema_of, versions_of

ADA_KEY = "test:-:dm:dm%2Dada:-:-"
BOB_KEY = "test:-:dm:dm%2Dbob:-:-"
THREAD_KEY = "test:-:thread:g1:t1:-"


@pytest.fixture
async def store(home: Path) -> AsyncIterator[StateStore]:
    load_dump(home / "state.db")
    async with open_state_store(home) as opened:
        yield opened


def test_the_dump_has_the_schema_release_0_1_made_at_its_last_version(tmp_path: Path) -> None:
    """So ``create_database`` builds old databases the way release 0.1 did."""
    load_dump(tmp_path / "dumped.db")
    create_database(tmp_path / "built.db", SHARED_LADDER_END)
    assert schema_of(tmp_path / "dumped.db") == schema_of(tmp_path / "built.db")
    assert versions_of(tmp_path / "dumped.db") == {"schema_version": 8, "gateway_schema_version": None}


async def test_both_ladders_are_at_their_latest_versions(home: Path, store: StateStore) -> None:
    assert versions_of(home / "state.db") == {
        "schema_version": AGENT_LADDER.latest,
        "gateway_schema_version": GATEWAY_LADDER.latest,
    }


async def test_conversations_their_chain_and_messages_are_all_there(store: StateStore) -> None:
    ada = await store.live_conversation(ADA_KEY)
    assert ada is not None and ada.person_id is not None
    root, child = await store.lineage(ada.id)
    assert root.end_reason == "compression" and child.parent_session_id == root.id
    assert (await store.resolve_tip(ada.id)).id == child.id == ada.tip_session_id
    texts = [(m.role, m.content) for m in await store.conversation_messages(ada.id)]
    assert texts == [
        ("user", "hello, I am Ada"),
        ("assistant", "echo: hello, I am Ada"),
        ("user", "remember that I like green tea"),
        ("assistant", "echo: remember that I like green tea"),
        ("user", "[summary] Ada said hello and likes green tea."),
        ("user", "after compression"),
        ("assistant", "still here"),
    ]
    assert [m.content for m in await store.segment_messages(child.id)][-1] == "still here"
    thread = await store.live_conversation(THREAD_KEY)
    assert thread is not None
    assert [m.content for m in await store.conversation_messages(thread.id)] == [
        "a thread question",
        "echo: a thread question",
    ]
    audit = await store.memory_audit(ada.person_id)
    assert [(a.action, a.new_text) for a in audit] == [("add", "Ada likes green tea")]


async def test_an_ended_conversation_stays_ended_and_its_successor_is_live(store: StateStore) -> None:
    bob = await store.live_conversation(BOB_KEY)
    assert bob is not None
    admin = SqliteStorage(store).admin
    rows = await admin.recent_conversations(limit=10, include_ended=True)
    ended = [row for row in rows if row.session_key == BOB_KEY and row.id != bob.id]
    assert len(ended) == 1 and ended[0].end_reason == "new" and ended[0].message_count == 2
    assert len(rows) == 4


async def test_persons_resolve_and_linked_accounts_share_one_person(store: StateStore) -> None:
    identity = SqliteStorage(store).identity
    ada = await identity.account_person("test", "ada")
    bob = await identity.account_person("test", "bob")
    assert ada is not None and bob is not None and ada != bob
    assert await identity.account_person("web", "c_browser1") == ada
    assert {(a.platform, a.account_id) for a in await identity.accounts_of(ada)} == {
        ("test", "ada"),
        ("web", "c_browser1"),
    }
    # Resolving a known account creates nothing new.
    assert await identity.ensure_account("test", "ada", "Ada") == ada


async def test_pairing_requests_and_checkpoints_keep_their_state(store: StateStore) -> None:
    storage = SqliteStorage(store)
    requests = {r.account_id: r.state for r in await storage.pairing.list_requests()}
    assert requests == {"900": PairingState.APPROVED, "901": PairingState.PENDING, "902": PairingState.DENIED}
    assert await storage.pairing.is_approved("telegram", "900")
    assert dict(await storage.checkpoints.load("discord")) == {"channel:42": 1234567890123, "channel:43": 77}


async def test_outbox_rows_are_intact_and_the_queued_job_can_still_be_claimed(store: StateStore) -> None:
    storage = SqliteStorage(store)
    ada = await store.live_conversation(ADA_KEY)
    bob = await store.live_conversation(BOB_KEY)
    assert ada is not None and bob is not None
    outbox = {row.text: row.state for row in await storage.outbox.for_conversation(ada.id)}
    assert outbox == {
        "echo: hello, I am Ada": "sent",
        "echo: remember that I like green tea": "sent",
        "a reply not yet delivered": "pending",
        "a notice that failed": "failed",
    }
    jobs = {(job.conversation_id, job.state) for job in await storage.queue.jobs()}
    assert (bob.id, "queued") in jobs and sum(state == "done" for _, state in jobs) >= 1
    (claimed,) = await storage.queue.claim("legacy-test", lease_s=30.0, limit=10, max_attempts=5)
    assert claimed.conversation_id == bob.id and claimed.actor.person_id == bob.person_id
