"""Search windows and their vectors on every backend: built off the append path, scoped, rebuilt.

Through the port only (``search_messages`` with a query vector, ``participants``, ``semantic_status``,
``rebuild_semantic``); the model is the model-free ``WordHashEmbedder`` (the real one is exercised end to
end in tests/agent_core/search/test_semantic_recall.py).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import numpy.typing as npt

from agent_core.search import WordHashEmbedder, plan_query
from agent_core.storage import NewMessage, Principal
from agent_core.storage.search_index import SearchIndex, SearchRequest, SearchScope, SearchSnapshot
from agent_core.storage.search_windows import SemanticStatus
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage import Storage
from tests.adapters.fakes.recording_sink import wait_until

from .backends import BackendUnderTest
from .test_admin_reads import LONG, answer, turn

ADMIN = SearchScope.all_conversations()
MODEL = WordHashEmbedder()


async def eventually(check: Callable[[], Awaitable[bool]], what: str, within_s: float = 15.0) -> None:
    deadline = time.monotonic() + within_s
    while not await check():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)  # polling a background builder with a deadline


async def embedded(index: SearchIndex) -> SemanticStatus:
    async def ready() -> bool:
        status = await index.semantic_status()
        return status.state == "ready" and status.windows > 0

    await eventually(ready, "every window embedded")
    return await index.semantic_status()


async def search(
    index: SearchIndex, text: str, scope: SearchScope, *, vector: bool = False
) -> SearchSnapshot:
    query = tuple(float(x) for x in MODEL.embed_query(text)) if vector else None
    return await index.search_messages(SearchRequest(plan_query(text), scope, 5, query_vector=query))


def transcript(cid: str, person: str, *turns: tuple[str, str]) -> str:
    messages = [{"role": "user", "author": who, "content": text} for who, text in turns]
    return json.dumps({"id": cid, "person": person, "platform": "import", "messages": messages})


async def test_turns_form_windows_of_three_once_complete_and_the_last_one_when_the_segment_ends(
    storage: Storage,
) -> None:
    agent, index = storage.agent, storage.search
    conversation = await agent.ensure_conversation("dm:ana", Principal(person_id="ana", display_name="Ana"))
    tip = conversation.tip_session_id
    first = await agent.append_messages(
        tip, [NewMessage("user", "the ferry to the island", author="ana"), NewMessage("assistant", "noted")]
    )
    assert await index.wait_indexed(10)
    found = await search(index, "ferry", ADMIN)
    assert [hit.message.id for hit in found.hits] == [first[0]] and found.windows == {}
    third = await agent.append_messages(tip, [NewMessage("user", "it leaves at nine", author="ana")])
    fourth = await agent.append_messages(tip, [NewMessage("assistant", "the ferry is booked")])
    assert await index.wait_indexed(10)
    found = await search(index, "ferry", ADMIN)
    windows = {w.message_ids for refs in found.windows.values() for w in refs}
    assert windows == {(first[0], first[1], third[0])}  # the 4th turn's window is still open
    assert await agent.end_conversation(conversation.id, "new")

    async def closed() -> bool:
        found = await search(index, "ferry booked", ADMIN)
        return (third[0], fourth[0]) in {w.message_ids for refs in found.windows.values() for w in refs}

    await eventually(closed, "the ended segment's last window")


async def test_a_query_vector_finds_windows_only_in_conversations_the_scope_may_read(
    backend: BackendUnderTest,
) -> None:
    async with backend.open(embedder=MODEL) as storage:
        lines = [
            transcript(
                "c-ana", "ana", ("ana", "we sail to the island"), ("bob", "which island"), ("ana", "crete")
            ),
            transcript("c-bob", "bob", ("bob", "the island ferry was late"), ("cy", "again"), ("bob", "yes")),
        ]
        await storage.imports.import_lines(lines)
        assert await storage.search.wait_indexed(10)
        status = await embedded(storage.search)
        assert (status.windows, status.embedded, status.model_id) == (2, 2, MODEL.model_id)
        as_admin = await search(storage.search, "island", ADMIN, vector=True)
        as_cy = await search(storage.search, "island", SearchScope.person("cy"), vector=True)
        as_ana = await search(storage.search, "island", SearchScope.person("ana"), vector=True)
    assert {h.window.conversation_id for h in as_admin.semantic} == {"c-ana", "c-bob"}
    assert as_admin.semantic_status.state == "ready"
    assert all(i in as_admin.messages for h in as_admin.semantic for i in h.window.message_ids)
    assert {h.window.conversation_id for h in as_cy.semantic} == {"c-bob"}  # cy wrote in bob's only
    assert {h.window.conversation_id for h in as_ana.semantic} == {"c-ana"}


async def test_the_live_segment_of_the_callers_conversation_is_never_a_semantic_hit(
    backend: BackendUnderTest,
) -> None:
    async with backend.open(embedder=MODEL) as storage:
        agent = storage.agent
        live = await agent.ensure_conversation("dm:ana", Principal(person_id="ana"))
        other = await agent.start_new_conversation("dm:ana:2", Principal(person_id="ana"))
        for conversation in (live, other):
            await agent.append_messages(
                conversation.tip_session_id,
                [
                    NewMessage("user", "kayak rental prices", author="ana"),
                    NewMessage("assistant", "ok"),
                    NewMessage("user", "and the kayak deposit", author="ana"),
                ],
            )
        assert await storage.search.wait_indexed(10)
        await embedded(storage.search)
        scope = SearchScope.person("ana", current_conversation_id=live.id)
        found = await search(storage.search, "kayak", scope, vector=True)
    assert {h.window.conversation_id for h in found.semantic} == {other.id}


async def test_rebuilding_forgets_every_vector_and_the_background_embeds_them_again(
    backend: BackendUnderTest,
) -> None:
    async with backend.open(embedder=MODEL) as storage:
        turns = [("ana", f"turn {n} about the garden") for n in range(7)]
        await storage.imports.import_lines([transcript("c1", "ana", *turns)])
        assert await storage.search.wait_indexed(10)
        before = await embedded(storage.search)
        await storage.search.rebuild_semantic()
        after = await embedded(storage.search)
    assert before.windows == after.windows == after.embedded == 3


async def test_without_a_model_a_vector_query_says_semantic_search_is_off(storage: Storage) -> None:
    await storage.imports.import_lines([transcript("c1", "ana", ("ana", "the garden"), ("bob", "roses"))])
    assert await storage.search.wait_indexed(10)
    found = await search(storage.search, "garden", ADMIN, vector=True)
    assert found.semantic == () and found.semantic_status.state == "off"
    assert [h.message.conversation_id for h in found.hits] == ["c1"]
    assert (await storage.search.semantic_status()).state == "off"


async def test_participants_are_the_named_speakers_of_conversations_in_the_scope(storage: Storage) -> None:
    await storage.imports.import_lines(
        [
            transcript("c1", "priya", ("Priya", "my project got cancelled"), ("Tom", "Thanks, Priya!")),
            transcript("c2", "sam", ("Sam", "Hey Priya, long time"), ("Alex", "hi")),
        ]
    )
    assert await storage.search.wait_indexed(10)
    index = storage.search
    everyone = await index.participants(ADMIN, ["priya", "tom", "project"])
    as_sam = await index.participants(SearchScope.person("sam"), ["priya", "tom", "sam"])
    assert {name: set(ids) for name, ids in everyone.items()} == {"priya": {"c1"}, "tom": {"c1"}}
    assert {name: set(ids) for name, ids in as_sam.items()} == {"sam": {"c2"}}


class HeldModel(WordHashEmbedder):
    """The word hasher, held inside its passage call until ``release`` (at most ``_HOLD_S``): a model busy
    with a batch for as long as the test needs."""

    _HOLD_S = 30.0

    def __init__(self) -> None:
        super().__init__()
        self.inside = threading.Event()
        self.release = threading.Event()

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.inside.set()
        self.release.wait(self._HOLD_S)
        return super().embed_passages(texts)


async def test_a_turn_finished_while_the_model_embeds_a_batch_is_reported_at_once(
    backend: BackendUnderTest,
) -> None:
    """The model runs outside any transaction: cursors over recent rows (finished turns for /metrics,
    queued replies) never wait for a batch of the background embedder (on PostgreSQL they read below the
    oldest running transaction)."""
    model = HeldModel()
    async with backend.open(embedder=model) as storage:
        try:
            turns = [("ana", f"turn {n} about the garden") for n in range(4)]
            await storage.imports.import_lines([transcript("c1", "ana", *turns)])
            await wait_until(model.inside.is_set, within_s=15, what="the model to start a batch")
            await storage.queue.enqueue(turn("hello", "e1", "r1"), QUEUE_WHEN_BUSY)
            job = (await storage.queue.claim("w1", lease_s=LONG, limit=1, max_attempts=3))[0]
            assert await storage.queue.finish(job.id, "w1", state="done", reply=answer("hi"))
            assert not model.release.is_set()
            assert [t.job_id for t in await storage.admin.finished_turns(0.0)] == [job.id]
            assert [r.conversation_id for r in await storage.admin.queued_replies()] == [job.conversation_id]
        finally:
            model.release.set()
        status = await embedded(storage.search)
    assert status.windows == status.embedded == 2
