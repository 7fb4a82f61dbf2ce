"""The issue's acceptance test, on both backends: a person's unique canary written through every path a turn
has (their message, the model's reply, the memory tool into USER.md and MEMORY.md, a tool output, a
schedule's text, the local provider's facts, the search index, a command's reply, a thread shared with
another person) is found nowhere after they are erased —
no file under the home holds its bytes (state.db, search.db, their WAL files, the facts file, memory files)
and no row of any table does on PostgreSQL — while another person's canary is still everywhere it was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_core.llm.scripted import ScriptedClient
from agent_core.search import plan_query
from agent_core.storage.search_index import SearchRequest, SearchScope
from gateway.contracts import ChatKind
from gateway.erasure import PersonEraser, UnknownPersonError
from gateway.storage import Storage
from gateway.storage.sqlite import SqliteStorage
from tests import postgres_server
from tests.gateway.delivery.recording_adapter import dm
from tests.gateway.queue.harness import Backbone, backbone, open_config

from .canary import base_files, canary_model, files_holding, tables_holding

ADA, BOB = "CANARYada7f3qz", "CANARYbob9k2wx"


def config(kind: str, home: Path) -> dict[str, Any]:
    storage = postgres_server.storage_settings(home) if kind == "postgres" else {"backend": "sqlite"}
    return open_config(
        storage=storage, memory={"provider": {"name": "local"}}, adapters={"test": {"enabled": True}}
    )


async def converse(b: Backbone, user: str, canary: str) -> None:
    """Two turns of ``user``: one that stores the canary everywhere, one that repeats it."""
    before = len(b.adapter.sent)
    await b.gateway.pipeline.handle(dm(f"please remember {canary}", user=user, event=f"{user}-1"))
    await b.wait_for(lambda: any(f"noted {canary}" in t for t in b.adapter.texts()[before:]))
    await b.gateway.pipeline.handle(dm(f"say {canary} again", user=user, event=f"{user}-2"))
    await b.wait_for(lambda: sum(f"noted {canary}" in t for t in b.adapter.texts()[before:]) >= 2)
    # A command's reply (the memory, canary included) lives only in the outbox.
    await b.gateway.pipeline.handle(dm("/memory", user=user, event=f"{user}-memory"))
    await b.wait_for(lambda: sum(canary in t for t in b.adapter.texts()[before:]) >= 3)


async def in_thread(b: Backbone, user: str, canary: str) -> None:
    """One turn of ``user`` in a thread both people write in (one conversation, owned by who spoke first)."""
    said = dm(f"in the thread {canary}", user=user, event=f"{user}-t", chat_id="g1", kind=ChatKind.THREAD)
    await b.gateway.pipeline.handle(replace(said, chat=replace(said.chat, thread_id="t1")))
    await b.wait_for(lambda: sum(f"noted {canary}" in t for t in b.adapter.texts()) >= 3)


async def settle(b: Backbone) -> None:
    await b.wait_for(lambda: b.pool is not None and b.pool.in_flight == 0)
    assert await b.runtime.providers.drain(10.0)
    assert await b.runtime.storage.search.wait_indexed(10.0)


def stored(kind: str, home: Path, canary: str) -> set[str]:
    where = base_files(files_holding(home, canary))
    if kind == "postgres":
        where |= {f"table:{t}" for t in tables_holding(home, canary)}
    return where


def kept(where: set[str]) -> set[str]:
    """Where a canary is, but search.db: its FTS5 pages store a term after the one before it without their
    common prefix, so its raw bytes hold a canary or not depending on its neighbours (search finds it)."""
    return where - {"search.db"}


async def searchable(storage: Storage, canary: str) -> bool:
    assert await storage.search.wait_indexed(10.0)
    request = SearchRequest(plan_query(canary), SearchScope.all_conversations(), 5)
    return bool((await storage.search.search_messages(request)).hits)


async def in_vocabulary(storage: SqliteStorage, canary: str) -> list[tuple[str, int]]:
    term = canary.lower()
    return await storage.state.fts_vocabulary("porter", term, term + "\uffff", limit=10)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_an_erased_persons_canary_is_nowhere_and_another_persons_is_untouched(
    kind: str, home: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "postgres":
        request.getfixturevalue("postgres_database")
    client = ScriptedClient(default=canary_model)
    async with backbone(home, client=client, config=config(kind, home)) as b:
        storage = b.runtime.storage
        await converse(b, "ada", ADA)
        await converse(b, "bob", BOB)
        await in_thread(b, "bob", BOB)
        await in_thread(b, "ada", ADA)
        await settle(b)
        ada = await storage.identity.account_person("test", "ada")
        assert ada is not None
        ada_before, bob_before = stored(kind, home, ADA), stored(kind, home, BOB)
        if kind == "sqlite":
            memory = {f"memories/people/{ada}/USER.md", f"memories/people/{ada}/MEMORY.md"}
            assert {"state.db", "search.db", "providers/local.db", *memory} <= ada_before, ada_before
        else:
            assert {
                "table:messages",
                "table:memory_documents",
                "table:facts",
                "table:schedules",
            } <= ada_before

        report = await PersonEraser(storage, b.runtime.providers.provider).erase(ada, erased_by="admin:test")

        assert report.complete and report.conversations == 1 and report.messages > 0
        assert report.shared_messages >= 2  # ada's turn in bob's thread: her message, the reply, tool rows
        assert report.memory_documents == 2 and report.facts > 0 and report.schedules >= 2
        assert stored(kind, home, ADA) == set()
        assert kept(stored(kind, home, BOB)) == kept(bob_before)
        assert await searchable(storage, BOB) and not await searchable(storage, ADA)
        if isinstance(storage, SqliteStorage):  # the term itself is gone from the contentless index
            assert await in_vocabulary(storage, ADA) == [] and await in_vocabulary(storage, BOB) != []
        assert await storage.identity.account_person("test", "ada") is None
        with pytest.raises(UnknownPersonError):
            await PersonEraser(storage).erase(ada, erased_by="admin:test")
        (record, *_) = (await storage.console.audit_log(person_id=ada)).rows
        assert (record.action, record.actor, record.old_text) == ("erase", "admin:test", None)
        assert record.new_text is not None and ADA not in record.new_text

        # The account writes again: a new person, who starts with nothing of the old one's.
        await b.gateway.pipeline.handle(dm("hello again", user="ada", event="ada-3"))
        await b.wait_for(lambda: b.adapter.texts()[-1] == "noted nothing")
        await settle(b)
        fresh = await storage.identity.account_person("test", "ada")
        assert fresh is not None and fresh != ada
        assert stored(kind, home, ADA) == set()
    assert stored(kind, home, ADA) == set()
    assert kept(stored(kind, home, BOB)) == kept(bob_before)
